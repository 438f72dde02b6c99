"""A call's arguments as strict JSON: what a JSON parser of any other language would accept,
and every number as the module will read it.

Python's ``json`` also reads ``NaN``, ``Infinity`` and ``-Infinity`` (and turns ``1e999`` into
infinity), which no JavaScript host can take back; and it parses nesting by recursion, so a
body nested a few thousand levels deep ends in ``RecursionError``. Both are refused here, the
depth before the body is parsed, by a scan that does not recurse.

Python's integers have no bound, but a JSON Schema number reaches the module as a JavaScript
number, a double: an integer literal a double cannot hold exactly (``9007199254740993``, a
400-digit one that JavaScript reads as ``Infinity``) would be checked against the schema as one
value and run as another, so it is refused (``Inexact``).
"""

from __future__ import annotations

import json
import math
import operator
import re
from itertools import accumulate, repeat
from typing import Any

#: how deep a call's arguments may nest (objects and arrays; `{"a": [1]}` is 2 deep)
MAX_DEPTH = 64

#: every integer of at most this magnitude is a double exactly
_EXACT = 2**53
#: characters of a refused integer shown in the refusal
SHOWN_DIGITS = 24
#: characters of the longest integer literal a double can hold (a minus sign and 309 digits)
_LONGEST_INTEGER = 310

#: a JSON string (its brackets are text), as a loop-unrolled pattern: fast on a long one
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
#: an opening bracket as 2, a closing one as 0: each minus one is the step in depth
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


class NotStrict(ValueError):
    """The body holds a number JSON does not have (``NaN``, ``Infinity``, one that overflows)."""

    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


class Inexact(NotStrict):
    """The body holds an integer literal that a double cannot hold exactly."""

    @property
    def shown(self) -> str:
        """The literal, its beginning only when it is long."""
        return self.literal if len(self.literal) <= SHOWN_DIGITS else self.literal[:SHOWN_DIGITS] + "…"

    @property
    def digits(self) -> int:
        return len(self.literal.lstrip("-"))


class TooDeep(ValueError):
    """The body nests deeper than the limit."""


def parse(body: bytes) -> Any:
    """The JSON value of ``body``. Raises ``TooDeep``, ``NotStrict`` (``Inexact`` for an
    integer), or ``ValueError`` (not JSON, or not UTF-8) with the parser's reason."""
    if depth_exceeds(body, MAX_DEPTH):
        raise TooDeep()
    try:
        return json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_exact_int)
    except RecursionError:  # brackets the scan could not see as such (in a string left open)
        raise TooDeep() from None


def depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether ``body`` opens more than ``limit`` objects or arrays inside each other. A body
    with fewer brackets than that cannot (the common case); otherwise the depth is the largest
    running sum of the brackets outside strings — worked out in C (a regular expression, byte
    translations, ``accumulate``), never a Python loop per bracket."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    steps = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS).translate(_STEPS)
    return max(accumulate(map(operator.sub, steps, repeat(1))), default=0) > limit


def _refuse_constant(literal: str) -> Any:
    raise NotStrict(literal)


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise NotStrict(literal)
    return number


def _exact_int(literal: str) -> int:
    """The integer ``literal`` (JSON has no leading zeros), when a double holds it exactly; a longer
    literal than any double's is refused before Python converts it."""
    if len(literal) > _LONGEST_INTEGER:
        raise Inexact(literal)
    number = int(literal)
    if -_EXACT <= number <= _EXACT:
        return number
    try:
        exact = int(float(number)) == number
    except OverflowError:
        exact = False
    if not exact:
        raise Inexact(literal)
    return number
