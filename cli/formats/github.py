"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per
diagnostic, which GitHub shows as an annotation on the file and line; and, when
``GITHUB_STEP_SUMMARY`` names a file, a Markdown table of the findings appended to it (the job's
summary page).

Escaping is GitHub's (actions/toolkit, ``command.ts``): in the message ``%``, CR and LF; in a
property value also ``:`` and ``,``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..report import summary

if TYPE_CHECKING:
    from typing import TextIO

    from . import Findings

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def write(findings: Findings, stream: TextIO) -> None:
    for d in findings.diagnostics:
        span = findings.sources.span(d.file, d.line, d.column)
        properties = {
            "file": d.file,
            "line": d.line,
            "col": d.column,
            "endLine": span.end_line,
            "endColumn": span.end_column,
            "title": d.rule,
        }
        listed = ",".join(f"{name}={escape_property(str(value))}" for name, value in properties.items())
        stream.write(f"::{COMMANDS.get(d.severity, 'notice')} {listed}::{escape_data(d.message)}\n")
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as out:
            out.write(step_summary(findings))


def step_summary(findings: Findings) -> str:
    lines = [f"### beeuni: {summary(d.severity for d in findings.diagnostics)}", ""]
    if findings.diagnostics:
        lines += ["| Severity | Rule | Location | Message |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {d.severity} | `{d.rule}` | `{d.file}:{d.line}:{d.column}` | {_cell(d.message)} |"
            for d in findings.diagnostics
        ]
        lines.append("")
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    """A table cell's text: a pipe would end the cell, a line end the row."""
    return " ".join(value.replace("\\", "\\\\").replace("|", "\\|").split())
