"""The plain text of diagnostics from their fields (``report.py`` writes them), the summary line,
and the commands' exit statuses."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

SEVERITIES = ("error", "warning", "info")
EXIT_OK, EXIT_ERRORS, EXIT_FAILURE = 0, 1, 2


def line(file: str, line: int, column: int, severity: str, rule: str, message: str) -> str:
    return f"{file}:{line}:{column}: {severity}[{rule}] {message}"


def summary(severities: Iterable[str]) -> str:
    counts = dict.fromkeys(SEVERITIES, 0)
    for severity in severities:
        counts[severity] = counts.get(severity, 0) + 1
    parts = [f"{n} {severity}{'' if n == 1 else 's'}" for severity, n in counts.items() if n]
    return ", ".join(parts) if parts else "no problems"


def validate_document(manifest: str, diagnostics: list[dict[str, Any]]) -> dict[str, Any]:
    """One manifest's JSON document (``diagnostics``: each diagnostic's ``as_dict()``)."""
    return {
        "manifest": manifest,
        "diagnostics": diagnostics,
        "errors": sum(1 for d in diagnostics if d["severity"] == "error"),
        "warnings": sum(1 for d in diagnostics if d["severity"] == "warning"),
    }


def exit_status(worst: int, warnings: int, max_warnings: int | None) -> int:
    """The exit status of ``validate``: the worst manifest's, or 1 when there are more warnings
    than ``--max-warnings`` allows (said on standard error)."""
    if max_warnings is not None and warnings > max_warnings:
        plural = "s" if warnings != 1 else ""
        sys.stderr.write(f"beeuni: {warnings} warning{plural}, more than --max-warnings {max_warnings} allows\n")
        worst = max(worst, EXIT_ERRORS)
    return worst


def note_errors(manifest: str, errors: int) -> int:
    """Listing commands still list; a manifest with errors is said on stderr and exits 1."""
    if not errors:
        return EXIT_OK
    sys.stderr.write(f"beeuni: {manifest} has {errors} error{'s' if errors != 1 else ''}; run `beeuni validate`\n")
    return EXIT_ERRORS
