"""Remembered calls: a costly function's result for each list of arguments, computed once.

Values never change, so a second call with the same arguments gives the same result. A plain
string, number or null is its own key, a located one with its position (a result may carry
it); a list or map is known by its identity first — one object, one value — and else by its
value (``value_key``): an equal list built again, or read from another agent's settings, finds
the result computed for the first, when that result cannot tell the two apart (it holds no
located value of the first's, and the function reads no position: ``Evaluation.shares``).

Each function has a store of its own: key → (arguments, result, what the call read). The
arguments are kept alive, so that an identity in a key stays theirs; what the call read (the
top-level values, and the keys of them it looked up) is recorded in an editor's checks only, so
that the next check keeps the result when none of it changed (``carry.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from .values import Budget

    #: a store's entry: the arguments, the result, what the call read (None: not recorded)
    Entry = tuple[tuple[Any, ...], Any, dict[Any, Any] | None]

#: argument types that are their own key (hashable by value, no position that could end up in
#: the result); a bool is not, since `true` and `1` are not one value
PLAIN_KEYS = frozenset({str, int, float, type(None)})
#: the containers manifest data and rule values are made of
CONTAINERS = frozenset({dict, list, LocatedMap, LocatedList})


def key_of(value: Any) -> Any:
    """The key of one argument: itself, with its position, or the identity of a container."""
    kind = value.__class__
    if kind in PLAIN_KEYS:
        return value
    if kind is LocatedStr:
        return ("str", value, value.loc)  # the result may carry the argument's position
    if kind is LocatedInt or kind is LocatedFloat:
        return ("number", value, value.loc)
    if kind in CONTAINERS or isinstance(value, dict | list):
        return ("id", id(value))
    if kind is bool:
        return ("bool", value)
    if isinstance(value, LocatedConst):
        return ("const", value.value, value.loc)
    return value


def value_key(args: tuple[Any, ...], structure: Callable[[Any], Any]) -> Any:
    """The key of ``args`` by value, positions left out — None when one is a container the rules
    built (those are known by identity alone) or a value with no such key. ``structure`` gives
    a manifest list's or map's (``SetCache.key``)."""
    key = []
    for value in args:
        kind = value.__class__
        if kind in PLAIN_KEYS:
            key.append(value)
        elif kind is LocatedStr:
            key.append(("str", str(value)))
        elif kind is LocatedList or kind is LocatedMap:
            key.append(("data", structure(value)))
        elif kind is bool:
            key.append(("bool", value))
        elif kind is LocatedConst:
            key.append(("const", value.value))
        else:
            return None
    return tuple(key)


def shares(entry: Entry, budget: Budget) -> bool:
    """Whether ``entry``'s result may stand for a call with arguments equal to its own but read
    elsewhere: it holds no located value of its arguments (that would carry their positions).
    (The functions that read positions — ``position``, ``file_of``, ``after`` — are known by
    value never.) Each value looked at is a step of ``budget``."""
    located = {id(value) for value in _within(entry[0]) if hasattr(value, "loc")}
    budget.spend(len(located))
    seen = 0
    for value in _within((entry[1],)):
        seen += 1
        if id(value) in located:
            budget.spend(seen)
            return False
    budget.spend(seen)
    return True


def _within(values: tuple[Any, ...]) -> Iterator[Any]:
    """Each of ``values`` and every value inside them: a map's keys and values, a list's items."""
    pending = list(values)
    while pending:
        value = pending.pop()
        yield value
        if isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def remembered(function: Callable[..., Any], store: dict[Any, Entry], miss: Callable[..., Entry]) -> Callable[..., Any]:
    """``function``, remembered in ``store``; ``miss(key, args)`` makes the entry of a call not
    in it. One- and two-parameter functions (most of them) look their key up without building
    an argument list (measured with the general one alone: resolve of 2,000 tools, 15 % more
    instructions)."""
    plain, containers = PLAIN_KEYS, CONTAINERS

    def remembered1(a: Any) -> Any:
        kind = a.__class__
        key = a if kind in plain else ("id", id(a)) if kind in containers else key_of(a)
        found = store.get(key)
        if found is None:
            found = miss(key, (a,))
        return found[1]

    def remembered2(a: Any, b: Any) -> Any:
        kind = a.__class__
        first = a if kind in plain else ("id", id(a)) if kind in containers else key_of(a)
        kind = b.__class__
        key = (first, b if kind in plain else ("id", id(b)) if kind in containers else key_of(b))
        found = store.get(key)
        if found is None:
            found = miss(key, (a, b))
        return found[1]

    def remembered_any(*args: Any) -> Any:
        key = tuple(map(key_of, args))
        found = store.get(key)
        if found is None:
            found = miss(key, args)
        return found[1]

    arity = function.__code__.co_argcount
    return remembered1 if arity == 1 else remembered2 if arity == 2 else remembered_any


def reading(
    store: dict[Any, Entry], miss: Callable[..., Entry], deps: Callable[[], dict[Any, Any] | None]
) -> Callable[..., Any]:
    """``remembered`` for an editor's checks: each call, found or made, adds what it read to
    the reads of the call or loop item around it (``deps()``: their record, or None)."""

    def remembered_reading(*args: Any) -> Any:
        key = tuple(map(key_of, args))
        found = store.get(key)
        if found is None:
            found = miss(key, args)
        around = deps()
        if around is not None and found[2]:
            around.update(found[2])
        return found[1]

    return remembered_reading
