"""What the rules language's values are, and the operations every expression shares.

Values are Python's: ``None`` (null), ``bool``, ``int``, ``float``, ``str``, ``list`` and ``dict``
(maps, and the records the engine hands over), plus the located variants of ``engine.located``.
Lists double as sets: the set operators keep the left operand's order and drop repeats, so
results are deterministic.

Operations are forgiving where manifest data may have any shape (``null.x`` is null, a string test
on a number is false) and strict where only a rules mistake can be at fault (a set operator on a
number raises ``RuleFailure``, reported at the expression's position).

Every evaluation has a ``Budget``: loops charge their items (times the steps of their body), and
what builds values charges their size, in steps and in bytes. No rule set can run without end
or take all the machine's RAM; one that would is stopped with ``BudgetExceeded``.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from ..yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr, unwrap

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Built = TypeVar("Built")


#: the type name of a value of each common class (``type_name``; the generated code reads it too)
TYPE_NAMES = {
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


#: how a type reads in a message
_PHRASES = {
    "null": "null",
    "bool": "a boolean",
    "int": "a number",
    "float": "a number",
    "string": "a string",
    "list": "a list",
    "map": "a map",
}
#: the steps one evaluation may take (a rule, or a value or function the engine asks for): a
#: step is an expression evaluated once, or an item of a list built; the shipped rules take
#: 2.3 million for 2,000 tools and 500 agents, 23 million for 8,000 and 2,000 (about 9 s)
STEPS = 40_000_000
#: the bytes of values one evaluation may build; the shipped rules build at most 21 MB in one
#: (resolve's `resolved_harness` for 2,000 tools and 500 agents), 8 MB in one rule for 8,000
#: tools and 2,000 agents. What evaluations keep for later ones is bounded by ``Evaluation``.
ROOM = 64_000_000
#: what building a value is charged (``Budget.build``), in bytes as CPython takes them, roughly:
#: a string, list or map itself (or a number, a diagnostic's share of its tuple), an item of a
#: list or a set, an entry of a map
OBJECT, ITEM, ENTRY = 64, 8, 48
#: a list shorter than this is searched item by item for ``in``, a longer one through its set
SHORT_LIST = 8
#: the longest text a value may read as inside a template
TEXT_LIMIT = 1_000_000


#: what the function of one item of a comprehension (``loops``) gives for an item it leaves out
SKIP = object()


class RuleFailure(Exception):
    """A rule that cannot go on: the message says why, in the rules' words."""


class BudgetExceeded(RuleFailure):
    """An evaluation that took more than ``STEPS`` steps."""


def phrase(value: Any) -> str:
    """``a string``, ``a number``, ... — a value's type as a message says it."""
    name = type_name(value)
    return _PHRASES.get(name, f"a {name}")


class Budget:
    """What is left to one evaluation (a rule, or a value or function the engine asks for):
    ``left`` steps and ``room``, bytes for the values it builds.

    Loops charge their items times the steps of their body and, when the body builds values of
    a size known from its text (literals, calls), their bytes; the code generator counted both.
    What builds values of a size known only when it runs (``+``, templates, ``join``, ...)
    charges that size itself."""

    __slots__ = ("left", "room")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.left = STEPS
        self.room = ROOM

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise BudgetExceeded(f"stopped after {STEPS:,} steps: a loop or a value grows without bound")

    def build(self, size: int) -> None:
        """Charge ``size`` bytes of values built."""
        self.room -= size
        if self.room < 0:
            raise BudgetExceeded(
                f"stopped after building {ROOM // 1_000_000} MB of values: a loop or a value grows without bound"
            )

    def items(self, value: Any, weight: int, room: int = 0) -> list[Any]:
        """``as_items``, charged: ``weight`` steps and ``room`` bytes per item."""
        if isinstance(value, list):
            found = value
        elif isinstance(value, dict):
            found = list(value)
            room += ITEM
        else:
            return []
        self.left -= len(found) * weight
        if self.left < 0:
            self.spend(0)
        if room:
            self.build(len(found) * room)
        return found

    def pairs(self, value: Any, weight: int, room: int = 0) -> list[tuple[Any, Any]]:
        """``as_pairs``, charged: ``weight`` steps and ``room`` bytes per pair (and the pair)."""
        found = as_pairs(value)
        self.left -= len(found) * weight
        if self.left < 0:
            self.spend(0)
        self.build(len(found) * (room + OBJECT))
        return found

    def joined(self, text: str) -> str:
        """A template's text, charged by its length."""
        self.left -= len(text)
        if self.left < 0:
            self.spend(0)
        self.build(len(text))
        return text

    def scan(self, items: list[Any]) -> list[Any]:
        """``items``, charged a step each: what reads a whole list (``any``, ``unique``, ...)."""
        self.left -= len(items)
        if self.left < 0:
            self.spend(0)
        return items

    def equal(self, left: Any, right: Any) -> bool:
        """``==``, charged by a long operand it may have to read through (``_long``)."""
        kind = left.__class__
        if kind in _LONG_KINDS and len(left) > _LONG:
            self.spend(_long(left))
        if left is right and (kind is dict or kind is list):  # (a float might be NaN)
            return True
        left, right = unwrap(left), unwrap(right)
        if isinstance(left, bool) or isinstance(right, bool):  # `true` equals no number
            return isinstance(left, bool) and isinstance(right, bool) and left == right
        return bool(left == right)

    def ordering(self, op: str) -> Callable[[Any, Any], bool]:
        """The comparison ``op`` (``<``, ``<=``, ``>``, ``>=``) of two values, charged as
        ``equal``: between two strings or two numbers; false otherwise."""
        test = _ORDERINGS[op]
        spend = self.spend

        def ordered(left: Any, right: Any) -> bool:
            kind = left.__class__
            if kind in _LONG_KINDS and len(left) > _LONG:
                spend(_long(left))
            if kind is int and right.__class__ is int:  # the common case (a bool's class is bool)
                return test(left, right)
            left, right = unwrap(left), unwrap(right)
            if (isinstance(left, str) and isinstance(right, str)) or (_number(left) and _number(right)):
                return test(left, right)
            return False

        return ordered

    def sized(self, value: Built) -> Built:
        """``value``, a string, list or map just built, charged by its size (steps and bytes)."""
        if isinstance(value, str):
            size = len(value)
            self.build(size)
        elif isinstance(value, list):
            size = len(value)
            self.build(size * ITEM)
        elif isinstance(value, dict):
            size = len(value)
            self.build(size * ENTRY)
        else:
            return value
        self.spend(size)
        return value


_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

#: what ``==``, ``<`` and ``in`` may read through at C speed: a step per this many characters, per
#: item of a list (nested ones count as one), once longer than this
_LONG = 64
_LONG_KINDS = frozenset({str, list, dict})


def _long(value: Any) -> int:
    return len(value) // _LONG if value.__class__ is str else len(value)


def type_name(value: Any) -> str:
    known = TYPE_NAMES.get(value.__class__)
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
    """How a value reads inside a template: a list's items joined by ``, ``, a map as
    ``{key: value, ...}`` — at most ``TEXT_LIMIT`` characters."""
    kind = value.__class__
    if kind is str or kind is LocatedStr or kind is int:  # the common cases, as the last line reads them
        return str(value)
    value = unwrap(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return _collection_text(value, [TEXT_LIMIT])
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _collection_text(value: list[Any] | dict[Any, Any], left: list[int]) -> str:
    """A list's or map's text, counting what is left of the limit in ``left`` as it goes (a
    value shared many times over cannot make a text without end)."""
    parts = []
    entries = value.items() if isinstance(value, dict) else ((None, item) for item in value)
    for key, item in entries:
        inner = unwrap(item)
        part = _collection_text(inner, left) if isinstance(inner, list | dict) else text(inner)
        if key is not None:
            part = f"{key}: {part}"
        left[0] -= len(part) + 2
        if left[0] < 0:
            raise RuleFailure(f"a text longer than {TEXT_LIMIT:,} characters")
        parts.append(part)
    return "{" + ", ".join(parts) + "}" if isinstance(value, dict) else ", ".join(parts)


def get_attr(value: Any, name: str) -> Any:
    try:
        return value.get(name)  # maps and records; everything else has no `get`...
    except AttributeError:
        return None  # ...and answers null


def get_index(value: Any, key: Any) -> Any:
    if value.__class__ is dict and isinstance(key, str):  # the common case: a record's or table's entry
        return value.get(key)
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
    same ``b`` builds its set once. One cache serves one evaluation. A list's set is a map from
    each item to where it first stands, so that ``a & b`` of a long ``a`` and a short ``b`` can
    look up the few common items and put them in ``a``'s order."""

    def __init__(self, budget: Budget) -> None:
        self._sets: dict[int, tuple[list[Any], dict[Any, int]]] = {}
        #: each list's or map's ``hashable`` structure, by its identity: a view looked up for
        #: every agent that sees it is read through once
        self._keys: dict[int, tuple[Any, Any]] = {}
        self.budget = budget

    def forget(self) -> None:
        self._sets.clear()
        self._keys.clear()

    def key(self, value: Any) -> Any:
        """``hashable(value)``: for a list or map worked out once, for anything else itself."""
        if not isinstance(value, list | dict):
            return unwrap(value)
        found = self._keys.get(id(value))
        if found is None or found[0] is not value:
            key = hashable(value, self.budget)
            self.budget.build(len(value) * ITEM)  # kept as long as the evaluation
            found = self._keys[id(value)] = (value, key)
        return found[1]

    def unique(self, items: list[Any]) -> list[Any]:
        """``items`` without repeats (lists and maps compared by their structure, as ``==``
        does), first occurrences kept, in order."""
        try:
            return list(dict.fromkeys(items))
        except TypeError:
            pass
        seen: set[Any] = set()
        result = []
        for item in items:
            key = self.key(item)
            if key not in seen:
                seen.add(key)
                result.append(item)
        return result

    def set_of(self, items: list[Any]) -> dict[Any, int]:
        found = self._sets.get(id(items))
        if found is None or found[0] is not items:
            self.budget.spend(len(items))
            self.budget.build(len(items) * ENTRY)  # kept as long as the evaluation
            found = self._sets[id(items)] = (items, self._positions(items))
        return found[1]

    def _positions(self, items: list[Any]) -> dict[Any, int]:
        """Each ``hashable`` key of ``items`` → the index where it first stands — at C speed when
        they are all plain values (walked from the end, so that the first index is the one kept)."""
        backwards = range(len(items) - 1, -1, -1)
        try:
            return dict(zip(reversed(items), backwards, strict=True))  # a LocatedConst hashes like its value
        except TypeError:
            return {self.key(item): index for item, index in zip(reversed(items), backwards, strict=True)}

    def contains(self, container: Any, item: Any) -> bool:
        if isinstance(container, list):  # the hot path: `unwrap` and `set_of` written out
            if len(container) < SHORT_LIST:
                return (item.value if item.__class__ is LocatedConst else item) in container
            found = self._sets.get(id(container))
            members = found[1] if found is not None and found[0] is container else self.set_of(container)
            try:
                return item in members  # located values hash and compare like plain ones
            except TypeError:  # a map or list: by its structure
                return self.key(item) in members
        if container.__class__ is dict:  # a map's keys: strings (a located true, false or null is none)
            return isinstance(item, str) and item in container
        item = unwrap(item)
        if container is None:
            return False
        if isinstance(container, dict | str):
            if container.__class__ is str and len(container) > _LONG:
                self.budget.spend(_long(container))  # a search through the text
            return isinstance(item, str) and item in container
        raise RuleFailure(f"`in` needs a list, map or string on its right, not {phrase(container)}")

    def subset(self, items: list[Any], container: list[Any]) -> bool:
        """Whether every item of ``items`` is in ``container``, charged a step per item."""
        self.budget.spend(len(items))
        return self.set_of(items).keys() <= self.set_of(container).keys()

    def binop(self, op: str, left: Any, right: Any) -> Any:
        """``|`` union, ``&`` intersection, ``-`` difference (lists as sets, the left one's
        order kept), ``+`` concatenation of lists or strings, or a sum of numbers. What it
        builds is charged to the budget."""
        if left.__class__ is list and right.__class__ is list and (op == "&" or op == "-"):
            # the common case of resolving views, charged as below
            size = len(left) + len(right)
            if size:
                self.budget.spend(size)
                self.budget.build(size * ITEM)
            return self._filtered(op == "&", left, right)
        a, b = unwrap(left), unwrap(right)
        # charged before it is built, by the most it can hold: a bound must hold before the fact
        size = (len(a) if isinstance(a, str | list | dict) else 0) + (len(b) if isinstance(b, str | list | dict) else 0)
        if size:
            self.budget.spend(size)
            self.budget.build(size if isinstance(a, str) else size * ITEM)
        return self._binop(op, a, b)

    def _filtered(self, keep: bool, left: list[Any], right: list[Any]) -> list[Any]:
        """``left & right`` (``keep``) or ``left - right``: the common case of resolving views.
        A left list without repeats (its set as long as itself) needs no ``unique`` after."""
        other = self.set_of(right)
        if keep and len(other) * _FEW < len(left):
            known = self._sets.get(id(left))  # (its set made already, by `subset` say: no new charge)
            if known is not None and known[0] is left:
                first = known[1]  # the common items, where they first stand in `left`
                return [left[index] for index in sorted(map(first.__getitem__, other.keys() & first.keys()))]
        try:
            # `filter` with the set's own test runs at C speed
            kept = list(filter(other.__contains__, left)) if keep else [item for item in left if item not in other]
        except TypeError:  # maps or lists among the items: compared by their structure
            key = self.key
            return self.unique([item for item in left if (key(item) in other) is keep])
        return kept if len(self.set_of(left)) == len(left) else self.unique(kept)

    def _binop(self, op: str, left: Any, right: Any) -> Any:
        if op == "+":
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if _number(left) and _number(right):
                return left + right
            if (left is None or isinstance(left, list)) and (right is None or isinstance(right, list | dict)):
                return _list(left, op) + _list(right, op)
            raise RuleFailure(f"cannot add {phrase(left)} and {phrase(right)}")
        a, b = _list(left, op), _list(right, op)
        if op == "|":
            return self.unique(a + b)
        other = self.set_of(b)
        keep = op == "&"
        try:
            return self.unique([item for item in a if (item in other) is keep])
        except TypeError:  # `a` holds maps or lists: compare by their structure
            key = self.key
            return self.unique([item for item in a if (key(item) in other) is keep])


def hashable(value: Any, budget: Budget) -> Any:
    """What a value is told apart by in a set: its structure. A list is the tuple of its
    items', a map the frozenset of its entries' (each item and value in turn by its structure),
    so that two lists or maps that are ``==`` are one member, whoever built them and wherever
    they were read; any other value is itself (a located one hashes like the plain one).
    Reading a list or map through is charged to ``budget``: a step per item or entry."""
    if isinstance(value, list):
        budget.spend(len(value))
        try:
            frozen = tuple(value)  # the common case: plain items alone, at C speed
            hash(frozen)
            return frozen
        except TypeError:
            return tuple([hashable(item, budget) for item in value])
    if isinstance(value, dict):
        budget.spend(len(value))
        return frozenset([(key, hashable(item, budget)) for key, item in value.items()])
    return unwrap(value)


#: ``a & b`` looks up ``b``'s items in ``a`` when ``a`` is this many times as long
_FEW = 8


_OPERATIONS = {"|": "`|` (union)", "&": "`&` (intersection)", "-": "`-` (difference)", "+": "`+`"}


def _list(value: Any, op: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value)
    raise RuleFailure(f"{_OPERATIONS[op]} needs lists, not {phrase(value)}")


def is_null(value: Any) -> bool:
    return value is None or (value.__class__ is LocatedConst and value.value is None)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
