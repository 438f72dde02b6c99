"""Where the cursor stands in a YAML document: the path of keys to it, and the scalar under it.

A document being typed seldom parses as it is (``tools: [read, gr``). To find what the cursor is
in, the word being typed is replaced by a marker and the document parsed again: as a value
first, and — when that does not parse, as on a line of its own under a mapping — as a key. The
marker's place among the parser's events gives its path: keys for mappings, ``*`` for the items
of lists.

Lines and columns here are 0-based and count characters (code points).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

import yaml

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

MARKER = "beeuni0cursor0marker"
#: the word being typed: what a completion replaces (a value like `beeuni:web_se` included)
WORD = re.compile(r"[^\s\[\]{},#&*!|>'\"%@`]*$")
WORD_AFTER = re.compile(r"^[^\s\[\]{},#:]*")


class Place(NamedTuple):
    path: tuple[str, ...]  # keys from the top; "*" for a list's item
    as_key: bool  # the word is (or may become) a key of the mapping at ``path``
    start: int  # the word's first column
    end: int  # the column after it


def place_at(text: str, line: int, column: int) -> Place | None:
    """What the word at (line, column) is part of, or None when no reading of the document
    puts it anywhere."""
    lines = text.split("\n")
    if not 0 <= line < len(lines):
        return None
    current = lines[line]
    before = current[:column]
    start = column - len(WORD.search(before).group(0))  # type: ignore[union-attr]
    end = column + len(WORD_AFTER.search(current[column:]).group(0))  # type: ignore[union-attr]
    alone = not current[:start].strip(" -")  # nothing but indentation (and list dashes) before it
    for marker, as_key in ((MARKER, False), (MARKER + ":", True)):
        edited = [*lines[:line], current[:start] + marker + current[end:], *lines[line + 1 :]]
        path = _marker_path("\n".join(edited))
        if path is None:
            continue
        found, is_key = path
        if is_key:
            return Place(found, True, start, end)
        if as_key:
            return None  # `marker:` parsed as a one-pair mapping's key inside a value: no key here
        # a value alone on its line may be where a key is being typed (`agents:\n  rev`)
        return Place(found, alone and not current[:start].strip().endswith("-"), start, end)
    return None


def _marker_path(text: str) -> tuple[tuple[str, ...], bool] | None:
    """The path of the marker's scalar and whether it is a key; None when the text does not
    parse or holds no marker."""
    try:
        for path, is_key, value in _scalars(text):
            if value == MARKER:
                return path, is_key
    except yaml.YAMLError:
        return None
    return None


def _scalars(text: str) -> Iterator[tuple[tuple[str, ...], bool, str]]:
    """Every scalar of the document with the path to it and whether it is a mapping's key; a
    key's path is that of its mapping, a value's path ends with its key (or ``*``)."""
    # Each frame: [is_mapping, the pending key (mappings) or None, the frame's own path]
    stack: list[list[Any]] = []
    events: Iterator[Any] = yaml.parse(text, Loader=yaml.CSafeLoader)
    for event in events:
        kind = type(event)
        if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
            value = getattr(event, "value", "") or ""
            if stack and stack[-1][0] and stack[-1][1] is None:
                stack[-1][1] = value
                yield stack[-1][2], True, value
                continue
            yield _child_path(stack), False, value
            _value_done(stack)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            stack.append([kind is yaml.MappingStartEvent, None, _child_path(stack)])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            stack.pop()
            _value_done(stack)


def _child_path(stack: list[list[Any]]) -> tuple[str, ...]:
    if not stack:
        return ()
    is_mapping, key, path = stack[-1]
    return (*path, str(key) if is_mapping else "*")


def _value_done(stack: list[list[Any]]) -> None:
    if stack and stack[-1][0]:
        stack[-1][1] = None


def scalar_at(text: str, line: int, column: int) -> str | None:
    """The text of the scalar (key or value) whose characters hold (line, column), if the text
    parses."""
    events: Iterator[Any] = yaml.parse(text, Loader=yaml.CSafeLoader)
    try:
        for event in events:
            if type(event) is not yaml.ScalarEvent:
                continue
            first: Any = event.start_mark
            last: Any = event.end_mark
            if first.line == line == last.line and first.column <= column <= last.column:
                return str(event.value)
            if first.line > line:
                return None
    except yaml.YAMLError:
        return None
    return None
