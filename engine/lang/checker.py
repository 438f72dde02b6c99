"""Static checks of a parsed rule set, done once when the rules are compiled.

What passes here cannot fail for the rules' own sake at run time except by a type mistake on
data (a set operator on a number): every name is defined, every call has a valid arity, no
definition depends on itself (so every evaluation ends), and every rule has what it needs.

The result is the *program*: one dict of definitions, ready for ``marshal`` and ``evaluator``.
"""

from __future__ import annotations

from typing import Any

from .builtins import BUILTINS
from .errors import RulesError

Node = dict[str, Any]

SEVERITIES = ("error", "warning", "info")
REQUIRED_CLAUSES = ("severity", "doc", "at", "message")


def build_program(definitions: list[Node], fact_names: frozenset[str]) -> Node:
    """Check the definitions of every rules file together; return the program."""
    lets: dict[str, Node] = {}
    fns: dict[str, Node] = {}
    rules: list[Node] = []
    seen: dict[str, Node] = {}
    seen_rules: dict[str, Node] = {}
    for node in definitions:
        if node["t"] == "rule":
            _unique(node, node["id"], seen_rules, "rule")
            rules.append(_rule(node))
            continue
        if node["name"] in fact_names or node["name"] in BUILTINS:
            _fail(node, f"`{node['name']}` is a built-in name and cannot be redefined")
        _unique(node, node["name"], seen, "name")
        (lets if node["t"] == "let" else fns)[node["name"]] = node

    checker = _NameChecker(lets, fns, fact_names)
    for node in (*lets.values(), *fns.values(), *rules):
        checker.definition(node)
    _no_cycles(checker.depends)
    return {"lets": lets, "fns": fns, "rules": rules}


def _fail(node: Node, message: str, file: str | None = None) -> None:
    line, column = node.get("pos", [1, 1])
    raise RulesError(file or node["file"], line, column, message)


def _unique(node: Node, name: str, seen: dict[str, Node], what: str) -> None:
    first = seen.get(name)
    if first is not None:
        where = f"{first['file']}:{first['pos'][0]}"
        _fail(node, f"{what} `{name}` is defined twice (first at {where})")
    seen[name] = node


def _rule(node: Node) -> Node:
    """Fold a rule's clauses: one severity, doc, at and message; the rest, in order, as steps."""
    rule: Node = {"t": "rule", "id": node["id"], "pos": node["pos"], "file": node["file"], "steps": []}
    for clause in node["clauses"]:
        kind = clause["t"]
        if kind in REQUIRED_CLAUSES:
            if kind in rule:
                _fail(clause, f"rule `{node['id']}` has two `{kind}` clauses", node["file"])
            rule[kind] = clause["value"] if kind in ("severity", "doc") else clause["expr"]
            if kind == "severity" and clause["value"] not in SEVERITIES:
                allowed = ", ".join(SEVERITIES)
                _fail(clause, f"unknown severity `{clause['value']}`; allowed: {allowed}", node["file"])
        else:
            rule["steps"].append(clause)
    missing = [kind for kind in REQUIRED_CLAUSES if kind not in rule]
    if missing:
        _fail(node, f"rule `{node['id']}` has no `{missing[0]}` clause")
    return rule


class _NameChecker:
    """Walks every expression with the names in scope; records what each definition uses."""

    def __init__(self, lets: dict[str, Node], fns: dict[str, Node], facts: frozenset[str]) -> None:
        self.lets = lets
        self.fns = fns
        self.facts = facts
        self.depends: dict[str, tuple[Node, set[str]]] = {}
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
                _fail(node, f"function `{node['name']}` names a parameter twice")
            self.expr(node["body"], frozenset(params))
        else:
            scope: frozenset[str] = frozenset()
            for step in node["steps"]:
                if step["t"] == "for":
                    self.expr(step["iter"], scope)
                    scope = scope | set(step["vars"])
                elif step["t"] == "let_clause":
                    self.expr(step["expr"], scope)
                    scope = scope | {step["name"]}
                else:
                    self.expr(step["expr"], scope)
            self.expr(node["at"], scope)
            self.expr(node["message"], scope)
            return
        self.depends[node["name"]] = (node, self.uses)

    def expr(self, node: Any, scope: frozenset[str]) -> None:
        if not isinstance(node, dict):
            return
        kind = node["t"]
        if kind == "name":
            self.name(node, scope)
        elif kind == "call":
            self.call(node)
            for arg in node["args"]:
                self.expr(arg, scope)
        elif kind == "comp":
            self.expr(node["iter"], scope)
            inner = scope | set(node["vars"])
            self.expr(node["element"], inner)
            self.expr(node["cond"], inner)
        elif kind == "block":
            for name, value in node["lets"]:
                self.expr(value, scope)
                scope = scope | {name}
            self.expr(node["expr"], scope)
        elif kind == "template":
            for part in node["parts"]:
                self.expr(part, scope)
        elif kind == "map":
            for _, value in node["pairs"]:
                self.expr(value, scope)
        elif kind == "list":
            for item in node["items"]:
                self.expr(item, scope)
        else:
            for key in ("left", "right", "expr", "obj", "key", "cond", "then", "else"):
                if key in node:
                    self.expr(node[key], scope)

    def name(self, node: Node, scope: frozenset[str]) -> None:
        name = node["name"]
        if name in scope or name in self.facts:
            return
        if name in self.lets:
            self.uses.add(name)
            return
        if name in self.fns:
            _fail(node, f"`{name}` is a function: call it, `{name}(...)`", self.file)
        known = sorted({*scope, *self.lets, *self.facts})
        _fail(node, f"unknown name `{name}`{_suggest(name, known)}", self.file)

    def call(self, node: Node) -> None:
        name, count = node["fn"], len(node["args"])
        if name in self.fns:
            self.uses.add(name)
            expected = len(self.fns[name]["params"])
            if count != expected:
                _fail(node, f"`{name}` takes {_count(expected)}, not {count}", self.file)
            return
        builtin = BUILTINS.get(name)
        if builtin is None:
            known = sorted({*BUILTINS, *self.fns})
            _fail(node, f"unknown function `{name}`{_suggest(name, known)}", self.file)
            return
        low, high, _, _ = builtin
        if not low <= count <= high:
            _fail(node, f"`{name}` takes {_count(low)}, not {count}", self.file)


def _count(n: int) -> str:
    return "1 argument" if n == 1 else f"{n} arguments"


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    found = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean `{found[0]}`?" if found else ""


def _no_cycles(depends: dict[str, tuple[Node, set[str]]]) -> None:
    """A definition that needs itself, directly or not, would never finish: refuse it."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in done:
            return
        if name in path:
            cycle = " -> ".join([*path[path.index(name) :], name])
            _fail(depends[name][0], f"`{name}` depends on itself: {cycle}")
        for used in sorted(depends[name][1]):
            visit(used, [*path, name])
        done.add(name)

    for name in sorted(depends):
        visit(name, [])
