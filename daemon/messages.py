"""The daemon's answers and log lines: texts from the rules (``DAEMON_MESSAGES``), blanks filled in."""

from __future__ import annotations

from collections import defaultdict

from ..engine.printable import printable


def say(messages: dict[str, str], key: str, **fields: str) -> str:
    """One of the daemon's answers (texts from the rules), its named blanks filled in; a blank
    not given stays empty. A value comes from a request, the manifest or a module (a tool or agent
    name, a path, a reason, a line a module printed): shown escaped, it cannot split the answer or
    forge a log line."""
    return messages[key].format_map(defaultdict(str, {name: printable(value) for name, value in fields.items()}))


def rules_texts(rules: str | None) -> dict[str, str]:
    """The daemon's texts of the rules folder ``rules``, before any tool set is resolved (to
    refuse a start)."""
    from ..engine.project import rules_only

    return dict(rules_only(rules).output("DAEMON_MESSAGES"))
