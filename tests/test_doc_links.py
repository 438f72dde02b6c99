"""Every link README.md and docs/*.md make inside the repository leads somewhere.

The README is the front door and the references live in docs/; a section that moves between
them must not leave a link behind. Each relative link must name a file or folder that exists,
and each ``#anchor`` a heading of the Markdown file it points to (the README's own, for a bare
``#anchor``), with the anchors GitHub makes: the heading's text in lower case, punctuation
dropped, spaces as ``-``, and ``-1``, ``-2``, ... for a repeated heading.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})")
HEADING = re.compile(r"^#{1,6} (?P<text>.+?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"\]\((?P<target>[^()\s]+)(?:\s+\"[^\"]*\")?\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their 1-based numbers."""
    found = []
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if fence is None and opening is not None:
            fence = opening["fence"]
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            found.append((number, line))
    return found


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (before any ``-N`` for a repeat)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file's headings."""
    seen: dict[str, int] = {}
    found = set()
    for _number, line in prose(path.read_text()):
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading["text"])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """Each link of a document's prose (not in code) as (line, target)."""
    return [
        (number, match["target"])
        for number, line in prose(path.read_text())
        for match in LINK.finditer(INLINE_CODE.sub("", line))
    ]


def broken(document: Path, root: Path = ROOT) -> list[str]:
    """What of a document's relative links and anchors leads nowhere (named from ``root``)."""
    problems = []
    shown = document.relative_to(root)
    for number, target in links(document):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        destination = (document.parent / path_part).resolve() if path_part else document
        if not destination.exists():
            problems.append(f"{shown}:{number}: {target}: no such file or folder")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{shown}:{number}: {target}: no heading of {destination.name} has that anchor")
    return problems


def test_every_relative_link_and_anchor_of_the_docs_resolves() -> None:
    problems = [problem for document in DOCUMENTS for problem in broken(document)]
    assert not problems, "\n".join(problems)


def test_anchors_are_made_as_github_makes_them() -> None:
    assert slug("What a session serves, and when it changes") == "what-a-session-serves-and-when-it-changes"
    assert (
        slug("`beeuni rules list` / `beeuni rules explain NAME [DIR]`")
        == "beeuni-rules-list--beeuni-rules-explain-name-dir"
    )
    assert slug("`beeuni tools eject NAME`") == "beeuni-tools-eject-name"


def test_a_broken_link_and_a_broken_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## A section\n\n## A section\n")
    document = tmp_path / "doc.md"
    document.write_text(
        "# Doc\n\n[ok](other.md#a-section-1) [gone](missing.md) [bad](other.md#nowhere) [self](#doc)\n"
        "`[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n[web](https://example.com/x#y)\n"
    )
    assert broken(document, tmp_path) == [
        "doc.md:3: missing.md: no such file or folder",
        "doc.md:3: other.md#nowhere: no heading of other.md has that anchor",
    ]
