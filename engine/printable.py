"""Text from a manifest, made safe to print on one line.

A name or value may hold a line break (``"x\nbeeuni.yaml:9:9: error[…] forged"``), a terminal
control sequence (``\x1b[2J``), a NUL or an invisible character that reorders the text around
it. Printed raw, it would forge diagnostic lines, split a message or drive the terminal. Every
place that prints such text — the runtime making a diagnostic, the report writers — passes it
through ``printable``, which writes those characters as escapes (``\n``, ``\x1b``, ``\u2028``).
A backslash itself stays as it is: paths and patterns keep their looks.
"""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional controls
_INVISIBLE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
#: what JSON leaves raw of those (it escapes C0 itself; a raw line break in its text is layout)
_RAW_IN_JSON = "[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    named = _NAMED.get(character)
    if named is not None:
        return named
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control and invisible formatting character escaped."""
    # Every character escaped is one Python does not count as printable (categories Cc, Cf, Zl,
    # Zp): most texts are printable throughout, and that test needs no regular expression.
    if text.isprintable():
        return text
    return re.sub(_INVISIBLE, _escape, text)


def printable_json(document: str) -> str:
    """A JSON text with the characters JSON leaves raw (C1 controls, separators, bidirectional
    controls) written as ``\\uXXXX`` escapes — the same data, safe on a terminal."""
    return re.sub(_RAW_IN_JSON, lambda match: f"\\u{ord(match.group()):04x}", document)
