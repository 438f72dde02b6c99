"""Edits of a manifest file that keep every other byte: set one entry, or add a section.

An edit is spliced into the text at the positions libyaml reports, so comments, blank lines,
quoting, order, indentation and each line's own line end (LF, CRLF or CR) stay as they were.
After the splice the new text is read back with the loader ``validate`` uses
(``yaml/loader.py``: ``load_yaml``): it must hold exactly the old data with the one change, or the edit
is refused with the reason. Nothing here touches the disk.

    file = SourceText.read(data)                # yaml/source_text.py: UTF-8/16, with or without BOM
    new = set_entry(file.text, "tools", "notes", "tools/notes.ts", "# our own")
    file.encode(new)                            # the bytes to write, BOM and encoding kept

Every function raises ``EditRefused`` — with a reason a user can act on — rather than guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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

from ..yaml.loader import STR_TAG, load_yaml
from ..yaml.located import unwrap
from ..yaml.source_text import EditRefused, SourceText

if TYPE_CHECKING:
    from typing import Any

#: the line ends YAML knows; a file keeps its own
_LINE_END = re.compile(r"\r\n|\r|\n")
#: an anchor (`&a`) or tag (`!!str`, `!local`) before a scalar, with the blanks after it
_PROPERTY = re.compile(r"\S*[ \t\r\n]*")


# Reading the text's structure --------------------------------------------------------------


class _Node:
    """A value of the document with where it stands in the text.

    ``start``/``end`` span the value (a scalar's anchor and tag included); for a block
    collection ``end`` is the end of its last content, for a flow one just after the closing
    bracket, whose own index is ``close``."""

    __slots__ = ("anchor", "close", "end", "event", "flow", "items", "kind", "start")

    def __init__(self, kind: str, event: Any) -> None:
        self.kind = kind  # "scalar", "alias", "map" or "seq"
        self.event = event
        self.start: int = event.start_mark.index
        self.end: int = event.end_mark.index
        self.anchor: str | None = event.anchor
        self.flow = bool(getattr(event, "flow_style", False))
        self.close = -1
        self.items: list[Any] = []  # [(key, value)] for a map, [value] for a seq


class _Document:
    def __init__(self, text: str) -> None:
        self.text = text
        self.root: _Node | None = None
        self.aliased: set[str] = set()
        self._read()

    def _read(self) -> None:
        stack: list[tuple[_Node, list[_Node]]] = []  # open collections, with a map's pending key
        last_end = 0  # where the last scalar, alias or flow collection ends
        event: Any  # (libyaml's events and marks, which the stubs type more loosely)
        try:
            for event in parse(self.text, Loader=CSafeLoader):
                kind = type(event)
                if kind is ScalarEvent or kind is AliasEvent:
                    node = _Node("scalar" if kind is ScalarEvent else "alias", event)
                    if kind is AliasEvent:
                        self.aliased.add(event.anchor)
                    last_end = node.end
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    node = _Node("map" if kind is MappingStartEvent else "seq", event)
                    stack.append((node, []))
                    continue
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    node, _ = stack.pop()
                    if node.flow:
                        node.close, node.end = event.start_mark.index, event.end_mark.index
                        last_end = node.end
                    else:
                        node.end = max(node.start, last_end)
                else:
                    continue
                if not stack:
                    self.root = node
                    continue
                parent, pending = stack[-1]
                if parent.kind == "seq":
                    parent.items.append(node)
                elif pending:
                    parent.items.append((pending.pop(), node))
                else:
                    pending.append(node)
        except YAMLError as err:
            raise EditRefused(f"the file is not valid YAML: {str(err).splitlines()[0]}") from None

    def entry(self, mapping: _Node, key: str) -> tuple[_Node, _Node] | None:
        for key_node, value in mapping.items:
            if key_node.kind == "scalar" and key_node.event.value == key:
                return key_node, value
        return None

    def line_end_before(self, index: int) -> str:
        """The line end of the line before the one starting at ``index`` — or else the file's
        first one, or LF for a file of one line."""
        text = self.text
        if text[max(index - 2, 0) : index] == "\r\n":
            return "\r\n"
        if index > 0 and text[index - 1] in "\r\n":
            return text[index - 1]
        found = _LINE_END.search(text)
        return found.group() if found else "\n"


def _after_line(text: str, index: int) -> int:
    """The index where the line after the one holding ``index`` starts (``len(text)`` at the end).
    An index that is itself at a line start stays."""
    if index == 0 or text[index - 1] in "\r\n":
        return index
    found = _LINE_END.search(text, index)
    return found.end() if found else len(text)


# The edits ---------------------------------------------------------------------------------


def set_entry(text: str, section: str, key: str, value: str, comment: str) -> str:
    """``text`` with the entry ``key`` of the top-level mapping ``section`` set to the plain
    scalar ``value``, and ``comment`` ending its line. An existing entry keeps its quote style
    and anchor; a missing entry is added as the section's last; an empty section (``tools:``,
    ``tools: ~``) gets it as its first."""
    before = _load(text)
    document = _Document(text)
    root = _block_root(document)
    found = document.entry(root, section)
    if found is None:
        raise EditRefused(f"the file has no `{section}` key")
    section_key, mapping = found
    if mapping.kind == "scalar" and unwrap(before.get(section)) is None:
        new_text = _fill_empty_section(document, section_key, mapping, key, value, comment)
    elif mapping.kind != "map":
        raise EditRefused(f"`{section}` is not a mapping")
    elif (entry := document.entry(mapping, key)) is not None:
        new_text = _replace_value(document, entry[1], value, comment)
    else:
        new_text = _add_entry(document, mapping, key, value, comment)
    _check(before, new_text, section, {key: value})
    return new_text


def add_section(text: str, section: str, entries: list[tuple[str, str]], comments: dict[str, str]) -> str:
    """``text`` with a new top-level block mapping ``section`` appended, its ``entries`` plain
    scalars, ``comments`` (by key) ending their lines."""
    before = _load(text)
    document = _Document(text)
    if unwrap(before) is not None:
        _block_root(document)
        if section in before:
            raise EditRefused(f"the file has a `{section}` key already")
    eol = document.line_end_before(len(text))
    lines = [f"{section}:"]
    lines += [f"  {key}: {value}" + (f"  {comments[key]}" if key in comments else "") for key, value in entries]
    prefix = text if not text or text.endswith(("\n", "\r")) else text + eol
    new_text = prefix + eol.join(lines) + eol
    _check(before, new_text, section, dict(entries))
    return new_text


def _block_root(document: _Document) -> _Node:
    root = document.root
    if root is None or root.kind != "map":
        raise EditRefused("the file's top level is not a mapping")
    if root.flow:
        raise EditRefused("the file's top-level mapping is written in flow style (`{...}`)")
    return root


def _replace_value(document: _Document, node: _Node, value: str, comment: str) -> str:
    text = document.text
    if node.kind == "alias":
        return _splice(text, node.start, node.end, value, comment)
    if node.kind != "scalar":
        raise EditRefused("the entry's value is a list or a mapping, not a plain value")
    if node.anchor is not None and node.anchor in document.aliased:
        raise EditRefused(f"the entry's value is anchored (`&{node.anchor}`) and an alias elsewhere repeats it")
    start, end = _scalar_body(document, node)
    if end == start:  # `name:` with no value: the value goes after the colon
        return _splice(text, start, end, f" {value}", comment)
    if node.event.tag not in (None, "!", STR_TAG):  # a tag the new value may not fit (`!!null ~`)
        anchor = f"&{node.anchor} " if node.anchor is not None else ""
        return _splice(text, node.start, end, anchor + value, comment)
    quote = text[start] if text[start] in "'\"" else ""
    return _splice(text, start, end, quoted(value, quote), comment)


def _scalar_body(document: _Document, node: _Node) -> tuple[int, int]:
    """The span of a scalar's own text: after its anchor and tag, and for a block scalar
    (``|``, ``>``) without the line end and blank lines it swallows."""
    text, start, end = document.text, node.start, node.end
    while start < end and text[start] in "&!":
        start = _PROPERTY.match(text, start).end()  # type: ignore[union-attr]
    if node.event.style in ("|", ">"):
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
    return start, end


def quoted(value: str, quote: str) -> str:
    """``value`` written as a scalar in the quote style ``quote`` (``'``, ``"`` or none)."""
    if quote == "'":
        return "'" + value.replace("'", "''") + "'"
    if quote == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def scalar_splices(text: str) -> dict[tuple[int, int], tuple[int, int, str]]:
    """Where a new value can replace a scalar of ``text`` the way ``set_entry`` writes one: for
    each string scalar, by the 1-based (line, column) it starts at (where the loader locates
    it), the span of its own text (``_scalar_body``) and its quote. A scalar with a tag, or
    anchored and repeated by an alias, is left out: a new value there would change more."""
    document = _Document(text)
    found: dict[tuple[int, int], tuple[int, int, str]] = {}
    pending = [document.root] if document.root is not None else []
    while pending:
        node = pending.pop()
        if node.kind == "map":
            pending += [part for pair in node.items for part in pair]
        elif node.kind == "seq":
            pending += node.items
        elif node.kind == "scalar" and node.event.tag in (None, "!", STR_TAG):
            if node.anchor is not None and node.anchor in document.aliased:
                continue
            start, end = _scalar_body(document, node)
            if end > start:
                mark = node.event.start_mark
                found[(mark.line + 1, mark.column + 1)] = (start, end, text[start] if text[start] in "'\"" else "")
    return found


def _add_entry(document: _Document, mapping: _Node, key: str, value: str, comment: str) -> str:
    text = document.text
    if mapping.flow:
        at = len(text[: mapping.close].rstrip(" \t\r\n"))
        separator = "" if text[at - 1] in "{," else ", "
        separator = " " if text[at - 1] == "," else separator
        return _splice(text, at, at, f"{separator}{key}: {value}", comment)
    indent = " " * mapping.items[0][0].event.start_mark.column
    return _insert_line(document, _after_line(text, mapping.end), f"{indent}{key}: {value}", comment)


def _fill_empty_section(
    document: _Document, section_key: _Node, empty: _Node, key: str, value: str, comment: str
) -> str:
    """``tools:`` or ``tools: ~`` (null) becomes a block mapping holding the one entry."""
    if empty.anchor is not None and empty.anchor in document.aliased:
        raise EditRefused(f"the empty section is anchored (`&{empty.anchor}`) and an alias elsewhere repeats it")
    text = document.text
    if empty.end > empty.start:  # the null itself (`~`, `null`, a tag) goes; a comment after it stays
        text = text[: empty.start].rstrip(" \t") + text[empty.end :]
    document = _Document(text)
    indent = " " * (section_key.event.start_mark.column + 2)
    return _insert_line(document, _after_line(text, section_key.end), f"{indent}{key}: {value}", comment)


def _insert_line(document: _Document, at: int, line: str, comment: str) -> str:
    """``line`` inserted at the line start ``at``, ended like the line before it."""
    text = document.text
    eol = document.line_end_before(at)
    if at == len(text) and text and not text.endswith(("\n", "\r")):
        return _splice(text, at, at, eol + line + eol, comment, at + len(eol) + len(line))
    return _splice(text, at, at, line + eol, comment, at + len(line))


def _splice(text: str, start: int, end: int, replacement: str, comment: str, comment_at: int = -1) -> str:
    """``text[start:end]`` replaced, then ``comment`` ending the line of ``comment_at`` (default:
    the end of the replacement) in place of any comment there."""
    spliced = SourceText(text[:start] + replacement + text[end:])
    at = comment_at if comment_at >= 0 else start + len(replacement)
    line = spliced.position(at)[0]
    line_end = spliced.line_ends[line - 1]
    comment_start = spliced.comment_on(line)
    code_end = line_end if comment_start is None else comment_start
    while code_end > at and spliced.text[code_end - 1] in " \t":
        code_end -= 1
    return spliced.text[:code_end] + f"  {comment}" + spliced.text[line_end:]


# Reading the result back -------------------------------------------------------------------


def _load(text: str) -> Any:
    """The data ``text`` holds, read as ``validate`` reads it; a file it refuses is refused here."""
    data, problems = load_yaml(text.encode(), "-")
    if problems:
        problem = problems[0]
        detail = f": {problem.detail}" if problem.detail else ""
        raise EditRefused(f"the file does not load ({problem.kind} at line {problem.loc[1]}{detail})")
    return data


def _check(before: Any, new_text: str, section: str, expected: dict[str, str]) -> None:
    """The new text must read as the old data with ``section`` holding ``expected`` — and
    nothing else changed."""
    after, problems = load_yaml(new_text.encode(), "-")
    plain_before = _plain(before) if unwrap(before) is not None else {}
    wanted = dict(plain_before)
    old_section = plain_before.get(section)
    wanted[section] = {**(old_section if isinstance(old_section, dict) else {}), **_plain(expected)}
    if problems or _plain(after) != wanted:
        raise EditRefused("the edit would change more than the entry")


def _plain(value: Any) -> Any:
    """A loaded value without positions, each scalar with its type, for comparison."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    value = unwrap(value)
    return (type(value).__name__, value) if not isinstance(value, str) else ("str", str(value))
