"""The shipped rules' own texts, for tests that check what a command printed: a test reads a
message from the rules instead of repeating it, so that changing a text in rules/ changes what
the tests expect with it."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from beeuni.engine.lang.parser import parse_rules
from beeuni.engine.project import rules_only, shipped_rules
from conftest import ROOT


@cache
def _rule_nodes() -> dict[str, dict[str, Any]]:
    nodes = {}
    for path in sorted((ROOT / "rules").glob("*.rules")):
        for definition in parse_rules(path.read_text(), path.name).definitions:
            if definition["t"] == "rule":
                nodes[definition["id"]] = definition
    return nodes


def _templates(node: Any) -> list[list[Any]]:
    """The texts a message expression can give: each template's parts (or a literal's text)."""
    if node["t"] == "template":
        return [node["parts"]]
    if node["t"] == "value" and isinstance(node["value"], str):
        return [[node["value"]]]
    if node["t"] == "if":
        return _templates(node["then"]) + _templates(node["else"])
    return [[node]]  # computed: anything


def message_pattern(rule_id: str) -> re.Pattern[str]:
    """What the shipped rule ``rule_id`` may say: its message's templates, their literal text as
    written and each ``{…}`` a group that matches anything."""
    clause = next(c for c in _rule_nodes()[rule_id]["clauses"] if c["t"] == "message")
    alternatives = [
        "".join(re.escape(part) if isinstance(part, str) else "(.*?)" for part in parts)
        for parts in _templates(clause["expr"])
    ]
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives), re.DOTALL)


def filled(rule_id: str, message: str) -> list[str]:
    """The values filled into the blanks of the shipped rule's message, or a failed assertion
    when ``message`` is not one the rule can say."""
    found = message_pattern(rule_id).fullmatch(message)
    assert found is not None, f"{message!r} is not a message of {rule_id}"
    return [group for group in found.groups() if group is not None]


def rules_call(name: str, *args: Any) -> Any:
    """What the shipped rules' function ``name`` gives for ``args``."""
    assert shipped_rules()  # (the installed copy: the same text as rules/, or the tests are stale)
    return rules_only().call(name, *args)
