"""Suggestions ("did you mean"): the known name most like a mistyped one, in bounded time.

``difflib``'s ratio costs time quadratic in the names' length, and a manifest can ask for a
suggestion for each of thousands of unknown names among thousands of known ones. So a
suggestion is looked for only for names of sane length (``MAX_LENGTH``), and compared with at
most ``MAX_COMPARED`` candidates: a short list whole (exactly as ``difflib.get_close_matches``),
a long one by its names nearest in sorted order — forwards and backwards, so that a typo at
either end still finds its name. A list of candidates is sorted once and kept for the next
question about it.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

MAX_LENGTH = 100
MAX_COMPARED = 32
CUTOFF = 0.6
#: how many candidate lists are kept prepared
_KEPT = 32


class _Prepared:
    """The string candidates of sane length, and the same sorted by their text and by their
    reversed text."""

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.names = list(dict.fromkeys(item for item in items if isinstance(item, str) and len(item) <= MAX_LENGTH))
        self.forward = sorted(self.names)
        self.backward = sorted(name[::-1] for name in self.names)

    def nearest(self, name: str) -> list[str]:
        if len(self.names) <= MAX_COMPARED:
            return self.names
        side = MAX_COMPARED // 4
        at = bisect_left(self.forward, name)
        found = self.forward[max(at - side, 0) : at + side]
        at = bisect_left(self.backward, name[::-1])
        found += [reversed_name[::-1] for reversed_name in self.backward[max(at - side, 0) : at + side]]
        return list(dict.fromkeys(found))


_prepared: dict[tuple[Any, ...], _Prepared] = {}


def closest_name(name: str, candidates: Iterable[Any]) -> str | None:
    """The candidate most like ``name`` (a ratio of at least ``CUTOFF``), or ``None``.
    Candidates that are not strings are passed over."""
    if len(name) > MAX_LENGTH:
        return None
    found = difflib.get_close_matches(name, _prepare(candidates).nearest(name), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def _prepare(candidates: Iterable[Any]) -> _Prepared:
    items = tuple(candidates)
    try:
        return _prepared[items]
    except KeyError:
        pass
    except TypeError:  # a candidate that is a list or a mapping: not kept
        return _Prepared(items)
    if len(_prepared) >= _KEPT:
        _prepared.clear()
    found = _prepared[items] = _Prepared(items)
    return found


def suggest(name: str, known: list[str]) -> str:
    """``; did you mean `x`?`` for the closest of ``known``, or nothing."""
    found = closest_name(name, known)
    return f"; did you mean `{found}`?" if found else ""
