"""Checked program → Python source → code object (the jinja2 way).

Every definition becomes a Python function inside one factory, ``make(rt)``, that the runtime
(``evaluator.py``) calls with itself:

    let NAME = expr      →  def l_NAME(): return <expr>            (run once, on first use)
    fn NAME(a) = expr    →  def f_NAME(v_a): return <expr>         (remembered when costly)
    rule id { ... }      →  def r_3(): for ...: if ...: yield (at, message)

Rule variables are Python locals (``v_x``), top-level names are read through ``G("x")``, and the
operations every expression shares are the helpers of ``values.py`` and ``builtins.py``. The code
object is cached with the program (``cache.py``), so a warm run neither parses nor compiles.
"""

from __future__ import annotations

from typing import Any

from .builtins import BUILTINS

Node = dict[str, Any]

#: The names the generated code finds in its globals (see ``evaluator.runtime_namespace``).
HELPERS = ("G", "A", "I", "IN", "OP", "EQ", "NULL", "CMP", "ITEMS", "PAIRS", "T", "MEMO", "OBS", "B")


def compile_program(checked: Node) -> Node:
    """The program as it is cached and run: the code object of ``make`` and what the runtime
    and the commands need to know about the definitions (no syntax trees)."""
    source = generate(checked)
    defined = {
        f"{node['t']}:{name}": [node["file"], *node["pos"]]
        for kinds in ("lets", "fns")
        for name, node in checked[kinds].items()
    }
    return {
        "code": compile(source, "<rules>", "exec"),
        "costly": sorted(_costly_functions(checked["fns"])),
        "defined": defined,
        "lets": sorted(checked["lets"]),
        "fns": {name: len(node["params"]) for name, node in checked["fns"].items()},
        "rules": [{key: rule[key] for key in ("id", "severity", "doc", "file", "pos")} for rule in checked["rules"]],
    }


def generate(program: Node) -> str:
    """The Python source of ``make(rt)`` for a checked program."""
    out = _Writer()
    out.line("def make(rt):")
    out.indent += 1
    for name, node in program["lets"].items():
        out.line(f"def l_{name}():")
        out.line(f"    return {_expr(node['expr'], set())}")
    for name, node in program["fns"].items():
        params = node["params"]
        out.line(f"def f_{name}({', '.join('v_' + p for p in params)}):")
        out.indent += 1
        body = node["body"]
        scope = set(params)
        if body["t"] == "block":
            for local, value in body["lets"]:
                out.line(f"v_{local} = {_expr(value, scope)}")
                scope.add(local)
            body = body["expr"]
        out.line(f"return {_expr(body, scope)}")
        out.indent -= 1
        out.line(f"f_{name} = MEMO({name!r}, f_{name})")
    for index, rule in enumerate(program["rules"]):
        _rule(out, index, rule)
    lets = ", ".join(f"{name!r}: l_{name}" for name in program["lets"])
    fns = ", ".join(f"{name!r}: f_{name}" for name in program["fns"])
    rules = ", ".join(f"r_{index}" for index in range(len(program["rules"])))
    out.line(f"return {{{lets}}}, {{{fns}}}, [{rules}]")
    return out.text()


def _rule(out: _Writer, index: int, rule: Node) -> None:
    out.line(f"def r_{index}():")
    depth = out.indent
    out.indent += 1
    scope: set[str] = set()
    for step in rule["steps"]:
        kind = step["t"]
        if kind == "for":
            out.line(_loop(step["vars"], _expr(step["iter"], scope)) + ":")
            scope |= set(step["vars"])
        elif kind == "let_clause":
            out.line(f"v_{step['name']} = {_expr(step['expr'], scope)}")
            scope.add(step["name"])
            continue
        else:
            out.line(f"if {_expr(step['expr'], scope)}:")
        out.indent += 1
    out.line(f"yield ({_expr(rule['at'], scope)}, T({_expr(rule['message'], scope)}))")
    out.indent = depth


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.indent = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _is_string_literal(*nodes: Node) -> bool:
    return any(node["t"] == "value" and isinstance(node["value"], str) for node in nodes)


def _loop(names: list[str], source: str) -> str:
    """``for x in xs`` walks items; ``for k, v in m`` walks a map's entries (a list's index and item)."""
    if len(names) == 1:
        return f"for v_{names[0]} in ITEMS({source})"
    return f"for v_{names[0]}, v_{names[1]} in PAIRS({source})"


def _expr(node: Node, scope: set[str]) -> str:
    kind = node["t"]
    if kind == "value":
        return repr(node["value"])
    if kind == "name":
        name = node["name"]
        return f"v_{name}" if name in scope else f"G({name!r})"
    if kind == "list":
        return "[" + "".join(_expr(item, scope) + ", " for item in node["items"]) + "]"
    if kind == "map":
        return "{" + "".join(f"{key!r}: {_expr(value, scope)}, " for key, value in node["pairs"]) + "}"
    if kind == "template":
        parts = [repr(part) if isinstance(part, str) else f"T({_expr(part, scope)})" for part in node["parts"]]
        return "''.join((" + "".join(part + ", " for part in parts) + "))"
    if kind == "attr":
        obj = node["obj"]
        if obj["t"] == "name" and obj["name"] in scope:  # a local: read it twice, skip a call
            local = f"v_{obj['name']}"
            return f"({local}.get({node['name']!r}) if {local}.__class__ is dict else A({local}, {node['name']!r}))"
        return f"A({_expr(obj, scope)}, {node['name']!r})"
    if kind == "index":
        return f"I({_expr(node['obj'], scope)}, {_expr(node['key'], scope)})"
    if kind == "if":
        cond, then, other = (_expr(node[key], scope) for key in ("cond", "then", "else"))
        return f"({then} if {cond} else {other})"
    if kind == "and":
        return f"bool({_expr(node['left'], scope)} and {_expr(node['right'], scope)})"
    if kind == "or":
        return f"bool({_expr(node['left'], scope)} or {_expr(node['right'], scope)})"
    if kind == "not":
        return f"(not {_expr(node['expr'], scope)})"
    if kind == "compare":
        left, right = _expr(node["left"], scope), _expr(node["right"], scope)
        if node["op"] in ("==", "!=") and "None" in (left, right):  # the common `x == null`
            test = f"NULL({left if right == 'None' else right})"
            return test if node["op"] == "==" else f"(not {test})"
        if node["op"] in ("==", "!=") and _is_string_literal(node["left"], node["right"]):
            return f"({left} {node['op']} {right})"  # Python's own == is exact against a string
        if node["op"] == "==":
            return f"EQ({left}, {right})"
        if node["op"] == "!=":
            return f"(not EQ({left}, {right}))"
        return f"CMP({node['op']!r}, {left}, {right})"
    if kind == "in":
        return f"IN({_expr(node['right'], scope)}, {_expr(node['left'], scope)})"
    if kind == "binop":
        return f"OP({node['op']!r}, {_expr(node['left'], scope)}, {_expr(node['right'], scope)})"
    if kind == "comp":
        names = node["vars"]
        inner = scope | set(names)
        element = _expr(node["element"], inner)
        loop = _loop(names, _expr(node["iter"], scope))
        condition = f" if {_expr(node['cond'], inner)}" if node["cond"] is not None else ""
        return f"[{element} {loop}{condition}]"
    if kind == "call":
        args = [_expr(arg, scope) for arg in node["args"]]
        name = node["fn"]
        if name not in BUILTINS:
            return f"f_{name}({', '.join(args)})"
        if BUILTINS[name][3]:
            args.insert(0, "OBS")
        return f"B[{name!r}]({', '.join(args)})"
    raise AssertionError(f"unknown node {kind}")


def _costly_functions(fns: dict[str, Node]) -> set[str]:
    """The functions worth remembering: those whose body builds a list (a comprehension, a set
    operation) or looks at the repository, directly or through a function it calls. (The checker
    has ruled out cycles.)"""
    verdicts: dict[str, bool] = {}

    def costly(node: Any) -> bool:
        if isinstance(node, list):
            return any(costly(item) for item in node)
        if not isinstance(node, dict):
            return False
        kind = node.get("t")
        if kind in ("comp", "binop"):  # builds a list (or a string): worth remembering
            return True
        if kind == "call":
            name = node["fn"]
            if name in fns:
                if name not in verdicts:
                    verdicts[name] = costly(fns[name]["body"])
                if verdicts[name]:
                    return True
            elif BUILTINS[name][3]:
                return True
        return any(costly(value) for key, value in node.items() if key not in ("t", "pos"))

    return {name for name in fns if costly(fns[name]["body"])}
