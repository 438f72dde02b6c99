"""Closed comprehensions become values of their own, computed once per evaluation.

A comprehension that reads no local variable — no parameter, loop variable or local ``let`` of
where it stands — gives the same list wherever and however often it is evaluated: ``[t.name for
t in session_tools]`` in a function called for every agent, or in the condition of a rule's
loop. Before the code is generated, each such comprehension (the same text once) becomes a
``let`` of its own, named ``#<n>`` (no rules name can be), and a *hoisted* read takes its place.

A hoisted read charges the evaluation's budget what evaluating the comprehension there would
(``Evaluation.hoisted``), so the bounds of a rule set are those of the rules as written: only the
work is done once.
"""

from __future__ import annotations

from typing import Any

Node = dict[str, Any]


def hoist(program: Node) -> None:
    """Hoist, in place, the closed comprehensions of a checked program that are not a ``let``'s
    whole value."""
    named: dict[str, str] = {}  # a comprehension's text (positions left out) → its let's name
    lets: dict[str, Node] = program["lets"]

    def inside(node: Node, scope: set[str], file: str) -> Node:
        """A comprehension with what is closed inside it hoisted."""
        node["iter"] = walk(node["iter"], scope, file)
        inner = scope | set(node["vars"])
        node["element"], node["cond"] = walk(node["element"], inner, file), walk(node["cond"], inner, file)
        return node

    def walk(node: Any, scope: set[str], file: str) -> Any:
        """``node`` with its closed comprehensions hoisted; ``scope``: the locals in effect."""
        if isinstance(node, list):
            return [walk(item, scope, file) for item in node]
        if not isinstance(node, dict):
            return node
        kind = node["t"]
        if kind == "hoisted":
            return node
        if kind == "comp" and scope.isdisjoint(free_names(node)[0]):  # closed: it reads no local
            text = repr(without_positions(node))
            name = named.get(text)
            if name is None:
                name = named[text] = f"#{len(named)}"
                lets[name] = {"t": "let", "name": name, "expr": inside(node, set(), file), "pos": node["pos"]}
                lets[name]["file"] = file
            return {"t": "hoisted", "name": name, "expr": lets[name]["expr"], "pos": node["pos"]}
        if kind == "comp":
            return inside(node, scope, file)
        if kind == "block":
            inner = set(scope)
            for binding in node["lets"]:
                binding[1] = walk(binding[1], inner, file)
                inner.add(binding[0])
            node["expr"] = walk(node["expr"], inner, file)
            return node
        for key, value in node.items():
            if key not in ("t", "pos") and isinstance(value, dict | list):
                node[key] = walk(value, scope, file)
        return node

    for let in list(lets.values()):
        body = let["expr"]
        let["expr"] = inside(body, set(), let["file"]) if body["t"] == "comp" else walk(body, set(), let["file"])
    for fn in program["fns"].values():
        fn["body"] = walk(fn["body"], set(fn["params"]), fn["file"])
    for rule in program["rules"]:
        scope: set[str] = set()
        for step in rule["steps"]:
            key = "iter" if step["t"] == "for" else "expr"
            step[key] = walk(step[key], scope, rule["file"])
            scope |= set(step.get("vars", [step.get("name")])) - {None}
        for key in ("at", "message", "fix"):
            rule[key] = walk(rule[key], scope, rule["file"])
        rule["doc"] = walk(rule["doc"], set(), rule["file"])


def free_names(node: Any) -> tuple[set[str], set[str]]:
    """The names ``node`` reads that it does not bind itself, and the functions it calls."""
    names: set[str] = set()
    calls: set[str] = set()

    def walk(node: Any, bound: frozenset[str]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, bound)
            return
        if not isinstance(node, dict):
            return
        kind = node["t"]
        if kind in ("name", "hoisted"):
            if node["name"] not in bound:
                names.add(node["name"])
            return
        if kind == "call":
            calls.add(node["fn"])
        if kind == "comp":
            walk(node["iter"], bound)
            inner = bound | set(node["vars"])
            walk(node["element"], inner)
            walk(node["cond"], inner)
            return
        if kind == "block":
            for name, value in node["lets"]:
                walk(value, bound)
                bound = bound | {name}
            walk(node["expr"], bound)
            return
        for key, value in node.items():
            if key not in ("t", "pos"):
                walk(value, bound)

    walk(node, frozenset())
    return names, calls


def without_positions(node: Any) -> Any:
    if isinstance(node, list):
        return [without_positions(item) for item in node]
    if isinstance(node, dict):
        return {key: without_positions(value) for key, value in node.items() if key != "pos"}
    return node
