"""The one walk over the rules' syntax tree that the static passes share: which expressions a
node holds, and which local names each of them sees — a comprehension's variables in its element
and condition, a block's ``let`` in what follows it, a rule's ``for`` and ``let`` clauses in the
clauses after them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Node = dict[str, Any]


def parts(node: Node, scope: frozenset[str]) -> Iterator[tuple[Any, Any, frozenset[str]]]:
    """Each expression (or list of them) directly in ``node``, as (holder, key, the locals it
    sees): ``holder[key]`` is it, so that a pass may also replace it."""
    kind = node["t"]
    if kind == "comp":
        yield node, "iter", scope
        inner = scope | set(node["vars"])
        yield node, "element", inner
        yield node, "cond", inner
    elif kind == "block":
        for binding in node["lets"]:
            yield binding, 1, scope
            scope = scope | {binding[0]}
        yield node, "expr", scope
    else:
        for key, value in node.items():
            if key != "pos" and isinstance(value, dict | list):
                yield node, key, scope


def rule_parts(rule: Node) -> Iterator[tuple[Node, str, frozenset[str]]]:
    """Each expression of a rule's steps and of its ``at``, ``message`` and ``fix``, as
    ``parts`` gives them (its doc sees no local: it is rendered without a manifest)."""
    scope: frozenset[str] = frozenset()
    for step in rule["steps"]:
        if step["t"] == "for":
            yield step, "iter", scope
            scope = scope | set(step["vars"])
        else:
            yield step, "expr", scope
            if step["t"] == "let_clause":
                scope = scope | {step["name"]}
    for key in ("at", "message", "fix"):
        yield rule, key, scope


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
        for holder, key, inner in parts(node, bound):
            walk(holder[key], inner)

    walk(node, frozenset())
    return names, calls
