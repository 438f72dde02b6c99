"""How results are written: diagnostics as lines or JSON, tables of tools, rules' docs.

Output is deterministic: sorted, repo-relative, and free of colour or width-dependence unless
standard output is a terminal (and ``NO_COLOR`` is not set).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.lang.values import text
from ..engine.printable import printable, printable_json

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO

    from ..engine.lang.evaluator import Diagnostic

SEVERITIES = ("error", "warning", "info")


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def diagnostic_line(d: Diagnostic) -> str:
    return f"{d.file}:{d.line}:{d.column}: {d.severity}[{d.rule}] {d.message}"


def write_diagnostics(diagnostics: Sequence[Diagnostic], stream: TextIO = sys.stdout) -> None:
    """One line per diagnostic; coloured on a terminal."""
    if not use_colour(stream):
        stream.write("".join(diagnostic_line(d) + "\n" for d in diagnostics))
        return
    from .frames import write_lines

    write_lines(diagnostics, stream)


def write_json(document: Any, stream: TextIO | None = None) -> None:
    """``document`` as indented JSON (``json.dumps(indent=2, ensure_ascii=False)``'s text)."""
    import json

    (stream or sys.stdout).write(printable_json(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")


def validate_document(manifest: str, diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    """One manifest's JSON document."""
    return {
        "manifest": manifest,
        "diagnostics": [d.as_dict() for d in diagnostics],
        "errors": sum(1 for d in diagnostics if d.severity == "error"),
        "warnings": sum(1 for d in diagnostics if d.severity == "warning"),
    }


def summary(severities: Iterable[str]) -> str:
    """``2 errors, 1 warning``, or ``no problems``."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1
    parts = [f"{n} {severity}{'' if n == 1 else 's'}" for severity, n in counts.items() if n]
    return ", ".join(parts) if parts else "no problems"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain columns, two spaces apart, the last one unpadded — as in the design document."""
    cells = [[str(cell) for cell in header], *[[printable(text(cell)) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    lines = []
    for row in cells:
        padded = [cell.ljust(width + 2) for cell, width in zip(row, widths, strict=False)]
        lines.append("".join(padded) + row[-1])
    return "\n".join(lines) + "\n"


def write_resolved(resolved: dict[str, Any], as_json: bool) -> None:
    """``beeuni resolve``'s output: the resolved set as JSON, or a row per harness and agent."""
    if as_json:
        write_json(resolved)
        return
    rows = []
    for harness in resolved["harnesses"]:
        views = {view["id"]: view["tools"] for view in harness["views"]}
        for agent in harness["agents"]:
            secrets = resolved["secrets"].get(agent["name"], [])
            rows.append(
                (
                    harness["name"],
                    agent["name"],
                    len(views[agent["view"]]) + len(agent["connectors"]),
                    "yes" if agent["can_delegate"] else "no",
                    secrets if isinstance(secrets, str) else ", ".join(secrets) or "-",
                )
            )
    sys.stdout.write(table(("HARNESS", "AGENT", "TOOLS", "SUBAGENTS", "SECRETS"), rows))
