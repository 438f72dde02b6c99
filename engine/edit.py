"""Comment-preserving edits of a manifest file: set one entry, or add a section.

An edit must leave every other byte of the file as it was — comments, blank lines, quoting,
order, indentation. ruamel.yaml's round-trip loader finds the entry and, after the edit, reads the
new text back to check it: the entry holds the new value, the comment sits on its line, and
nothing else in the document changed. The change itself is spliced into the text at the
positions the parser reports, because a round-trip *dump* re-indents and re-wraps whatever it
does not recognise exactly.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class EditRefused(Exception):
    """The edit cannot be made safely; nothing was changed."""


def _round_trip(text: str) -> Any:
    loader = YAML(typ="rt")
    loader.preserve_quotes = True
    try:
        return loader.load(io.StringIO(text))
    except YAMLError as err:
        raise EditRefused(f"the file does not parse: {str(err).splitlines()[0]}") from None


def set_entry(text: str, section: str, key: str, value: str, comment: str) -> str:
    """``text`` with ``section.key`` set to ``value`` (an existing entry keeps its quote style)
    and ``comment`` ending its line; a missing entry is added at the end of the section."""
    document: Any = _round_trip(text)
    mapping: Any = document.get(section) if isinstance(document, dict) else None
    if isinstance(mapping, CommentedMap) and key in mapping:
        line, column = mapping.lc.value(key)
        new_text = _replace_scalar(text, line, column, value, comment)
    elif isinstance(mapping, CommentedMap) and mapping:
        new_text = _add_to_mapping(text, mapping, key, value, comment)
    elif isinstance(document, CommentedMap) and section in document and mapping is None:
        key_line = document.lc.key(section)[0]
        new_text = _insert_lines(text, key_line + 1, [f"  {key}: {value}  {comment}"])
    else:
        raise EditRefused(f"`{section}` is not a block mapping this edit can extend")
    _check(text, new_text, section, {key: value}, {key: comment})
    return new_text


def add_section(text: str, section: str, entries: list[tuple[str, str]], comments: dict[str, str]) -> str:
    """``text`` with a new top-level block mapping ``section`` appended."""
    document = _round_trip(text)
    if document is not None and not isinstance(document, dict):
        raise EditRefused("the file is not a mapping")
    if isinstance(document, dict) and section in document:
        raise EditRefused(f"the file has a `{section}` key already")
    lines = [f"{section}:"]
    lines += [f"  {key}: {value}" + (f"  {comments[key]}" if key in comments else "") for key, value in entries]
    prefix = text if text.endswith("\n") or not text else text + "\n"
    new_text = prefix + "\n".join(lines) + "\n"
    _check(text, new_text, section, dict(entries), comments)
    return new_text


def _replace_scalar(text: str, line: int, column: int, value: str, comment: str) -> str:
    event = _scalar_at(text, line, column)
    start, end = event.start_mark.index, event.end_mark.index
    if event.end_mark.line != line:
        raise EditRefused("the entry's value spans several lines")
    quote = text[start] if text[start] in "'\"" else ""
    new_value = f"{quote}{value}{quote}"
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    # What follows the value on its line (`}` of a flow mapping, say) stays; a comment ending
    # the line is replaced by the new one. (Should a quoted string there hold " #", the check
    # after the edit refuses it.)
    code = re.split(r"[ \t]#", text[end:line_end], maxsplit=1)[0]
    if code.lstrip().startswith("#"):
        code = ""
    return text[:start] + new_value + code.rstrip(" \t") + f"  {comment}" + text[line_end:]


def _scalar_at(text: str, line: int, column: int) -> Any:
    events: Iterator[Any] = yaml.parse(text, Loader=yaml.CSafeLoader)
    for event in events:
        mark = event.start_mark
        if isinstance(event, yaml.ScalarEvent) and mark.line == line and mark.column == column:
            return event
    raise EditRefused("the entry's value is not a plain value")


def _add_to_mapping(text: str, mapping: Any, key: str, value: str, comment: str) -> str:
    if mapping.fa.flow_style():
        raise EditRefused("the section is written in flow style (`{...}`)")
    last_key = list(mapping)[-1]
    key_column = mapping.lc.key(last_key)[1]
    value_node = mapping[last_key]
    if isinstance(value_node, dict | list):
        raise EditRefused("the section's last entry is not a plain value")
    event = _scalar_at(text, *mapping.lc.value(last_key))
    after = event.end_mark.line + 1
    return _insert_lines(text, after, [" " * key_column + f"{key}: {value}  {comment}"])


def _insert_lines(text: str, line: int, new_lines: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n") and line >= len(lines):
        lines[-1] += "\n"
    lines[line:line] = [item + "\n" for item in new_lines]
    return "".join(lines)


def _check(old_text: str, new_text: str, section: str, expected: dict[str, str], comments: dict[str, str]) -> None:
    """Read the edited text back: the section holds the new values, everything else is as it
    was, and each comment stands on its entry's line."""
    before, after = _round_trip(old_text), _round_trip(new_text)
    plain_before = _plain(before) or {}
    plain_after = _plain(after)
    wanted = dict(plain_before)
    wanted[section] = {**(plain_before.get(section) or {}), **expected}
    if plain_after != wanted:
        raise EditRefused("the edit would change more than the entry")
    for key, comment in comments.items():
        line = after[section].lc.key(key)[0]
        if not re.search(re.escape(comment) + r"\s*$", new_text.splitlines()[line]):
            raise EditRefused("the comment did not land on the entry's line")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value
