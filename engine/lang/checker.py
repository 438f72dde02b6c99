"""Static checks of a parsed rule set, done once when the rules are compiled.

Every check records what it finds and goes on, so that one run reports every problem (like a
compiler, unlike an interpreter that stops at the first). The checks, in order:

1. definitions: each name defined once (the later one is reported), no built-in redefined, each
   rule with the clauses it needs (``CLAUSES``);
2. names (``_NameChecker``): every name and function known, every call with a valid arity;
3. cycles: no definition depends on itself (so every evaluation ends), and no chain of
   definitions, each using the next, is longer than ``MAX_CHAIN`` (so none nests too deeply);
4. the interface: the names the host reads back exist, as values or as functions of the right
   arity; definitions nothing reaches are warned about;
5. types (``types.TypeChecker``): fields of facts and records, operators that can never work,
   regular expressions that do not compile.

A further check plugs in as one more function called by ``check_program`` (language-wide), or as
an ``Interface`` check (one host's, on the compiled program). The result is the *program* — one
dict of definitions, ready for the code generator — and the problems found; the program is good
to run only when no problem is an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import hints
from .builtins import BUILTINS
from .errors import Findings, Problem
from .scopes import parts, rule_parts
from .similar import suggest
from .types import check_types

if TYPE_CHECKING:
    from .interface import Interface

Node = dict[str, Any]

SEVERITIES = ("error", "warning", "info")
#: a rule's clauses that appear once: whether it must have one, and whether it holds a plain
#: value (``severity``, ``doc``) or an expression. The others (for, let, when) are its steps.
CLAUSES = {
    "severity": (True, "value"),
    "doc": (True, "value"),
    "at": (True, "expr"),
    "message": (True, "expr"),
    "fix": (False, "expr"),  # the new text of the value `at` names (null: no fix)
}


def check_program(
    definitions: list[Node], interface: Interface, folder: str, lost_names: frozenset[str] | None = None
) -> tuple[Node, list[Problem]]:
    """Check the definitions of every rules file together. ``folder`` is the rules folder as
    shown, for a problem of the whole. ``lost_names``, when some part did not parse, are the
    names defined there: using them is not reported again, and nothing is called unused (what
    used it may be in the part that was lost)."""
    complete = lost_names is None
    lost_names = lost_names or frozenset()
    found = Findings()
    program = _collect(definitions, interface, found)
    names = _NameChecker(program, interface, lost_names, found)
    for node in (*program["lets"].values(), *program["fns"].values(), *program["rules"]):
        names.definition(node)
    chains = _cycles(names.depends, found)
    cyclic = chains is None or _long_chains(chains, names.depends, found)
    _interface(program, interface, folder, lost_names, found)
    if complete:
        _unused(program, names, interface, found)
    _constant_docs(names, interface, found)
    if not cyclic:
        check_types(program, interface, found)
    return program, found.problems


def _collect(definitions: list[Node], interface: Interface, found: Findings) -> Node:
    lets: dict[str, Node] = {}
    fns: dict[str, Node] = {}
    rules: list[Node] = []
    seen: dict[str, Node] = {}
    seen_rules: dict[str, Node] = {}
    for node in definitions:
        if node["t"] == "rule":
            if _unique(node, node["id"], seen_rules, "rule", found):
                rules.append(_rule(node, found))
            continue
        name = node["name"]
        if name in interface.facts or name in BUILTINS:
            found.add(node, f"`{name}` is a built-in name and cannot be redefined", node["file"])
            continue
        if _unique(node, name, seen, "name", found):
            (lets if node["t"] == "let" else fns)[name] = node
    return {"lets": lets, "fns": fns, "rules": rules}


def _unique(node: Node, name: str, seen: dict[str, Node], what: str, found: Findings) -> bool:
    """Whether ``name`` is new; a second definition is reported where it stands."""
    first = seen.get(name)
    if first is not None:
        where = f"{first['file']}:{first['pos'][0]}"
        found.add(node, f"{what} `{name}` is defined twice: first defined at {where}", node["file"])
        return False
    seen[name] = node
    return True


def _rule(node: Node, found: Findings) -> Node:
    """Fold a rule's clauses: one of each in ``CLAUSES``; the rest, in order, as steps."""
    rule: Node = {"t": "rule", "id": node["id"], "pos": node["pos"], "file": node["file"], "steps": []}
    file = node["file"]
    for clause in node["clauses"]:
        kind = clause["t"]
        if kind not in CLAUSES:
            rule["steps"].append(clause)
            continue
        if kind in rule:
            found.add(clause, f"rule `{node['id']}` has two `{kind}` clauses", file)
            continue
        rule[kind] = clause["value"] if CLAUSES[kind][1] == "value" else clause["expr"]
        if kind == "severity" and clause["value"] not in SEVERITIES:
            allowed = ", ".join(SEVERITIES)
            found.add(clause, f"unknown severity `{clause['value']}`; allowed: {allowed}", file)
        if kind == "doc" and isinstance(clause["value"], str) and not clause["value"].strip():
            found.add(clause, f"rule `{node['id']}` has an empty doc: say what it checks and why", file)
    for kind, (required, form) in CLAUSES.items():
        if kind not in rule:
            if required:
                found.add(node, f"rule `{node['id']}` has no `{kind}` clause", file)
            rule[kind] = "" if form == "value" else {"t": "value", "value": None, "pos": node["pos"]}
    return rule


class _NameChecker:
    """Walks every expression with the names in scope; records what each definition uses."""

    def __init__(self, program: Node, interface: Interface, lost: frozenset[str], found: Findings) -> None:
        self.lets: dict[str, Node] = program["lets"]
        self.fns: dict[str, Node] = program["fns"]
        self.facts = frozenset(interface.facts)
        self.lost = lost
        self.found = found
        #: definition name → (its node, the top-level names it uses)
        self.depends: dict[str, tuple[Node, set[str]]] = {}
        #: the top-level names the rules use
        self.used_by_rules: set[str] = set()
        #: each rule's doc template, with the top-level names it uses
        self.doc_uses: list[tuple[Node, set[str]]] = []
        self.file = ""
        self.uses: set[str] = set()

    def definition(self, node: Node) -> None:
        self.file = node["file"]
        self.uses = set()
        if node["t"] == "let":
            self.expr(node["expr"], frozenset())
        elif node["t"] == "fn":
            params = node["params"]
            if len(set(params)) != len(params):
                self.found.add(node, f"function `{node['name']}` names a parameter twice", self.file)
            self.expr(node["body"], frozenset(params))
        else:
            for holder, key, scope in rule_parts(node):
                self.expr(holder[key], scope)
            self.used_by_rules |= self.uses
            if isinstance(node["doc"], dict):  # a template, rendered without a manifest: no variables
                self.uses = set()
                self.expr(node["doc"], frozenset())
                self.doc_uses.append((node, self.uses))
                self.used_by_rules |= self.uses
            return
        self.depends[node["name"]] = (node, self.uses)

    def expr(self, node: Any, scope: frozenset[str]) -> None:
        if isinstance(node, list):  # a call's arguments, a list's items, a map's pairs, a template's parts
            for item in node:
                self.expr(item, scope)
        if not isinstance(node, dict):
            return
        if node["t"] == "name":
            self.name(node, scope)
            return
        if node["t"] == "call":
            self.call(node)
        for holder, key, inner in parts(node, scope):
            self.expr(holder[key], inner)

    def name(self, node: Node, scope: frozenset[str]) -> None:
        name = node["name"]
        if name in self.facts and name not in scope:
            self.uses.add(name)
            return
        if name in scope or name in self.lost:
            return
        if name in self.lets:
            self.uses.add(name)
            return
        if name in self.fns:
            self.uses.add(name)
            self.found.add(node, f"`{name}` is a function: call it, `{name}(...)`", self.file)
            return
        habit = hints.literal_hint(name)
        if habit is not None:
            self.found.add(node, habit, self.file)
            return
        known = sorted({*scope, *self.lets, *self.facts})
        self.found.add(node, f"unknown name `{name}`{suggest(name, known)}", self.file)

    def call(self, node: Node) -> None:
        name, count = node["fn"], len(node["args"])
        if name in self.fns:
            self.uses.add(name)
            expected = len(self.fns[name]["params"])
            if count != expected:
                self.found.add(node, f"`{name}` takes {_count(expected)}, not {count}", self.file)
            return
        builtin = BUILTINS.get(name)
        if builtin is None:
            if name in self.lets:
                self.uses.add(name)
                self.found.add(node, f"`{name}` is a value, not a function: write `{name}`", self.file)
            elif name not in self.lost:
                known = sorted({*BUILTINS, *self.fns})
                habit = hints.function_hint(name)
                self.found.add(node, habit or f"unknown function `{name}`{suggest(name, known)}", self.file)
            return
        low, high, _, _ = builtin
        if not low <= count <= high:
            self.found.add(node, f"`{name}` takes {_count(low)}, not {count}", self.file)


def _count(n: int) -> str:
    return "1 argument" if n == 1 else f"{n} arguments"


def _cycles(depends: dict[str, tuple[Node, set[str]]], found: Findings) -> dict[str, int] | None:
    """A definition that needs itself, directly or not, would never finish: report each cycle
    once, at the definition where the walk closes it. Without a cycle, how long the longest
    chain of definitions is that each starts (itself, what it uses, what that uses, ...); None
    with one. Walked without recursion: a chain may be too long for Python's stack."""
    chains: dict[str, int] = {}
    cyclic = False
    for root in sorted(depends):
        if root in chains:
            continue
        path = [root]
        walks = [iter(sorted(depends[root][1]))]
        while walks:
            for used in walks[-1]:
                if used in chains or used not in depends:
                    continue
                if used in path:
                    cycle = " -> ".join([*path[path.index(used) :], used])
                    node = depends[used][0]
                    found.add(node, f"`{used}` depends on itself: {cycle}", node["file"])
                    cyclic = True
                    continue
                path.append(used)
                walks.append(iter(sorted(depends[used][1])))
                break
            else:
                name = path.pop()
                walks.pop()
                chains[name] = 1 + max((chains.get(used, 0) for used in depends[name][1]), default=0)
    return None if cyclic else chains


#: how long a chain of definitions may be, each using the next: far longer than rules need (the
#: shipped ones reach 19), short enough that evaluating it stays within Python's stack
MAX_CHAIN = 100


def _long_chains(chains: dict[str, int], depends: dict[str, tuple[Node, set[str]]], found: Findings) -> bool:
    """A chain of more than ``MAX_CHAIN`` definitions, reported once, at the definition where
    it grows past the limit. Whether there was one."""
    long = False
    for name in sorted(chains):
        if chains[name] == MAX_CHAIN + 1:
            node = depends[name][0]
            message = f"`{name}` starts a chain of more than {MAX_CHAIN} definitions, each using the next"
            found.add(node, f"{message}: a run would nest too deeply; join some of them", node["file"])
            long = True
    return long


def _interface(program: Node, interface: Interface, folder: str, lost: frozenset[str], found: Findings) -> None:
    """The names the host reads back: each a value, or a function of the parameters it passes.
    One that is missing is reported at the top of the file where the others are (``_home``)."""
    home = _home(program, interface, folder)
    lets, fns = program["lets"], program["fns"]
    for required, names in ((True, interface.values), (False, interface.optional_values)):
        for name in names:
            if name in fns and name not in lost:
                message = f"the engine reads `{name}` as a value: define it with `let`, not `fn`"
                found.add(fns[name], message, fns[name]["file"])
            elif required and name not in lets and name not in lost:
                found.problems.append(Problem(home, 1, 1, f"the rules define no `{name}`, which the engine reads"))
    for required, functions in ((True, interface.functions), (False, interface.optional_functions)):
        for name, params in functions.items():
            wanted = f"`{name}({', '.join(params)})`"
            if name in lets and name not in lost:
                message = f"the engine calls `{name}`: define it as a function, {wanted}"
                found.add(lets[name], message, lets[name]["file"])
            elif name in fns and len(fns[name]["params"]) != len(params) and not (required and name in lost):
                message = f"the engine calls `{name}` with {_count(len(params))}: {wanted}"
                found.add(fns[name], message, fns[name]["file"])
            elif required and name not in fns and name not in lost:
                message = f"the rules define no function {wanted}, which the engine calls"
                found.problems.append(Problem(home, 1, 1, message))


def _home(program: Node, interface: Interface, folder: str) -> str:
    """The rules file where a missing name the engine reads back belongs: the one that defines
    most of the others (the first in order when several do), else the first file of the folder
    (``folder`` itself when no definition is left)."""
    wanted = set(interface.values) | set(interface.functions)
    counts: dict[str, int] = {}
    for kind in ("lets", "fns"):
        for name, node in program[kind].items():
            counts.setdefault(node["file"], 0)
            counts[node["file"]] += name in wanted
    for rule in program["rules"]:
        counts.setdefault(rule["file"], 0)
    if not counts:
        return folder
    return min(counts, key=lambda file: (-counts[file], file))


def _constant_docs(names: _NameChecker, interface: Interface, found: Findings) -> None:
    """A doc template is rendered when the rules are compiled, without a manifest: it may use
    constants, not the facts, directly or through the definitions it uses."""
    for rule, uses in names.doc_uses:
        for name in sorted(uses):
            fact = _fact_behind(name, names.depends, frozenset(interface.facts), set())
            if fact is not None:
                via = "" if fact == name else f" (through `{name}`)"
                message = (
                    f"the doc of rule `{rule['id']}` uses `{fact}`{via}: a doc is written before any manifest is read"
                )
                found.add(rule["doc"], message, rule["file"])
                break


def _fact_behind(
    name: str, depends: dict[str, tuple[Node, set[str]]], facts: frozenset[str], seen: set[str]
) -> str | None:
    """The first fact ``name`` depends on, directly or not, if any."""
    if name in facts:
        return name
    if name in seen or name not in depends:
        return None
    seen.add(name)
    for used in sorted(depends[name][1]):
        fact = _fact_behind(used, depends, facts, seen)
        if fact is not None:
            return fact
    return None


def _unused(program: Node, names: _NameChecker, interface: Interface, found: Findings) -> None:
    """A definition no rule and no name the host reads reaches, directly or not, does nothing."""
    reached: set[str] = set()
    pending = [
        *names.used_by_rules,
        *interface.values,
        *interface.functions,
        *interface.optional_values,
        *interface.optional_functions,
    ]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        pending.extend(names.depends.get(name, (None, set()))[1])
    for kind, what in (("lets", "value"), ("fns", "function")):
        for name, node in program[kind].items():
            if name not in reached:
                found.add(node, f"{what} `{name}` is never used", node["file"], "warning")
