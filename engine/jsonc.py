"""Read a JSON file with comments (JSONC, as opencode reads its configuration) into located values.

The rules read a few JSON files of the repository beside the manifest (which ones is theirs to
say: ``JSON_FILES``), and report at a key or value of them as they do in the manifest, so the
values carry their file, line and column (``yaml/located.py``). Python's ``json`` gives no
positions; this small reader does, and accepts what opencode's reader accepts on top of JSON:
``//`` and ``/* */`` comments and a trailing comma. A key given twice keeps the last value, as
``JSON.parse`` does. Nesting deeper than ``MAX_DEPTH`` and files over ``MAX_FILE_BYTES`` are
refused, so that a hostile file cannot make a run exhaust the stack or the heap.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .yaml.loader import MAX_DEPTH, MAX_FILE_BYTES
from .yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr

if TYPE_CHECKING:
    from typing import Any

    from .yaml.located import Loc

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WORDS = {"true": True, "false": False, "null": None}
_NUMBER_CHARACTERS = frozenset("0123456789+-.eE")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_WORD = re.compile(r"[A-Za-z_$][\w$]{0,40}")


class JsonProblem(Exception):
    """Why the text is not JSON with comments, and where (``loc``)."""

    def __init__(self, detail: str, loc: Loc) -> None:
        super().__init__(detail)
        self.detail = detail
        self.loc = loc


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.at = 0
        self.line = 1
        self.line_start = 0

    def loc(self) -> Loc:
        return (self.path, self.line, self.at - self.line_start + 1)

    def fail(self, detail: str) -> JsonProblem:
        return JsonProblem(detail, self.loc())

    def advance(self, count: int = 1) -> None:
        text = self.text
        for _ in range(count):
            character = text[self.at]
            self.at += 1
            if character == "\n" or (character == "\r" and text[self.at : self.at + 1] != "\n"):
                self.line += 1
                self.line_start = self.at

    def skip_blank(self) -> None:
        """Spaces, line ends and comments."""
        text = self.text
        while self.at < len(text):
            character = text[self.at]
            if character in " \t\r\n\ufeff":
                self.advance()
            elif text.startswith("//", self.at):
                while self.at < len(text) and text[self.at] not in "\r\n":
                    self.advance()
            elif text.startswith("/*", self.at):
                start = self.loc()
                end = text.find("*/", self.at + 2)
                if end < 0:
                    raise JsonProblem("a `/*` comment is never closed", start)
                self.advance(end + 2 - self.at)
            else:
                return

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def value(self, depth: int) -> Any:
        self.skip_blank()
        character = self.peek()
        loc = self.loc()
        if character == "{":
            return self.collection(depth, "}", loc)
        if character == "[":
            return self.collection(depth, "]", loc)
        if character == '"':
            return LocatedStr(self.string(), loc)
        if character and (character.isdigit() or character == "-"):
            return self.number(loc)
        for word, meaning in _WORDS.items():
            if self.text.startswith(word, self.at):
                self.advance(len(word))
                return LocatedConst(meaning, loc)
        if not character:
            raise self.fail("the end of the file where a value belongs")
        found = _WORD.match(self.text, self.at)
        shown = found.group() if found else character
        raise self.fail(f"`{shown}` where a value belongs (a string is written in double quotes)")

    def collection(self, depth: int, closing: str, loc: Loc) -> Any:
        if depth >= MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        self.advance()  # the opening bracket
        items: list[Any] = []
        entries: dict[Any, Any] = {}
        while True:
            self.skip_blank()
            if self.peek() == closing:
                self.advance()
                break
            if closing == "}":
                if self.peek() != '"':
                    raise self.fail("a key (a string in double quotes) or `}` expected")
                key = LocatedStr(self.string(), self.loc_of_last_string)
                self.skip_blank()
                if self.peek() != ":":
                    raise self.fail("`:` expected after a key")
                self.advance()
                entries.pop(key, None)  # the last one wins, with its own position
                entries[key] = self.value(depth + 1)
            else:
                items.append(self.value(depth + 1))
            self.skip_blank()
            if self.peek() == ",":
                self.advance()
            elif self.peek() != closing:
                raise self.fail(f"`,` or `{closing}` expected")
        return LocatedMap(entries, loc) if closing == "}" else LocatedList(items, loc)

    loc_of_last_string: Loc = ("", 0, 0)

    def string(self) -> str:
        self.loc_of_last_string = self.loc()
        self.advance()  # the opening quote
        text = self.text
        parts: list[str] = []
        while True:
            if self.at >= len(text):
                raise JsonProblem("a string is never closed", self.loc_of_last_string)
            character = text[self.at]
            if character == '"':
                self.advance()
                return "".join(parts)
            if character == "\\":
                escape = text[self.at + 1 : self.at + 2]
                if escape in _ESCAPES:
                    parts.append(_ESCAPES[escape])
                    self.advance(2)
                elif escape == "u" and _HEX4.fullmatch(text, self.at + 2, self.at + 6):
                    parts.append(chr(int(text[self.at + 2 : self.at + 6], 16)))
                    self.advance(6)
                else:
                    raise self.fail("an unknown escape in a string")
            elif character in "\r\n":
                raise self.fail("a line end inside a string")
            else:
                parts.append(character)
                self.advance()

    def number(self, loc: Loc) -> Any:
        start = self.at
        while self.peek() and self.peek() in _NUMBER_CHARACTERS:
            self.advance()
        written = self.text[start : self.at]
        try:
            if any(c in written for c in ".eE"):
                return LocatedFloat(float(written), loc)
            return LocatedInt(int(written), loc)
        except ValueError:
            raise JsonProblem(f"`{written}` is not a number", loc) from None


def load_jsonc(data: bytes, path: str) -> Any:
    """The located value of the JSON-with-comments file ``path`` (repo-relative) holding ``data``,
    or ``JsonProblem``."""
    if len(data) > MAX_FILE_BYTES:
        raise JsonProblem(f"the file is larger than {MAX_FILE_BYTES // 1024 // 1024} MiB", (path, 1, 1))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise JsonProblem("the file is not UTF-8", (path, 1, 1)) from err
    reader = _Reader(text, path)
    root = reader.value(0)
    reader.skip_blank()
    if reader.at < len(text):
        raise reader.fail("more after the end of the value")
    return root
