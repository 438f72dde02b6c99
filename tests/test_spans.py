"""Where a reported value ends (``engine/yaml/spans.py``): code frames, SARIF regions and editor
ranges all read it."""

from __future__ import annotations

from beeuni.engine.yaml.spans import Sources, Span

SOURCE = """tools:
  web_search: "beeuni:web_search"
  lookup: tools/lookup.ts
agents:
  reviewer: {tools: [read, grep]}
  writer:
    tools:
      - edit
      - bash
  empty:
  ümlaut: wört
broken: [
"""


def spans(text: str = SOURCE) -> Sources:
    return Sources(lambda _: text.encode())


def test_a_scalar_spans_its_characters_quotes_included() -> None:
    assert spans().span("f", 2, 15) == Span(2, 15, 2, 34)
    assert spans().span("f", 3, 11) == Span(3, 11, 3, 26)
    assert spans().span("f", 3, 3) == Span(3, 3, 3, 9)


def test_a_flow_collection_spans_to_its_bracket() -> None:
    assert spans().span("f", 5, 13) == Span(5, 13, 5, 34)
    assert spans().span("f", 5, 21) == Span(5, 21, 5, 33)


def test_a_block_collection_spans_to_its_last_item() -> None:
    assert spans().span("f", 8, 7) == Span(8, 7, 9, 13)


def test_columns_count_characters_not_bytes() -> None:
    assert spans().span("f", 11, 11) == Span(11, 11, 11, 15)


def test_a_position_that_starts_no_value_gets_one_character() -> None:
    assert spans().span("f", 12, 9) == Span(12, 9, 12, 10)
    assert spans().span("f", 10, 9) == Span(10, 9, 10, 9)  # `empty:` — nothing there to mark
    assert spans().span("f", 40, 1) == Span(40, 1, 40, 1)


def test_an_unreadable_file_has_no_lines() -> None:
    missing = Sources(lambda _: None)
    assert missing.line("gone.yaml", 1) is None
    assert missing.span("gone.yaml", 3, 4) == Span(3, 4, 3, 4)


def test_the_one_line_reading_agrees_with_the_parser_on_every_golden_manifest() -> None:
    """`scalar_end` spares a parse of the file; where it answers it must say what libyaml says."""
    from beeuni.engine.yaml.spans import scalar_end, value_extents
    from conftest import ROOT

    checked = 0
    for manifest in sorted((ROOT / "tests" / "golden").glob("*/project/**/*.yaml")):
        if not manifest.is_file():  # a symbolic-link loop (golden case symlink-loop)
            continue
        data = manifest.read_bytes()
        lines = data.decode("utf-8", "replace").splitlines()
        for (line, column), (end_line, end_column) in value_extents(data).items():
            if line > len(lines) or column > len(lines[line - 1]):
                continue
            found = scalar_end(lines[line - 1], column - 1, lines[line] if line < len(lines) else None)
            if found is not None:
                assert (end_line, end_column) == (line, found + 1), (manifest, line, column)
                checked += 1
    assert checked > 500
