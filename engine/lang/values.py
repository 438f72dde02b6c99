"""What the rules language's values are, and the operations every expression shares.

Values are Python's: ``None`` (null), ``bool``, ``int``, ``float``, ``str``, ``list`` and ``dict``
(maps, and the records the engine hands over), plus the located variants of ``engine.located``.
Lists double as sets: the set operators keep the left operand's order and drop repeats, so
results are deterministic.

Operations are forgiving where manifest data may have any shape (``null.x`` is null, a string test
on a number is false) and strict where only a rules mistake can be at fault (a set operator on a
number raises ``TypeError``, reported with the rule's position).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr, unwrap

if TYPE_CHECKING:
    from typing import Any


_TYPE_NAMES = {
    str: "string",
    LocatedStr: "string",
    list: "list",
    LocatedList: "list",
    dict: "map",
    LocatedMap: "map",
    int: "int",
    LocatedInt: "int",
    float: "float",
    LocatedFloat: "float",
    bool: "bool",
    type(None): "null",
}


def type_name(value: Any) -> str:
    known = _TYPE_NAMES.get(value.__class__)
    if known is not None:  # the common case, without a chain of isinstance
        return known
    value = unwrap(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def as_items(value: Any) -> list[Any]:
    """What ``for x in value`` walks: a list's items, a map's keys; nothing for anything else
    (manifest data may have any shape, and a rule should not have to guard every loop)."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value)
    return []


def as_pairs(value: Any) -> list[tuple[Any, Any]]:
    """What ``for k, v in value`` walks: a map's entries, a list's (index, item); nothing else."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def text(value: Any) -> str:
    """How a value reads inside a template."""
    value = unwrap(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(text(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def get_attr(value: Any, name: str) -> Any:
    try:
        return value.get(name)  # maps and records; everything else has no `get`...
    except AttributeError:
        return None  # ...and answers null


def get_index(value: Any, key: Any) -> Any:
    key = unwrap(key)
    if isinstance(value, dict):
        return value.get(key) if isinstance(key, str) else None
    if isinstance(value, list | str) and isinstance(key, int) and not isinstance(key, bool):
        return value[key] if -len(value) <= key < len(value) else None
    return None


class SetCache:
    """Membership and set operations on lists, made fast.

    Values are never changed once made, so the set of a list's items can be kept as long as the
    list lives: ``x in SOME_BIG_LIST`` inside a loop costs a hash lookup, and ``a & b`` for the
    same ``b`` builds its set once. One cache serves one evaluation."""

    def __init__(self) -> None:
        self._sets: dict[int, tuple[list[Any], frozenset[Any]]] = {}

    def set_of(self, items: list[Any]) -> frozenset[Any]:
        found = self._sets.get(id(items))
        if found is None or found[0] is not items:
            found = self._sets[id(items)] = (items, frozenset(_keys(items)))
        return found[1]

    def contains(self, container: Any, item: Any) -> bool:
        if isinstance(container, list):
            if len(container) < 8:
                return unwrap(item) in container
            members = self.set_of(container)
            try:
                return item in members  # located values hash and compare like plain ones
            except TypeError:  # a map or list: by identity
                return _hashable(item) in members
        item = unwrap(item)
        if container is None:
            return False
        if isinstance(container, dict | str):
            return isinstance(item, str) and item in container
        raise TypeError(f"`in` needs a list, map or string on its right, not a {type_name(container)}")

    def subset(self, items: list[Any], container: list[Any]) -> bool:
        return self.set_of(items) <= self.set_of(container)

    def binop(self, op: str, left: Any, right: Any) -> Any:
        """``|`` union, ``&`` intersection, ``-`` difference (lists as sets, the left one's
        order kept), ``+`` concatenation of lists or strings, or a sum of numbers."""
        left, right = unwrap(left), unwrap(right)
        if op == "+":
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, int | float) and isinstance(right, int | float):
                return left + right
            if left is None or isinstance(left, list):
                return _list(left, op) + _list(right, op)
            raise TypeError(f"cannot add a {type_name(right)} to a {type_name(left)}")
        a, b = _list(left, op), _list(right, op)
        if op == "|":
            return unique(a + b)
        other = self.set_of(b)
        keep = op == "&"
        try:
            return unique([item for item in a if (item in other) is keep])
        except TypeError:  # `a` holds maps or lists: compare by identity
            return unique([item for item in a if (_hashable(item) in other) is keep])


def _hashable(value: Any) -> Any:
    """Maps and lists are told apart by identity (they never change); the rest by value."""
    if isinstance(value, dict | list):
        return id(value)
    return unwrap(value)


def _keys(items: list[Any]) -> set[Any]:
    """The set of ``_hashable`` keys of ``items`` — at C speed when they are all plain values."""
    try:
        return set(items)  # a LocatedConst hashes and compares like the value it holds
    except TypeError:
        return {_hashable(item) for item in items}


def _list(value: Any, op: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value)
    raise TypeError(f"`{op}` needs lists, not a {type_name(value)}")


def unique(items: list[Any]) -> list[Any]:
    """``items`` without repeats, first occurrences kept, in order."""
    try:
        return list(dict.fromkeys(items))
    except TypeError:
        pass
    seen: set[Any] = set()
    result = []
    for item in items:
        key = _hashable(item)
        if key not in seen:
            seen.add(key)
            result.append(item)
    return result


def is_null(value: Any) -> bool:
    return value is None or (value.__class__ is LocatedConst and value.value is None)


def equal(left: Any, right: Any) -> bool:
    return _same(unwrap(left), unwrap(right))


def compare(op: str, left: Any, right: Any) -> bool:
    """``<``, ``<=``, ``>``, ``>=``: between two strings or two numbers; false otherwise."""
    left, right = unwrap(left), unwrap(right)
    comparable = (isinstance(left, str) and isinstance(right, str)) or (_number(left) and _number(right))
    if not comparable:
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    return bool(left == right)
