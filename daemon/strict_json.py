"""A call's arguments as strict JSON: what a JSON parser of any other language would accept.

Python's ``json`` also reads ``NaN``, ``Infinity`` and ``-Infinity`` (and turns ``1e999`` into
infinity), which no JavaScript host can take back; and it parses nesting by recursion, so a
body nested a few thousand levels deep ends in ``RecursionError``. Both are refused here, the
depth before the body is parsed, by a scan that does not recurse.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: how deep a call's arguments may nest (objects and arrays; `{"a": [1]}` is 2 deep)
MAX_DEPTH = 64

#: what the depth scan steps over: a string (its brackets are text), or one bracket
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")


class NotStrict(ValueError):
    """The body holds a number JSON does not have (``NaN``, ``Infinity``, one that overflows)."""

    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


class TooDeep(ValueError):
    """The body nests deeper than the limit."""


def parse(body: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``body``. Raises ``TooDeep``, ``NotStrict``, or ``ValueError`` (not
    JSON, or not UTF-8) with the parser's reason."""
    if depth_exceeds(body, max_depth):
        raise TooDeep()
    return json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)


def depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether ``body`` opens more than ``limit`` objects or arrays inside each other. A body
    with fewer brackets than that cannot (the common case, counted in C); otherwise the
    brackets outside strings are counted."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for token in _TOKEN.finditer(body):
        first = token.group()[0]
        if first in _OPENING:
            depth += 1
            if depth > limit:
                return True
        elif first != 0x22:  # a closing bracket (a string starts with `"`)
            depth -= 1
    return False


def _refuse_constant(literal: str) -> Any:
    raise NotStrict(literal)


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise NotStrict(literal)
    return number
