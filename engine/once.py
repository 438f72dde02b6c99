"""``once``: a function of no arguments whose value is made on its first call and then kept.

``functools.cache`` does the same, but importing ``functools`` imports ``collections`` too, a
tenth of a small run that may never call the function (a regular expression needed only for an
error's position, pyyaml's resolver needed only for a number): measured with ``functools.cache``
instead, the first run (``--no-cache``) of the starter takes 2.3 to 2.5 ms longer (of 24 to 26).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")


def once(make: Callable[[], T]) -> Callable[[], T]:
    kept: list[T] = []

    def made() -> T:
        if not kept:
            kept.append(make())
        return kept[0]

    made.__doc__ = make.__doc__
    return made
