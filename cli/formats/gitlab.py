"""GitLab Code Quality JSON: a list of issues, each with a description, the rule as
``check_name``, a severity, the file and line, and a fingerprint.

GitLab compares fingerprints between a merge request and its target branch to tell new findings
from old ones, so the fingerprint leaves the line out: it hashes the rule, the file and the
message, and a counter that tells apart identical findings in one file. A line added above a
finding keeps its fingerprint; a changed message or a renamed file gives a new one.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TextIO

    from . import Findings

SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


def write(findings: Findings, stream: TextIO) -> None:
    stream.write(json.dumps(code_quality(findings), indent=2, ensure_ascii=False) + "\n")


def code_quality(findings: Findings) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str, str], int] = {}
    issues = []
    for d in findings.diagnostics:
        key = (d.rule, d.file, d.message)
        occurrence = seen[key] = seen.get(key, -1) + 1
        issues.append(
            {
                "description": d.message,
                "check_name": d.rule,
                "fingerprint": fingerprint(*key, occurrence),
                "severity": SEVERITIES.get(d.severity, "info"),
                "location": {"path": d.file, "lines": {"begin": d.line}},
            }
        )
    return issues


def fingerprint(rule: str, file: str, message: str, occurrence: int) -> str:
    return hashlib.sha256(f"{rule}\0{file}\0{message}\0{occurrence}".encode()).hexdigest()[:32]
