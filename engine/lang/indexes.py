"""Loops indexed by their guards: a rule or comprehension that walks a list only for the items
its condition can hold for.

Many rules walk the same list with a condition on one expression of the item: ``for t in
tools`` ``when module_problem(t) == "missing"``, ``… == "url"``, ``when t.name in HARNESS_TOOLS``.
The code generator gives such a loop its *guards* — the conditions of the form ``E == K``, ``E
!= K``, ``E in K``, ``E not in K``, ``E`` or ``not E`` among the first of its ``when``, where
``E`` reads the item and ``K`` does not — when the same ``E`` guards another loop over the same
list (or the loop is a comprehension in a function, run again and again). The runtime groups
the list's items by the value of ``E`` once per evaluation (``Index``), and the loop walks the
items of the groups its guard selects; the whole condition is still tested for each, so a guard
only ever leaves out items for which the condition is false. An item whose ``E`` fails is in
every selection: the condition fails there, as it did before. A loop is charged for every item
of the list, as if it walked them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..yaml.located import LocatedConst
from .errors import RulesError
from .values import ITEM, BudgetExceeded, as_items

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .values import Budget

    #: a guard: the function of ``E``, its kind, the value of ``K``
    Guard = tuple[Callable[[Any], Any], int, Any]

#: the kinds of guard
EQUAL, UNEQUAL, IN, NOT_IN, TRUE, FALSE = range(6)
#: a selection this small of the list is taken without building another index
_FEW = 8


class Index:
    """A list's items grouped by the value of one expression: value → positions; the positions
    whose value cannot be a key (a list, a map, a failure) are ``other``."""

    __slots__ = ("groups", "items", "other")

    def __init__(self, items: list[Any], expression: Callable[[Any], Any]) -> None:
        self.items = items
        self.groups: dict[Any, list[int]] = {}
        self.other: list[int] = []
        try:
            found = list(map(expression, items))  # the common case: it fails for no item
        except (BudgetExceeded, RulesError):
            raise
        except Exception:
            found = [self._value(expression, item) for item in items]
        groups, other = self.groups, self.other
        for position, value in enumerate(found):
            if value.__class__ is LocatedConst:
                value = value.value
            try:
                groups[value].append(position)
            except KeyError:
                groups[value] = [position]
            except TypeError:  # a list or map, or the expression failed
                other.append(position)

    @staticmethod
    def _value(expression: Callable[[Any], Any], item: Any) -> Any:
        """``expression`` of ``item``; a list (no key) where it fails: the loop finds out."""
        try:
            return expression(item)
        except (BudgetExceeded, RulesError):
            raise
        except Exception:
            return []

    def select(self, kind: int, key: Any) -> list[int] | None:
        """The positions whose value may pass the guard; None when it cannot tell."""
        groups = self.groups
        if kind in (EQUAL, IN):
            keys = [key] if kind == EQUAL else as_items(key) if isinstance(key, list | dict) else None
            if keys is None:
                return [] if key is None and kind == IN else None
            try:
                chosen = [groups.get(value.value if value.__class__ is LocatedConst else value, ()) for value in keys]
            except TypeError:  # a list or map to compare with: only such values can equal it
                chosen = [groups.get(value, ()) for value in keys if value.__hash__ is not None]
        elif kind in (UNEQUAL, NOT_IN):
            # exact only against texts and null, which equal no value of another type
            left_out = {key} if kind == UNEQUAL else set(as_items(key)) if isinstance(key, list | dict) else None
            if left_out is None or not all(value is None or isinstance(value, str) for value in left_out):
                return None
            chosen = [positions for value, positions in groups.items() if value not in left_out]
        else:
            chosen = [positions for value, positions in groups.items() if bool(value) is (kind == TRUE)]
        found = [position for positions in chosen for position in positions]
        if len(chosen) > 1 or self.other:
            found = sorted(set(found).union(self.other))
        return found


class Indexes:
    """The indexes of one evaluation, by list and expression."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self._built: dict[tuple[int, Callable[[Any], Any]], Index] = {}

    def forget(self) -> None:
        self._built.clear()

    def pick(self, value: Any, guards: tuple[Guard, ...], weight: int, room: int = 0) -> list[Any]:
        """The items of ``value`` a loop guarded by ``guards`` walks, charged as ``Budget.items``
        charges the whole list: the smallest selection of an index built already; when that is
        most of the list, an index of one more guard's expression is built."""
        items = self.budget.items(value, weight, room)
        best: list[int] | None = None
        built = self._built
        for expression, kind, key in guards:
            index = built.get((id(items), expression))
            if index is not None and index.items is items:
                found = index.select(kind, key)
                if found is not None and (best is None or len(found) < len(best)):
                    best = found
        if best is None or len(best) * _FEW > len(items):
            for expression, kind, key in guards:
                index = built.get((id(items), expression))
                if index is None or index.items is not items:
                    self.budget.build(len(items) * ITEM)
                    index = built[(id(items), expression)] = Index(items, expression)
                    found = index.select(kind, key)
                    if found is not None and (best is None or len(found) < len(best)):
                        best = found
                    break
        return items if best is None else [items[position] for position in best]
