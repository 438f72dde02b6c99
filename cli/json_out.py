"""JSON as ``json.dumps(document, indent=2, ensure_ascii=False)`` writes it, only faster.

With ``indent`` set, the standard library leaves its C encoder for a Python generator that yields
every bracket, comma and string on its own: most of the time of ``beeuni resolve --json`` on a
large project, whose document holds long lists of tool names. This writer produces the same text
from larger pieces — a list of strings is one ``join`` of C-encoded strings. Anything it does not
know (a key that is not a string, a value of another type) goes to the standard library, so the
text and the errors stay exactly the standard library's; a test compares the two on generated
documents.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

_INDENT = "  "


class _Unknown(Exception):
    """A value this writer leaves to the standard library."""


def dumps(document: Any) -> str:
    try:
        return _text(document, "\n")
    except _Unknown:
        return json.dumps(document, indent=2, ensure_ascii=False)


def _text(value: Any, newline: str) -> str:
    """``value``'s text; ``newline`` is a line break and the current indentation. Each list
    and map is one ``join`` of its items' texts."""
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = newline + _INDENT
        keys = _KEYS
        entries = [
            (keys.get(key) or _key(key)) + (encode_basestring(item) if item.__class__ is str else _text(item, inner))
            for key, item in value.items()
        ]
        return "{" + inner + ("," + inner).join(entries) + newline + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = newline + _INDENT
        if all(issubclass(kind, str) for kind in set(map(type, value))):  # names: the bulk of a document
            items = map(encode_basestring, value)
        else:
            items = (_text(item, inner) for item in value)  # type: ignore[assignment]
        return "[" + inner + ("," + inner).join(items) + newline + "]"
    return _scalar(value)


_KEYS: dict[str, str] = {}  # a key's text with its separator: the same few keys repeat in every record


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise _Unknown()  # the standard library turns numbers, booleans and null into keys
    text = _KEYS[key] = encode_basestring(key) + ": "
    return text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return float.__repr__(value)
    raise _Unknown()  # NaN, infinities, other types: as the standard library does them
