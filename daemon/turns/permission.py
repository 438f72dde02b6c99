"""An agent's ``permission`` on the experimental harness: whether a call runs, would be asked
about, or is refused — the rules of the resolved tool set (``PermissionRule``: the manifest's
``agents.<name>.permission`` in opencode's terms, in order, the last match deciding), applied to
every call the turn loop runs, as opencode applies them on the standard harness.

A call is matched by its permission (the tool's name, or the one opencode checks it under: the
rules' ``PERMISSION_OF_TOOL``) and its input (the argument the rules' ``PERMISSION_INPUT`` names for
that permission: a command, a path, a subagent; ``*`` for a tool without one). Patterns are
opencode's wildcards: ``*`` any run of characters, ``?`` one. With no rule matching, the call runs.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ...engine.resolved import PermissionRule

ALLOW = "allow"


@functools.lru_cache(maxsize=1024)
def _wildcard(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.DOTALL)


def matches(pattern: str, text: str) -> bool:
    return _wildcard(pattern).fullmatch(text) is not None


def decision(
    rules: list[PermissionRule], tool: str, args: Any, of_tool: dict[str, str], inputs: dict[str, str]
) -> tuple[str, str]:
    """The action for a call of ``tool`` with ``args`` (``allow``, ``ask`` or ``deny``), and the
    input it was matched by (``*`` when the permission takes none)."""
    permission = of_tool.get(tool, tool)
    argument = inputs.get(permission)
    value = args.get(argument) if argument is not None and isinstance(args, dict) else None
    text = value if isinstance(value, str) else "*"
    action = ALLOW
    for rule in rules:
        if matches(rule.permission, permission) and matches(rule.pattern, text):
            action = rule.action
    return action, text
