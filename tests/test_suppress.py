"""Inline suppressions through the engine's API, as an editor uses it: which
comments count, what they silence, and the edit that adds one for a diagnostic.

The golden cases `suppress-*` show the command line's output; these tests check the edges."""

from __future__ import annotations

from pathlib import Path

import pytest
from beeuni.engine.edit.text_edit import apply_edits
from beeuni.engine.project import open_project


def project(tmp_path: Path, manifest: str, **files: str) -> Path:
    (tmp_path / "beeuni.yaml").write_bytes(manifest.encode())
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode())
    return tmp_path


def found(path: Path) -> list[tuple[str, int, str]]:
    return [(d.file, d.line, d.rule) for d in open_project(path).diagnostics()]


def test_a_hash_inside_a_value_is_no_comment(tmp_path: Path) -> None:
    manifest = (
        "tools:\n"
        "  a: 'tools/a.ts # beeuni: ignore[tools/module-extension]'\n"
        "  b: |\n"
        "    # beeuni: ignore[tools/value-type]\n"
        "  c: tools/c#beeuni:ignore[tools/module-extension]\n"
    )
    rules = {rule for _, _, rule in found(project(tmp_path, manifest))}
    assert "suppression/unused" not in rules
    assert "tools/module-extension" in rules


def test_a_comment_alone_silences_the_next_line_only(tmp_path: Path) -> None:
    manifest = (
        "tools:\n"
        "  # beeuni: ignore[tools/module-missing] one\n"
        "  a: tools/a.ts\n"
        "  b: tools/b.ts\n"
        "\n"
        "  # beeuni: ignore[tools/module-missing] a blank line breaks the link\n"
        "\n"
        "  c: tools/c.ts\n"
        "  web_search: beeuni:web_search\n"
    )
    assert found(project(tmp_path, manifest)) == [
        ("beeuni.yaml", 4, "tools/module-missing"),
        ("beeuni.yaml", 6, "suppression/unused"),
        ("beeuni.yaml", 8, "tools/module-missing"),
    ]


def test_a_suppression_silences_only_the_rules_it_names(tmp_path: Path) -> None:
    manifest = "tools:\n  Bad: tools/a.ts  # beeuni: ignore[tools/module-missing]\n  show: beeuni:show\n"
    assert found(project(tmp_path, manifest)) == [("beeuni.yaml", 2, "tools/name-format")]


def test_the_unused_warning_cannot_be_silenced(tmp_path: Path) -> None:
    manifest = "tools:  # beeuni: ignore[tools/module-missing, suppression/unused]\n  web_search: beeuni:web_search\n"
    assert found(project(tmp_path, manifest)) == [
        ("beeuni.yaml", 1, "suppression/unused"),
        ("beeuni.yaml", 1, "suppression/unused"),
    ]


# The edit an editor offers as a quick fix: applied, it silences the diagnostic and nothing else.
EDIT_CASES = {
    "appended to a line without a comment": (
        "tools:\n  a: tools/a.ts\n",
        "tools:\n  a: tools/a.ts  # beeuni: ignore[tools/module-missing]\n",
    ),
    "above a line that has a comment, indented like it": (
        "tools:\n  a: tools/a.ts  # ours\n",
        "tools:\n  # beeuni: ignore[tools/module-missing]\n  a: tools/a.ts  # ours\n",
    ),
    "added to the suppression already there": (
        "tools:\n  Bad: tools/a.ts  # beeuni: ignore[tools/name-format] legacy\n",
        "tools:\n  Bad: tools/a.ts  # beeuni: ignore[tools/name-format, tools/module-missing] legacy\n",
    ),
    "above a value that goes on over several lines": (
        "tools:\n  a: tools/a\n    .ts\n",
        "tools:\n  # beeuni: ignore[tools/module-missing]\n  a: tools/a\n    .ts\n",
    ),
    "with the file's own line ends": (
        "tools:\r\n  a: tools/a.ts  # ours\r\n",
        "tools:\r\n  # beeuni: ignore[tools/module-missing]\r\n  a: tools/a.ts  # ours\r\n",
    ),
}


@pytest.mark.parametrize(("before", "after"), EDIT_CASES.values(), ids=EDIT_CASES.keys())
def test_the_suppression_edit(tmp_path: Path, before: str, after: str) -> None:
    run = open_project(project(tmp_path, before))
    [diagnostic] = [d for d in run.diagnostics() if d.rule == "tools/module-missing"]
    edit = run.suppression_edit(diagnostic)
    assert edit is not None
    assert apply_edits(before, [edit]) == after
    (tmp_path / "beeuni.yaml").write_bytes(after.encode())
    assert "tools/module-missing" not in {rule for _, _, rule in found(tmp_path)}
    assert not {rule for _, _, rule in found(tmp_path)} - {rule for _, _, rule in found_in(before, tmp_path)}


def found_in(text: str, tmp_path: Path) -> list[tuple[str, int, str]]:
    other = tmp_path / "before"
    other.mkdir(exist_ok=True)
    return found(project(other, text))


def test_no_edit_for_a_file_that_does_not_load(tmp_path: Path) -> None:
    run = open_project(project(tmp_path, "tools: [a\n"))
    [diagnostic] = run.diagnostics()
    assert diagnostic.rule == "manifest/yaml-syntax"
    assert run.suppression_edit(diagnostic) is None
