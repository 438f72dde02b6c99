"""The helpers of a rules folder — every ``let`` and ``fn`` — as their files hold them: what
``beeuni rules explain NAME`` shows of one, and the reference ``beeuni rules doc --helpers``
writes (committed as ``docs/helpers-reference.md`` for the shipped rules).

A helper's doc is the comment right above it; its text runs from its line to the next that
starts in column 1.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

#: the ruler lines of a banner comment (``# =====``), which head each part of a rules file
BANNER_RULE = re.compile(r"^#\s*={10,}\s*$")


class Helper(NamedTuple):
    """A ``let`` or ``fn`` of a rules folder as its file holds it."""

    kind: str  # "let" or "fn"
    name: str
    file: str  # as shown: rules/manifest.rules
    line: int
    doc: str  # the comment lines right above it, without their `#`
    text: str  # the definition, as written


def helpers(program: dict[str, Any], folder: str) -> list[Helper]:
    """Every ``let`` and ``fn`` of ``program``, in file and line order, read from ``folder``."""
    sources: dict[str, list[str]] = {}
    found = []
    for key, (file, line, _column) in program["defined"].items():
        kind, name = key.split(":", 1)
        base = os.path.basename(file)
        if base not in sources:
            with open(os.path.join(folder, base), encoding="utf-8") as handle:
                sources[base] = handle.read().splitlines()
        lines = sources[base]
        found.append(Helper(kind, name, file, line, _doc_comment(lines, line - 1), _definition_text(lines, line - 1)))
    return sorted(found, key=lambda helper: (helper.file, helper.line))


def _doc_comment(lines: list[str], index: int) -> str:
    """The comment lines right above line ``index`` (no blank line between), ``#`` taken off; a
    banner (``# ====``) and what stands above it are not part of it."""
    above: list[str] = []
    for line in reversed(lines[:index]):
        if not line.startswith("#") or BANNER_RULE.match(line):
            break
        above.append(line[1:].removeprefix(" "))
    return "\n".join(reversed(above)).strip("\n")


def _definition_text(lines: list[str], index: int) -> str:
    """A definition's lines: its own, then each that is indented or closes a bracket (blank lines
    among them included), up to the next line that starts in column 1."""
    end = index + 1
    while end < len(lines):
        following = next((line for line in lines[end:] if line.strip()), "")
        if not _continues(lines[end] if lines[end].strip() else following):
            break
        end += 1
    return "\n".join(lines[index:end]).rstrip()


def _continues(line: str) -> bool:
    return line[:1] in (" ", "\t", ")", "]", "}")


def explain_helper(helper: Helper) -> str:
    """What ``beeuni rules explain NAME`` prints for a ``let`` or ``fn``."""
    parts = [f"{helper.kind} {helper.name}", f"defined at {helper.file}:{helper.line}", ""]
    if helper.doc:
        parts += [helper.doc, ""]
    return "\n".join([*parts, helper.text]) + "\n"


def helpers_reference(program: dict[str, Any], folder: str, shown: str) -> str:
    """The reference of the helpers: every ``let`` and ``fn`` by file, with its doc comment and
    its text — what ``beeuni rules doc --helpers`` prints (``docs/helpers-reference.md``)."""
    out = [
        "# Rules helpers",
        "",
        f"<!-- Written by `beeuni rules doc --helpers` from the rules in {shown}/; do not edit. -->",
        "",
        "Every `let` and `fn` of the rules, by file and in the order each file holds them: the",
        "comment right above it, then its text. `beeuni rules explain NAME` shows one of them.",
    ]
    current = None
    for helper in helpers(program, folder):
        if helper.file != current:
            current = helper.file
            out += ["", f"## {os.path.basename(helper.file)}"]
        out += ["", f"### `{helper.name}`", "", f"`{helper.kind}`, {os.path.basename(helper.file)}:{helper.line}"]
        if helper.doc:
            out += ["", helper.doc]
        out += ["", "```", helper.text, "```"]
    return "\n".join(out) + "\n"
