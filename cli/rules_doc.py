"""``beeuni rules doc [DIR]``: the manifest reference, written from the rules and their tests.

Every rule with its id, severity and doc, grouped as the rules files group them — by file, then
by the banner comments that head each part of a file::

    # =====================
    # Reading the manifest
    # =====================

(the banner's first line is the heading) — and with examples taken from the rules' test cases:
each line a case annotates, with what the rules said there. The shipped rules' reference is
committed as ``docs/manifest-reference.md``; a test fails when it is stale.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

from ..engine.project import load_rules, rules_folder
from .rule_tests import TESTS_FOLDER, run_tests
from .rules_helpers import BANNER_RULE, helpers_reference

if TYPE_CHECKING:
    from typing import Any

    from .rule_tests import Annotation, CaseResult

_LONGEST_LINE = 100


def rules_doc(folder: str | None, of_helpers: bool = False) -> int:
    """The manifest reference, or (``of_helpers``) the reference of the helpers."""
    path, shown = rules_folder(folder)
    reference = helpers_reference if of_helpers else manifest_reference
    sys.stdout.write(reference(load_rules(folder), path, shown))
    return 0


def manifest_reference(program: dict[str, Any], folder: str, shown: str) -> str:
    examples: dict[str, list[tuple[CaseResult, Annotation]]] = {}
    for case in run_tests(folder, shown, program):
        for annotation in case.annotations:
            examples.setdefault(annotation.rule, []).append((case, annotation))
    out = [
        "# Manifest reference",
        "",
        f"<!-- Written by `beeuni rules doc` from the rules in {shown}/ and their test cases; do not edit. -->",
        "",
        "Every rule `beeuni validate` applies to a `beeuni.yaml`, in the order and groups of the rules",
        "files. A rule's id (`group/name`) is stable: it appears in every diagnostic, and",
        "`beeuni rules explain ID` shows its doc. The examples are lines of the rules' test cases",
        f"(`{shown}/{TESTS_FOLDER}/`): `# ✗` marks a line the rule reports, with what it says; `# ✓` a line it",
        "accepts.",
    ]
    for file, sections in _grouped(program["rules"], folder):
        out += ["", f"## {file}"]
        for heading, rules in sections:
            if heading:
                out += ["", f"### {heading}"]
            for rule in rules:
                out += ["", *_rule_entry(rule, examples.get(rule["id"], []))]
    return "\n".join(out) + "\n"


def _grouped(rules: list[dict[str, Any]], folder: str) -> list[tuple[str, list[tuple[str, list[dict[str, Any]]]]]]:
    """The rules by file (in reading order), then by the banner above them (in line order)."""
    files: dict[str, list[dict[str, Any]]] = {}
    for rule in rules:
        files.setdefault(rule["file"], []).append(rule)
    grouped = []
    for file, in_file in files.items():
        banners = _banners(os.path.join(folder, os.path.basename(file)))
        sections: dict[str, list[dict[str, Any]]] = {}
        for rule in sorted(in_file, key=lambda rule: rule["pos"][0]):
            heading = next((title for line, title in reversed(banners) if line < rule["pos"][0]), "")
            sections.setdefault(heading, []).append(rule)
        grouped.append((os.path.basename(file), list(sections.items())))
    return grouped


def _banners(path: str) -> list[tuple[int, str]]:
    """(line, title) of each banner comment of a rules file: the first line between two rulers."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found = []
    for number, line in enumerate(lines[:-2], start=1):
        title = lines[number].lstrip("#").strip()
        opening = number < 2 or not BANNER_RULE.match(lines[number - 2])  # not the closing ruler
        if BANNER_RULE.match(line) and opening and title and not BANNER_RULE.match(lines[number]):
            found.append((number, title))
    return found


def _rule_entry(rule: dict[str, Any], examples: list[tuple[CaseResult, Annotation]]) -> list[str]:
    out = [f"#### `{rule['id']}` ({rule['severity']})", "", rule["doc"].strip()]
    if not examples:
        return [*out, "", "*No test case shows this rule yet.*"]
    out += ["", "```yaml"]
    for case, a in sorted(examples, key=lambda example: example[1].kind != "expect"):
        where = f"{case.name}/{a.file}:{a.line}"
        if a.kind == "expect":
            message = case.messages.get((a.file, a.line, a.rule))
            said = f" {rule['severity']}: {message}" if message else ""
            out.append(f"# ✗ {where}{said}")
        else:
            out.append(f"# ✓ {where} {a.fragment}".rstrip())  # an ok's words say why it is fine
        out.append(_shown_line(a.source_line))
    return [*out, "```"]


def _shown_line(line: str) -> str:
    """A case's line as an example: without its indentation, control characters written out."""
    shown = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", line.lstrip(" "))
    return shown if len(shown) <= _LONGEST_LINE else shown[: _LONGEST_LINE - 1] + "…"
