"""A manifest file's text as the YAML parser sees it: lines, positions and comments, and the
file's encoding to write an edited text back in.

The file may be UTF-8 or UTF-16, with or without a byte order mark; the text has no mark, and
``encode`` puts the file's own back. A file that is no text refuses an edit here already
(``EditRefused``, the refusal of every edit: ``edit/entries.py``).

Diagnostics carry 1-based lines and columns that libyaml counted: in characters (code points),
with ``\\r\\n``, ``\\r``, ``\\n``, NEL, LS and PS as line breaks. Suppressions and fixes turn those
positions into offsets of the text and back, so they count the same way here — never with
``str.splitlines``, which knows more line breaks than YAML does.

A ``#`` is a comment when it stands outside every token of the file (a ``#`` in a quoted string,
a plain ``a#b`` or a block scalar is text); the tokens are read only when a candidate is asked
about.
"""

from __future__ import annotations

import codecs
import re
from functools import cached_property

from yaml import CSafeLoader, YAMLError, scan

#: YAML's line breaks
LINE_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


class EditRefused(Exception):
    """The edit cannot be made safely; nothing was changed."""


class SourceText:
    """``text`` is the file's text without a byte order mark (libyaml does not count it);
    ``encode`` turns an edited text back into bytes in the file's encoding, mark and all."""

    def __init__(self, text: str, bom: bytes = b"", encoding: str = "utf-8") -> None:
        self.text = text
        self.bom = bom
        self.encoding = encoding

    @classmethod
    def read(cls, data: bytes) -> SourceText:
        """The text of a file's bytes; ``EditRefused`` when they are not text."""
        bom, encoding = b"", "utf-8"
        for mark, name in _BOMS:
            if data.startswith(mark):
                bom, encoding = mark, name
                break
        try:
            return cls(data[len(bom) :].decode(encoding), bom, encoding)
        except UnicodeDecodeError as err:
            raise EditRefused(f"the file is not valid {encoding.upper()} (byte {err.start + len(bom)})") from None

    @classmethod
    def decode(cls, data: bytes) -> SourceText | None:
        """``read``, or None when the bytes are not text."""
        try:
            return cls.read(data)
        except EditRefused:
            return None

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding)

    @cached_property
    def _lines(self) -> tuple[list[int], list[int]]:
        """Where each line starts, and where its break starts (read on first use: most files are
        never asked)."""
        starts, ends = [0], []
        for found in LINE_BREAKS.finditer(self.text):
            ends.append(found.start())
            starts.append(found.end())
        ends.append(len(self.text))
        return starts, ends

    @property
    def line_starts(self) -> list[int]:
        return self._lines[0]

    @property
    def line_ends(self) -> list[int]:
        """Where each line's break starts (its end without it)."""
        return self._lines[1]

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def offset(self, line: int, column: int) -> int:
        """The text offset of a 1-based (line, column)."""
        return self.line_starts[line - 1] + column - 1

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of a text offset."""
        from bisect import bisect_right  # (here: a run that finds no suppression asks no position)

        starts = self.line_starts
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def line(self, line: int) -> str:
        """A 1-based line's text, without its line break."""
        return self.text[self.line_starts[line - 1] : self.line_ends[line - 1]]

    def line_break(self) -> str:
        """The file's own line break (its first one), for lines added to it."""
        found = LINE_BREAKS.search(self.text)
        return found.group() if found else "\n"

    def is_comment(self, offset: int) -> bool:
        """Whether the ``#`` at ``offset`` starts a comment."""
        if self.text[offset : offset + 1] != "#":
            return False
        if offset > 0 and self.text[offset - 1] not in " \t\r\n\x85\u2028\u2029":
            return False
        from bisect import bisect_right

        spans = self._tokens
        index = bisect_right(spans, (offset, len(self.text) + 1)) - 1
        return index < 0 or spans[index][1] <= offset

    def comment_on(self, line: int) -> int | None:
        """The offset of the comment ending a 1-based line, or None."""
        start = self.line_starts[line - 1]
        text = self.line(line)
        at = text.find("#")
        while at >= 0:
            if self.is_comment(start + at):
                return start + at
            at = text.find("#", at + 1)
        return None

    @cached_property
    def _tokens(self) -> list[tuple[int, int]]:
        """The (start, end) offsets of every token that can hold a ``#``, in order."""
        spans: list[tuple[int, int]] = []
        try:
            for token in scan(self.text, Loader=CSafeLoader):
                start, end = token.start_mark.index, token.end_mark.index
                if end > start:
                    spans.append((start, end))
        except YAMLError:
            pass  # a file that does not scan has no comments the engine relies on
        return spans
