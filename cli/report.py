"""How results are written: diagnostics as lines or JSON, tables of tools, rules' docs.

Output is deterministic: sorted, repo-relative, and free of colour or width-dependence unless
standard output is a terminal (and ``NO_COLOR`` is not set).
"""

from __future__ import annotations

import os
import sys

from ..engine.lang.evaluator import Diagnostic
from ..engine.lang.values import text
from ..engine.visible import visible, visible_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

SEVERITIES = ("error", "warning", "info")


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def diagnostic_line(diagnostic: Diagnostic) -> str:
    d = diagnostic
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
    from .json_out import dumps

    (stream or sys.stdout).write(visible_json(dumps(document)) + "\n")


def validate_document(manifest: str, diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    return {
        "manifest": manifest,
        "diagnostics": [d.as_dict() for d in diagnostics],
        "errors": sum(1 for d in diagnostics if d.severity == "error"),
        "warnings": sum(1 for d in diagnostics if d.severity == "warning"),
    }


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    counts = dict.fromkeys(SEVERITIES, 0)
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
    parts = [f"{n} {severity}{'' if n == 1 else 's'}" for severity, n in counts.items() if n]
    return ", ".join(parts) if parts else "no problems"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain columns, two spaces apart, the last one unpadded — as in the design document."""
    cells = [[str(cell) for cell in header], *[[visible(text(cell)) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    lines = []
    for row in cells:
        padded = [cell.ljust(width + 2) for cell, width in zip(row, widths, strict=False)]
        lines.append("".join(padded) + row[-1])
    return "\n".join(lines) + "\n"
