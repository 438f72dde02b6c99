"""Values that remember where they came from.

The manifest is handed to the rules as ordinary values — strings, numbers, lists, maps — so that
every string operation, comparison and set operation works on them unchanged. Each value also
carries ``loc``: the repo-relative file, 1-based line and 1-based column it was read from. A rule
reports a diagnostic *at* such a value.

Strings, integers and floats are subclasses of the builtin types (``LocatedStr("a") == "a"`` and
hashes alike). ``bool`` and ``None`` cannot be subclassed, so they are wrapped in ``LocatedConst``,
which compares, hashes and tests truthiness like the value it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    Loc = tuple[str, int, int]


class LocatedStr(str):
    __slots__ = ("loc",)
    loc: Loc

    def __new__(cls, value: str, loc: Loc) -> LocatedStr:
        obj = str.__new__(cls, value)
        obj.loc = loc
        return obj


class LocatedInt(int):
    loc: Loc

    def __new__(cls, value: int, loc: Loc) -> LocatedInt:
        obj = int.__new__(cls, value)
        obj.loc = loc
        return obj


class LocatedFloat(float):
    loc: Loc

    def __new__(cls, value: float, loc: Loc) -> LocatedFloat:
        obj = float.__new__(cls, value)
        obj.loc = loc
        return obj


class LocatedConst:
    """A located ``true``, ``false`` or ``null``."""

    __slots__ = ("loc", "value")

    def __init__(self, value: bool | None, loc: Loc) -> None:
        self.value = value
        self.loc = loc

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LocatedConst):
            other = other.value
        return self.value is other if other is None or self.value is None else self.value == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return f"LocatedConst({self.value!r})"


class LocatedList(list[Any]):
    __slots__ = ("loc",)
    loc: Loc

    def __init__(self, items: list[Any], loc: Loc) -> None:
        super().__init__(items)
        self.loc = loc


class LocatedMap(dict[Any, Any]):
    """A mapping whose keys are ``LocatedStr`` (so ``m["tools"]`` finds them by plain string)."""

    __slots__ = ("loc",)
    loc: Loc

    def __init__(self, items: dict[Any, Any], loc: Loc) -> None:
        super().__init__(items)
        self.loc = loc


def unwrap(value: Any) -> Any:
    """The plain value behind a ``LocatedConst``; every other value is returned as it is."""
    return value.value if isinstance(value, LocatedConst) else value
