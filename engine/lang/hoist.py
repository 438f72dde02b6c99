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

from .scopes import free_names, parts, rule_parts

Node = dict[str, Any]


def hoist(program: Node) -> None:
    """Hoist, in place, the closed comprehensions of a checked program that are not a ``let``'s
    whole value."""
    named: dict[str, str] = {}  # a comprehension's text (positions left out) → its let's name
    lets: dict[str, Node] = program["lets"]

    def inside(node: Node, scope: frozenset[str], file: str) -> Node:
        """``node`` with the closed comprehensions inside it hoisted."""
        for holder, key, inner in parts(node, scope):
            holder[key] = walk(holder[key], inner, file)
        return node

    def walk(node: Any, scope: frozenset[str], file: str) -> Any:
        """``node`` with its closed comprehensions hoisted; ``scope``: the locals in effect."""
        if isinstance(node, list):
            return [walk(item, scope, file) for item in node]
        if not isinstance(node, dict) or node["t"] == "hoisted":
            return node
        if node["t"] == "comp" and scope.isdisjoint(free_names(node)[0]):  # closed: it reads no local
            text = repr(without_positions(node))
            name = named.get(text)
            if name is None:
                name = named[text] = f"#{len(named)}"
                lets[name] = {"t": "let", "name": name, "expr": inside(node, frozenset(), file), "pos": node["pos"]}
                lets[name]["file"] = file
            return {"t": "hoisted", "name": name, "expr": lets[name]["expr"], "pos": node["pos"]}
        return inside(node, scope, file)

    for let in list(lets.values()):
        body = let["expr"]
        let["expr"] = (
            inside(body, frozenset(), let["file"]) if body["t"] == "comp" else walk(body, frozenset(), let["file"])
        )
    for fn in program["fns"].values():
        fn["body"] = walk(fn["body"], frozenset(fn["params"]), fn["file"])
    for rule in program["rules"]:
        for holder, key, scope in rule_parts(rule):
            holder[key] = walk(holder[key], scope, rule["file"])
        rule["doc"] = walk(rule["doc"], frozenset(), rule["file"])


def without_positions(node: Any) -> Any:
    if isinstance(node, list):
        return [without_positions(item) for item in node]
    if isinstance(node, dict):
        return {key: without_positions(value) for key, value in node.items() if key != "pos"}
    return node
