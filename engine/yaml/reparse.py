"""Parse an edited file again, reading only the entry the edit is in (an editor's checks as you
type, where the buffer changes a keystroke at a time).

A manifest is a mapping of sections (``tools:``, ``agents:``) whose values are block mappings
of many small entries. When an edit changes lines of one such entry only, and no line before
or after it, the file parses to what it parsed to before with that entry's value replaced: the
bytes before the entry are the same, so the parser is in the same state where it starts, and the
line that follows it starts the next entry (or the next section) as before. So only the entry's
lines are parsed, at their own line numbers; every other value is the old object — which is
also what lets the rules keep what they computed from it (``lang/carry.py``).

Anything this cannot be sure of is parsed whole (``None`` from ``reparse``): a changed number of
lines; an edit outside one entry, or in a flow mapping; an anchor, an alias, a block scalar or
a line less indented than the entry in the old or new lines (those reach past the entry); a
directive, a byte order mark or a lone carriage return in the file; a problem in the old file
or in the new entry (its text and position are the whole file's business).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .loader import MAX_FILE_BYTES, MAX_NODES, LoadProblem, load_yaml_counted, load_yaml_part
from .located import LocatedList, LocatedMap

if TYPE_CHECKING:
    from typing import Any

#: bytes that make an entry's lines mean something outside them: anchors and aliases, block
#: scalars (their chomping reaches the lines after), line breaks YAML 1.1 sees and editors not
_REACHING = (b"&", b"*", b"|", b">", "\x85".encode(), "\u2028".encode(), "\u2029".encode())
_BYTE_ORDER_MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


class Parsed:
    """One file as read: its bytes, its root value, the problems found, its count of values."""

    __slots__ = ("data", "nodes", "problems", "root")

    def __init__(self, data: bytes, root: Any, problems: list[LoadProblem], nodes: int) -> None:
        self.data = data
        self.root = root
        self.problems = problems
        self.nodes = nodes


def parse(data: bytes, path: str, before: Parsed | None = None) -> Parsed:
    """``data`` parsed; from ``before`` (the same file's last version) what did not change."""
    if before is not None:
        if before.data == data:
            return before
        found = reparse(before, data, path)
        if found is not None:
            return found
    return Parsed(data, *load_yaml_counted(data, path))


def reparse(before: Parsed, data: bytes, path: str) -> Parsed | None:
    """``data``, an edit of ``before``, parsed by reading the one entry the edit is in; None
    when that cannot be sure to give what reading it whole gives."""
    root = before.root
    if before.problems or not isinstance(root, LocatedMap) or len(data) > MAX_FILE_BYTES:
        return None
    if data.startswith(_BYTE_ORDER_MARKS) or data.startswith(b"%") or b"\n%" in data:
        return None
    if data.count(b"\r") != data.count(b"\r\n"):
        return None
    old_lines, new_lines = before.data.split(b"\n"), data.split(b"\n")
    if len(old_lines) != len(new_lines):
        return None
    first = next(i for i, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)) if old != new)
    last = len(new_lines) - 1
    while old_lines[last] == new_lines[last]:
        last -= 1
    found = _entry_around(root, first + 1, last + 1, old_lines)
    if found is None:
        return None
    section_key, section, key, start, end = found
    indent = key.loc[2] - 1
    if indent < 1:
        return None
    old_part, new_part = old_lines[start - 1 : end - 1], new_lines[start - 1 : end - 1]
    if not (_stays_inside(old_part, indent) and _stays_inside(new_part, indent)):
        return None
    parsed = load_yaml_part(b"\n".join(new_part) + b"\n", path, start, 1)
    if parsed is None:
        return None
    part, part_nodes = parsed
    if not isinstance(part, LocatedMap) or len(part) != 1:
        return None
    (new_key, new_value), old_value = next(iter(part.items())), section[key]
    if new_key != key or new_key.loc != key.loc:
        return None
    nodes = before.nodes - 1 - _count(old_value) + part_nodes - 1
    if nodes > MAX_NODES:
        return None
    from ..lang.carry import same  # (here: a first reading of a file imports nothing of editing)

    if same(new_value, old_value):
        new_value = old_value
    new_section = LocatedMap(section, section.loc)
    new_section[key] = new_value
    new_root = LocatedMap(root, root.loc)
    new_root[section_key] = new_section
    return Parsed(data, new_root, [], nodes)


def _entry_around(root: LocatedMap, first: int, last: int, lines: list[bytes]) -> tuple[Any, ...] | None:
    """The section (a block mapping under a top-level key) and its entry whose lines hold lines
    ``first`` to ``last`` of ``lines``: (section key, section, entry key, its first line, the
    line after it)."""
    top = list(root)
    for index, section_key in enumerate(top):
        section = root[section_key]
        if not isinstance(section, LocatedMap) or not section or not _block(section, section_key, lines):
            continue
        section_end = top[index + 1].loc[1] if index + 1 < len(top) else len(lines) + 1
        if not section.loc[1] <= first <= last < section_end:
            continue
        keys = list(section)
        starts = [key.loc[1] for key in keys]
        if any(key.loc[2] != section.loc[2] for key in keys) or starts != sorted(set(starts)):
            return None  # not one entry per line at one column: not a plain block mapping
        from bisect import bisect_right  # (here: only an editor's reading of an edit gets this far)

        at = bisect_right(starts, first) - 1
        end = starts[at + 1] if at + 1 < len(starts) else section_end
        if at < 0 or last >= end:
            return None
        return section_key, section, keys[at], starts[at], end
    return None


def _block(section: LocatedMap, key: Any, lines: list[bytes]) -> bool:
    """Whether ``section`` is a block mapping (not ``{…}``) on the lines below its key."""
    line, column = section.loc[1], section.loc[2]
    if line <= key.loc[1]:
        return False
    text = lines[line - 1].decode("utf-8", "replace")
    return text[column - 1 : column] != "{"


def _stays_inside(lines: list[bytes], indent: int) -> bool:
    """Whether an entry's lines (its key at column ``indent``) reach nothing outside them: every
    line after the first blank or indented deeper, and nothing in them that reaches further."""
    if any(mark in line for line in lines for mark in _REACHING):
        return False
    for line in lines[1:]:
        text = line.rstrip(b"\r")
        if text.strip() and len(text) - len(text.lstrip(b" ")) <= indent:
            return False
    return True


def _count(value: Any) -> int:
    """How many values ``value`` is, as the parser counts them (a map's keys too)."""
    if isinstance(value, LocatedMap):
        return 1 + sum(1 + _count(item) for item in value.values())
    if isinstance(value, LocatedList):
        return 1 + sum(_count(item) for item in value)
    return 1
