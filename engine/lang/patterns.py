"""The rules' regular expressions: RE2 syntax, matched in time linear in the text.

Python's ``re`` backtracks, so ``matches(x, "(a+)+$")`` on a long manifest value would run for
ages. RE2 (the ``google-re2`` package) never backtracks: every match takes time linear in the
text, and every compiled pattern at most ``_MEMORY`` bytes. What that costs is backreferences
and lookaround, which RE2 does not have; a pattern that uses them is refused with a message
saying so (``problem``), by ``rules check`` at the pattern's literal, and at run time at the
expression that built the pattern.

RE2 is imported on the first pattern compiled, not before, and each pattern is compiled once
per process (the last ``_KEPT`` of them are kept).

``compiled`` serves ``matches``, the hot path (``Matcher``): it calls RE2's own ``Match`` on UTF-8
bytes, without capture groups, which is five times faster than the ``re``-like wrapper the
package also has, and remembers the answer for a short text. ``groups`` tells the groups of a
pattern, and ``regex`` gives that wrapper (match objects with groups and positions), for the
engine's other patterns from the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any, Protocol

    class Regex(Protocol):
        """What the engine uses of RE2's ``re``-like pattern object (its match objects are
        ``re``'s, except that ``start``/``end``/``span`` take a group's number, not its name)."""

        @property
        def groups(self) -> int: ...

        @property
        def groupindex(self) -> Mapping[str, int]: ...

        def search(self, text: str) -> Any: ...

        def match(self, text: str) -> Any: ...

        def finditer(self, text: str) -> Iterator[Any]: ...


#: the bytes one compiled pattern may take (RE2's ``max_mem``: its program and its DFA cache)
_MEMORY = 1 << 21
#: how many compiled patterns a process keeps
_KEPT = 128
#: what the rules' regular expressions are, for a message about one RE2 refuses
SYNTAX = (
    "the rules' regular expressions are RE2's, matched in time linear in the text: "
    "no backreferences, no lookaround, repetition counts up to 1000"
)
#: RE2's complaint (its start) → what the pattern used that RE2 does not have
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead `(?=…)`"),
    ("invalid perl operator: (?!", "negative lookahead `(?!…)`"),
    ("invalid perl operator: (?<=", "lookbehind `(?<=…)`"),
    ("invalid perl operator: (?<!", "negative lookbehind `(?<!…)`"),
    ("invalid perl operator: (?#", "a comment `(?#…)`"),
    ("invalid perl operator: (?x", "the verbose flag `(?x)`"),
    ("invalid escape sequence: \\Z", "`\\Z` (write `\\z` for the end of the text)"),
    ("invalid repetition size", "a repetition count above 1000"),
)


class PatternError(Exception):
    """A pattern RE2 does not take; the message says why, in the rules' words."""


def problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression of the rules; None when it is one: RE2's
    verdict (``rules check`` says it where it is written)."""
    try:
        _compile(pattern, capture=False)
    except PatternError as err:
        return str(err)
    return None


def compiled(pattern: str) -> Matcher:
    """``pattern`` compiled for ``matches`` (once per process: the last ``_KEPT`` are kept)."""
    found = MATCHERS.get(pattern)
    if found is None:
        if len(MATCHERS) >= _KEPT:
            MATCHERS.clear()
        found = MATCHERS[pattern] = Matcher(pattern)
    return found


class Matcher:
    """A pattern compiled for a yes or no, and the answers RE2 gave for short texts: the rules
    test the same names and paths many times over (the last ``_ANSWERS`` of them are kept)."""

    __slots__ = ("answers", "anywhere", "match", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        #: text → whether the pattern matches somewhere in it
        self.answers: dict[str, bool] = {}
        compiled = _compile(pattern, capture=False)  # a yes or no needs no groups: RE2 can use its DFA alone
        self.match, self.anywhere = compiled.Match, _extension().RE2.Anchor.UNANCHORED

    def matches(self, text: str) -> bool:
        found = self.answers.get(text)
        return self.answer(text) if found is None else found

    def answer(self, text: str) -> bool:
        """``matches`` for a text not in ``answers``."""
        data = text.encode("utf-8", "surrogatepass")  # YAML can hold a lone surrogate
        found: bool = self.match(self.anywhere, data, 0, len(data))[0] != _NOWHERE
        if len(text) <= _SHORT:
            answers = self.answers
            if len(answers) >= _ANSWERS:
                answers.clear()
            answers[text] = found
        return found


#: the compiled patterns
MATCHERS: dict[str, Matcher] = {}
#: the texts whose answers a pattern keeps: at most this many, of at most this many characters
_ANSWERS, _SHORT = 65_536, 256
#: what RE2's ``Match`` gives for no match
_NOWHERE = (-1, -1)


def groups(pattern: str) -> tuple[int, dict[str, int]]:
    """How many groups ``pattern`` has, and the number of each named one by its name (what
    ``regex(pattern)`` tells as ``groups`` and ``groupindex``, without its wrapper)."""
    found = KNOWN.get(pattern)
    if found is None:
        compiled = _compile(pattern, capture=True)
        named = {name.decode("utf-8", "surrogatepass"): number for name, number in compiled.NamedCapturingGroups()}
        if len(KNOWN) >= _KEPT:
            KNOWN.clear()
        found = KNOWN[pattern] = (compiled.NumberOfCapturingGroups(), named)
    return found


#: the patterns known to compile, with their groups (``groups``)
KNOWN: dict[str, tuple[int, dict[str, int]]] = {}


def regex(pattern: str) -> Regex:
    """``pattern`` as RE2's ``re``-like pattern object (``search``, ``finditer``, ``groups``)."""
    found = REGEXES.get(pattern)
    if found is None:
        import re2  # type: ignore[import-untyped]

        try:
            found = re2.compile(pattern, _options(capture=True))
        except re2.error as err:
            raise PatternError(_explain(pattern, err.args[0] if err.args else "")) from None
        if len(REGEXES) >= _KEPT:
            REGEXES.clear()
        REGEXES[pattern] = found
    return found


#: the patterns compiled by ``regex``
REGEXES: dict[str, Regex] = {}


def _compile(pattern: str, capture: bool) -> Any:
    """RE2's own compiled ``pattern`` (``re2._re2.RE2``), or a ``PatternError``."""
    # (YAML can hold a lone surrogate: it must not stop a match)
    compiled = _extension().RE2(pattern.encode("utf-8", "surrogatepass"), _options(capture))
    if not compiled.ok():
        raise PatternError(_explain(pattern, compiled.error()))
    return compiled


def _extension() -> Any:
    from re2 import _re2

    return _re2


def _options(capture: bool) -> Any:
    options = _extension().RE2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on the standard error
    options.max_mem = _MEMORY
    options.never_capture = not capture
    return options


def _explain(pattern: str, complaint: bytes | str) -> str:
    reason = complaint.decode("utf-8", "replace") if isinstance(complaint, bytes) else complaint
    what = next((what for start, what in _UNSUPPORTED if reason.startswith(start)), None)
    if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
        what = f"a backreference `{reason.rsplit(' ', 1)[-1]}`"
    elif reason.startswith("invalid perl operator: (?P") and "(?P=" in pattern:
        what = "a backreference `(?P=name)`"
    if what is not None:
        return f"regular expression `{pattern}` uses {what}, which RE2 does not have ({SYNTAX})"
    if reason.startswith("pattern too large"):
        return f"regular expression `{pattern}` is too large (its program takes more than {_MEMORY >> 20} MB)"
    what, _, fragment = reason.partition(": ")  # RE2 says `missing ]: [a-z`
    return f"regular expression `{pattern}` does not compile: {what}" + (f" at `{fragment}`" if fragment else "")
