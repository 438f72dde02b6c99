"""What README.md and docs/ show of beeuni's output is what beeuni prints.

A fenced block that shows output is marked with the golden file it comes from, on the line
before the fence::

    <!-- golden: agents-typos/validate-format-full.out -->
    ```
    beeuni.yaml:7:17: warning[agents/unknown-tool] `bsh` is no harness, ...

Every line of such a block must be a line of that golden output (``tests/golden/<case>/...``,
rewritten by ``make golden``), and every block that shows a diagnostic must be marked: a changed
message fails here until the docs show it. ``make golden`` (BEEUNI_UPDATE_GOLDEN=1) rewrites
each diagnostic line of a marked block from the golden line at the same position and rule.
"""

from __future__ import annotations

import os
import re

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
UPDATE = bool(os.environ.get("BEEUNI_UPDATE_GOLDEN"))
#: the documents written by hand (the references beside them are generated)
DOCUMENTS = [
    ROOT / "README.md",
    *(path for path in sorted((ROOT / "docs").glob("*.md")) if "reference" not in path.name),
]
MARKER = re.compile(r"^<!-- golden: (?P<file>\S+) -->$")
FENCE = re.compile(r"^(?P<fence>`{3,})")
#: a diagnostic line (a `rules diff` change may stand before it)
DIAGNOSTIC = re.compile(r"^(?P<change>[-+!] )?(?P<key>\S+:\d+:\d+: (?:error|warning|info)\[[^\]]+\]) ")


def blocks(lines: list[str]) -> list[tuple[str | None, int, int]]:
    """Each fenced block as (its marker's golden file or None, first line index, end index)."""
    found = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        end = next((i for i in range(index + 1, len(lines)) if lines[i].rstrip() == fence), len(lines))
        marker = MARKER.match(lines[index - 1]) if index > 0 else None
        found.append((marker["file"] if marker else None, index + 1, end))
        index = end + 1
    return found


def golden_lines(file: str) -> list[str]:
    path = GOLDEN / file
    assert path.is_file(), f"the golden output {path} does not exist"
    return path.read_text().splitlines()


def test_every_diagnostic_the_docs_show_is_one_beeuni_prints() -> None:
    problems = []
    for document in DOCUMENTS:
        lines = document.read_text().splitlines()
        shown = document.relative_to(ROOT)
        for golden, start, end in blocks(lines):
            if golden is None:
                problems += [
                    f"{shown}:{i + 1}: shows a diagnostic, but no `<!-- golden: CASE/FILE.out -->` says where from"
                    for i in range(start, end)
                    if DIAGNOSTIC.match(lines[i])
                ][:1]
                continue
            printed = golden_lines(golden)
            by_key = {}
            for line in printed:
                diagnostic = DIAGNOSTIC.match(line)
                if diagnostic is not None:
                    by_key.setdefault(
                        diagnostic["key"], line[diagnostic.end("change") if diagnostic["change"] else 0 :]
                    )
            for i in range(start, end):
                line = lines[i]
                if not line.strip() or line in printed:
                    continue
                diagnostic = DIAGNOSTIC.match(line)
                replacement = by_key.get(diagnostic["key"]) if diagnostic is not None else None
                if UPDATE and diagnostic is not None and replacement is not None:
                    lines[i] = (diagnostic["change"] or "") + replacement
                    continue
                problems.append(f"{shown}:{i + 1}: not in tests/golden/{golden}: {line}")
        if UPDATE:
            document.write_text("\n".join(lines) + "\n")
    assert not problems, "\n".join(problems) + "\n(make golden rewrites a diagnostic's text; anything else by hand)"


def test_blocks_are_found_with_their_markers() -> None:
    lines = ["text", "<!-- golden: a/b.out -->", "```", "x", "```", "````markdown", "```diff", "y", "```", "````"]
    assert blocks(lines) == [("a/b.out", 3, 4), (None, 6, 9)]


def test_every_golden_output_a_document_names_exists() -> None:
    for document in DOCUMENTS:
        for golden, _start, _end in blocks(document.read_text().splitlines()):
            if golden is not None:
                assert (GOLDEN / golden).is_file(), f"{document.name} names tests/golden/{golden}, which does not exist"
