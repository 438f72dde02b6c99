"""Patterns simple enough to be matched without RE2: a few character sets at the start of a text.

Most of the rules' patterns check what a name is made of, or how a path starts: ``^[0-9]+$``,
``^([A-Z]:)?/``. RE2 answers each text in a call that costs
more than reading the text in Python — and a large manifest asks thousands of names — and
importing RE2 costs more than checking a small manifest. ``simple(pattern)`` is a function that
answers what RE2's search answers, for such a pattern; None for any other (RE2 matches those).

The patterns taken, in RE2's syntax: ``^``, items, and an optional ``$`` at the end. An item is a
character — a plain one, or an escaped punctuation sign (``\\/``) — or a class of them (``[a-z_]``:
single characters and ranges, not negated), with an optional count (``?``, ``*``, ``+``, ``{n}``,
``{n,}``, ``{m,n}`` up to RE2's 1000); or a group (``(…)``, ``(?:…)``) of items, optional (``?``)
or not. A group made optional gives two ways to match (at most ``_WAYS`` in all; and the items
take at most ``_SIZE`` characters together, in groups at most ``_DEPTH`` deep). In each way,
an item whose count varies is the last, or is followed by one that takes a character none of its
own (``^[a-z]+:``): the text is then read left to right once, with no choice to go
back on. Anything else — ``.``, ``|``, ``\\d``, a negated class, an
option, a lazy count — is not taken.

Only ASCII patterns: RE2 reads a text as UTF-8, and a set of ASCII characters holds no other
character, nor any byte of one (a lone surrogate's included), so reading the text's code points
gives the same answers. Every pattern taken is one RE2 compiles (a test checks the answers
against RE2's).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from collections.abc import Callable

    #: the characters an item takes (every one of them, ranges spelled out), its fewest and most repeats
    Item = tuple[str, int, int]

#: the most ways to match a pattern may have (each optional group doubles them), the most
#: characters its items may take together (counted once for `*` and `+`) and the deepest its
#: groups may nest: well inside what RE2 compiles (its program has a size limit)
_WAYS, _SIZE, _DEPTH = 8, 1000, 8
#: RE2's largest repetition count; "many" for `*` and `+`
_MOST, _MANY = 1000, 1 << 62
#: what is not a plain character outside a class
_SPECIAL = frozenset("\\.+*?()|[]{}^$")
#: the counts written as one sign
_SIGNS = {"?": (0, 1), "*": (0, _MANY), "+": (1, _MANY)}


class _NotSimple(Exception):
    pass


def _number(text: str) -> bool:
    """Whether ``text`` is a repetition count as RE2 reads one: digits, no leading zero."""
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


def simple(pattern: str) -> Callable[[str], bool] | None:
    """Whether ``pattern`` matches somewhere in a text, as a function of the text; None for a
    pattern this module does not take."""
    if not pattern.startswith("^") or not pattern.isascii():
        return None
    try:
        reader = _Reader(pattern)
        ways = reader.items(top=True)
    except _NotSimple:
        return None
    if not _forced(ways):
        return None  # where a count that varies ends could need a second try
    tests = [_way(way, reader.to_end) for way in ways]
    if len(tests) == 1:
        return tests[0]

    def any_way(text: str) -> bool:
        for test in tests:  # noqa: SIM110  (`any` of a generator: a frame more per text)
            if test(text):
                return True
        return False

    return any_way


def _way(items: list[Item], to_end: bool) -> Callable[[str], bool]:
    """One way to match, as a function of the text: the items from its start, then its end if
    ``to_end``. An item that repeats a fixed number of times takes that many characters; one
    whose count varies takes every character of its set that follows (``_forced``), or, last
    and not to the end, the fewest it may. (``part.strip(chars)`` is empty exactly when every
    character of ``part`` is one of ``chars``.)"""
    steps = [(chars, lowest, most, index == len(items) - 1) for index, (chars, lowest, most) in enumerate(items)]

    def matches(text: str) -> bool:
        at, size = 0, len(text)
        for chars, lowest, most, last in steps:
            if lowest == most:
                if lowest == 1:
                    if at == size or text[at] not in chars:
                        return False
                elif text[at : at + lowest].strip(chars) or size - at < lowest:
                    return False
                at += lowest
            elif last and not to_end:
                return size - at >= lowest and not text[at : at + lowest].strip(chars)
            else:
                run = size - at - len(text[at:].lstrip(chars))
                if not lowest <= run <= most:
                    return False
                at += run
        return at == size or not to_end

    return matches


def _forced(ways: list[list[Item]]) -> bool:
    """Whether every item whose count varies, but the last, is followed by one that takes at
    least one character, none of them of its set: where it ends is then where its characters
    end, and the text is read once, with no choice to go back on."""
    for way in ways:
        for index in range(len(way) - 1):
            (chars, lowest, most), (after, fewest, _) = way[index], way[index + 1]
            if lowest != most and (fewest < 1 or not set(chars).isdisjoint(after)):
                return False
    return True


class _Reader:
    """Reads a pattern (after its ``^``) into the ways it can match, each a list of items."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 1
        self.to_end = False
        self.size = 0  # what the items read so far take, at most (``_SIZE``)

    def peek(self) -> str:
        return self.text[self.at : self.at + 1]

    def take(self) -> str:
        char = self.peek()
        if not char:
            raise _NotSimple
        self.at += 1
        return char

    def items(self, top: bool, depth: int = 0) -> list[list[Item]]:
        if depth > _DEPTH:
            raise _NotSimple
        ways: list[list[Item]] = [[]]
        while self.peek() and self.peek() != ")":
            char = self.take()
            if char == "$" and top and not self.peek():
                self.to_end = True
                break
            if char == "(":
                if self.peek() == "?":
                    self.take()
                    if self.take() != ":":
                        raise _NotSimple  # a named group, an option, a lookaround: RE2's to read
                inner = self.items(top=False, depth=depth + 1)
                if self.take() != ")":
                    raise _NotSimple
                lowest, most = self.count()
                if (lowest, most) == (1, 1):
                    ways = [way + more for way in ways for more in inner]
                elif (lowest, most) == (0, 1):
                    ways = [way + more for way in ways for more in [*inner, []]]
                else:
                    raise _NotSimple
            else:
                chars = self.character_class() if char == "[" else self.character(char)
                lowest, most = self.count()
                ways = [[*way, (chars, lowest, most)] for way in ways]
                self.size += most if most != _MANY else max(lowest, 1)
            if len(ways) > _WAYS or self.size > _SIZE:
                raise _NotSimple
        if top and self.peek():
            raise _NotSimple  # a `)` without its `(`
        return ways

    def character(self, char: str) -> str:
        if char == "\\":
            escaped = self.take()
            if escaped.isalnum() or not escaped.isprintable():
                raise _NotSimple  # `\d`, `\b`, `\x41`, …
            return escaped
        if char in _SPECIAL:
            raise _NotSimple
        return char

    def character_class(self) -> str:
        chars: list[str] = []
        if self.peek() in ("^", "]", ""):
            raise _NotSimple  # negated, or a `]` that stands for itself
        while (char := self.take()) != "]":
            if char == "[":
                raise _NotSimple  # `[[:alpha:]]`
            if char == "\\":
                char = self.character(char)
            if self.peek() == "-" and self.text[self.at + 1 : self.at + 2] not in ("]", ""):
                self.take()
                end = self.take()
                if end in ("\\", "["):
                    raise _NotSimple
                if ord(end) < ord(char):
                    raise _NotSimple  # RE2 refuses a range backwards
                chars.extend(chr(code) for code in range(ord(char), ord(end) + 1))
            else:
                chars.append(char)
        return "".join(dict.fromkeys(chars))

    def count(self) -> tuple[int, int]:
        sign = self.peek()
        if sign in _SIGNS:
            self.take()
            found = _SIGNS[sign]
        elif sign == "{":
            end = self.text.find("}", self.at)
            lowest, comma, most = self.text[self.at + 1 : end].partition(",")
            if end < 0 or not _number(lowest) or (most and not _number(most)):
                raise _NotSimple  # (RE2 reads `{x}`, `{,2}` or `{01}` as the characters themselves)
            found = (int(lowest), int(most) if most else _MANY if comma else int(lowest))
            if found[0] > _MOST or (found[1] != _MANY and found[1] > _MOST) or found[0] > found[1]:
                raise _NotSimple  # RE2 refuses it: RE2 says why
            self.at = end + 1
        else:
            return (1, 1)
        if self.peek() in ("?", "*", "+", "{"):
            raise _NotSimple  # a lazy count, or a count of a count
        return found
