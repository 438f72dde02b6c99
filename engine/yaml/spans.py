"""Where a reported value ends: spans for code frames, SARIF regions and editor ranges.

A located value carries where it starts (``loc``: file, line, column), which is all the one-line
output needs. The end is derived from the source only when something shows it: the file is
parsed again into libyaml events, and each value's extent is recorded by its start — a scalar
from its first to its last character (quotes included), a collection to its closing bracket or
its last item. Positions that start no value (a syntax error, a file listed from a folder) get a
span of one character.

Lines and columns are 1-based and count characters (code points), as ``loc`` does; the end is
exclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from yaml import (
    AliasEvent,
    CSafeLoader,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    YAMLError,
    parse,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Span(NamedTuple):
    line: int
    column: int
    end_line: int
    end_column: int


def _position(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1)


def value_extents(data: bytes) -> dict[tuple[int, int], tuple[int, int]]:
    """Each value's (line, column) → its exclusive end (line, column); where a collection and its
    first key start at the same place, the key's. A file that stops parsing keeps what was read."""
    extents: dict[tuple[int, int], tuple[int, int]] = {}
    open_starts: list[tuple[int, int]] = []
    last_end = (1, 1)
    event: Any  # (libyaml's events and marks, which the stubs type more loosely)
    try:
        for event in parse(data, Loader=CSafeLoader):
            kind = type(event)
            start = _position(event.start_mark)
            if kind is ScalarEvent or kind is AliasEvent:
                last_end = _position(event.end_mark)
                extents.setdefault(start, last_end)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                open_starts.append(start)
            elif (kind is MappingEndEvent or kind is SequenceEndEvent) and open_starts:
                if event.end_mark.index > event.start_mark.index:  # a flow collection's bracket
                    last_end = _position(event.end_mark)
                extents.setdefault(open_starts.pop(), last_end)
    except YAMLError:
        pass
    return extents


class Sources:
    """The text of the files diagnostics point into, read once each through ``read`` (a
    repo-relative path → its bytes, or None when it cannot be read)."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self._lines: dict[str, list[str]] = {}
        self._extents: dict[str, dict[tuple[int, int], tuple[int, int]]] = {}
        self._data: dict[str, bytes | None] = {}

    def data(self, file: str) -> bytes | None:
        if file not in self._data:
            self._data[file] = self._read(file)
        return self._data[file]

    def line(self, file: str, line: int) -> str | None:
        """A 1-based line of the file without its line end (None past its end, or when it
        cannot be read)."""
        lines = self._lines.get(file)
        if lines is None:
            data = self.data(file)
            lines = self._lines[file] = data.decode("utf-8", "replace").splitlines() if data is not None else []
        return lines[line - 1] if 0 < line <= len(lines) else None

    def span(self, file: str, line: int, column: int) -> Span:
        text = self.line(file, line)
        if text is None or column > len(text):
            return Span(line, column, line, column)
        end_column = scalar_end(text, column - 1, self.line(file, line + 1))
        if end_column is not None:  # a scalar that ends on its line: no need to parse the file
            return Span(line, column, line, end_column + 1)
        extents = self._extents.get(file)
        if extents is None:
            data = self.data(file)
            extents = self._extents[file] = value_extents(data) if data is not None else {}
        end = extents.get((line, column))
        if end is not None and end > (line, column):
            return Span(line, column, *end)
        return Span(line, column, line, column + 1)


#: characters that start something other than a one-line scalar: a collection, a block scalar,
#: a tag, an anchor, an alias, a list item, a complex key
_NOT_PLAIN_START = frozenset("[{|>!&*-?")


def scalar_end(text: str, start: int, next_line: str | None = None) -> int | None:
    """The end (exclusive, 0-based) of the scalar that starts at ``start`` of the line ``text``,
    read as YAML reads a key or a value; None when it does not start or end on this line
    (``value_extents`` parses the file then). ``next_line``: the line after, where a plain
    scalar that ends its line may go on."""
    first = text[start]
    if first == '"':
        index = start + 1
        while index < len(text):
            if text[index] == "\\":
                index += 2
                continue
            if text[index] == '"':
                return index + 1
            index += 1
        return None
    if first == "'":
        index = start + 1
        while index < len(text):
            if text[index] == "'":
                if text[index + 1 : index + 2] != "'":
                    return index + 1
                index += 1
            index += 1
        return None
    if first in _NOT_PLAIN_START or first.isspace() or first in ",]}#":
        return None
    in_flow = _inside_flow(text, start)
    index = start
    while index < len(text):
        char = text[index]
        following = text[index + 1 : index + 2]
        if char == ":" and (following in ("", " ", "\t") or (in_flow and following in ",[]{}")):
            break
        if char == "#" and text[index - 1] in " \t":
            break
        if in_flow and char in ",[]{}":
            break
        index += 1
    scalar = text[start:index].rstrip()
    if not in_flow and any(char in ",[]{}" for char in scalar):
        return None  # a flow collection may have opened on an earlier line: let the parser say
    goes_on = next_line is not None and next_line.strip() and (in_flow or _indent(next_line) > _indent(text))
    if index == len(text) and goes_on:
        return None  # a plain scalar goes on over the next line
    return len(scalar) + start


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _inside_flow(text: str, before: int) -> bool:
    """Whether a ``[`` or ``{`` opened earlier on the line is still open at ``before``."""
    depth, quote = 0, ""
    for char in text[:before]:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "#":
            break
    return depth > 0


def read_from(root: str) -> Callable[[str], bytes | None]:
    """A reader of repo-relative files under ``root`` (the command line's sources: the disk)."""
    import os

    def read(file: str) -> bytes | None:
        try:
            with open(os.path.join(root, file), "rb") as handle:
                return handle.read()
        except OSError:
            return None

    return read
