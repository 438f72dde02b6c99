"""SARIF 2.1.0, the format code-scanning services read (GitHub's among them).

One run: ``tool.driver.rules`` describes every rule from its metadata (id, the doc's first
paragraph as the short description, the whole doc as the full one, the severity as the default
level); each result names its rule, level and message, and points at a repo-relative file under
``%SRCROOT%`` with a region whose end is read from the source. A result whose rule's ``fix``
clause gives an edit carries it as a SARIF fix: the region to delete and the text to insert, the
very edit ``validate --fix`` makes. Columns count code points, as beeuni's do (``columnKind``),
and a region's end column is the one after its last character.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..shared import beeuni_version

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from ...engine.edit.text_edit import TextEdit
    from ...engine.lang.evaluator import Diagnostic
    from . import Findings

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def write(findings: Findings, stream: TextIO) -> None:
    stream.write(json.dumps(sarif_log(findings), indent=2, ensure_ascii=False) + "\n")


def sarif_log(findings: Findings) -> dict[str, Any]:
    descriptors = {rule["id"]: _descriptor(rule) for rule in findings.rules}
    for d in findings.diagnostics:
        descriptors.setdefault(d.rule, {"id": d.rule})
    rule_ids = sorted(descriptors)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "beeuni",
                "version": beeuni_version(),
                "rules": [descriptors[rule_id] for rule_id in rule_ids],
            }
        },
    }
    if findings.root is not None:
        root = Path(findings.root).as_uri()
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": root if root.endswith("/") else root + "/"}}
    run["columnKind"] = "unicodeCodePoints"
    run["results"] = [_result(d, index[d.rule], findings) for d in findings.diagnostics]
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _descriptor(rule: Mapping[str, Any]) -> dict[str, Any]:
    doc = str(rule.get("doc") or "").strip()
    descriptor: dict[str, Any] = {"id": rule["id"]}
    if doc:
        descriptor["shortDescription"] = {"text": " ".join(doc.split("\n\n")[0].split())}  # its first paragraph
        descriptor["fullDescription"] = {"text": doc}
    descriptor["defaultConfiguration"] = {"level": LEVELS.get(rule["severity"], "note")}
    return descriptor


def _result(d: Diagnostic, rule_index: int, findings: Findings) -> dict[str, Any]:
    span = findings.sources.span(d.file, d.line, d.column)
    result = {
        "ruleId": d.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(d.severity, "note"),
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": quote(d.file), "uriBaseId": "%SRCROOT%"},
                    "region": {
                        "startLine": d.line,
                        "startColumn": d.column,
                        "endLine": span.end_line,
                        "endColumn": span.end_column,
                    },
                }
            }
        ],
    }
    if d.fix is not None:
        result["fixes"] = [_fix(d.fix)]
    return result


def _fix(edit: TextEdit) -> dict[str, Any]:
    """A SARIF fix: one file's change, one replacement (an empty deleted region inserts)."""
    return {
        "artifactChanges": [
            {
                "artifactLocation": {"uri": quote(edit.file), "uriBaseId": "%SRCROOT%"},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": edit.line,
                            "startColumn": edit.column,
                            "endLine": edit.end_line,
                            "endColumn": edit.end_column,
                        },
                        "insertedContent": {"text": edit.new_text},
                    }
                ],
            }
        ]
    }
