"""What one evaluation leaves for the next one over an edited manifest (an editor's checks as
you type), and how the next one knows what it may keep.

The rules language is pure. A ``let``'s value depends only on the top-level names it reads, a
function's result only on its arguments and the names it reads, a rule's diagnostics only on the
names it reads — through the functions it calls; the code generator lists them
(``program["reads"]``) — and, for the definitions that look at the repository
(``program["observes"]``), on what the repository's folders hold. So the next evaluation keeps:

- a ``let``'s value when none of its names changed; else it computes the value, and when that is
  ``same`` as the old one it keeps the old object, so that what depends on it is kept too (the
  "early cutoff" of incremental compilers);
- a function's remembered results when none of its names changed (arguments are memo keys by
  value or by identity, and the manifest's unchanged values are the old objects: see
  ``yaml/reparse.py``);
- a rule's diagnostics when none of its names changed; and for a rule that starts with
  ``for x in NAME``, when only ``NAME`` changed, the findings of each item that is the very
  same object as before (the rest of the rule runs for the new items only);

and what looks at the repository only while it is the same ``Repository`` (the same view of the
folders). A fact is compared like a ``let``'s new value.
"""

from __future__ import annotations

from ..yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

    from ..paths import Repository


class Carried:
    """An evaluation's values, remembered calls (each function's stores), rule results (and the findings of each item
    of a rule's first loop: rule index → id of the item → the item and its findings), and
    repository view."""

    __slots__ = ("items", "program", "repo", "results", "stores", "values")

    def __init__(
        self,
        program: dict[str, Any],
        values: dict[str, Any],
        stores: dict[str, tuple[dict[Any, tuple[Any, Any]], dict[int, tuple[Any, Any]]]],
        results: dict[int, list[tuple[Any, ...]]],
        items: dict[int, dict[int, tuple[Any, list[Any]]]],
        repo: Repository,
    ) -> None:
        self.program = program
        self.values = values
        self.stores = stores
        self.results = results
        self.items = items
        self.repo = repo


_CONTAINERS = frozenset({list, dict, LocatedList, LocatedMap})
_LOCATED = frozenset({LocatedStr, LocatedInt, LocatedFloat})
_PLAIN = frozenset({str, int, float, bool, type(None)})


def same(new: Any, old: Any) -> bool:
    """Whether the rules can tell ``new`` from ``old`` by nothing but identity: the same type,
    value and position; a list or map with the same entries, in order, where an entry that is
    itself a list or map must be the very same object (maps and lists are told apart by
    identity in the language — ``in``, the set operators — so an equal copy is not the same)."""
    if new is old:
        return True
    kind = new.__class__
    if kind is not old.__class__:
        return False
    if kind is list or kind is LocatedList:
        if len(new) != len(old) or (kind is LocatedList and new.loc != old.loc):
            return False
        return all(_same_item(a, b) for a, b in zip(new, old, strict=True))
    if kind is dict or kind is LocatedMap:
        if len(new) != len(old) or (kind is LocatedMap and new.loc != old.loc):
            return False
        return all(
            _same_scalar(key, old_key) and _same_item(value, old_value)
            for (key, value), (old_key, old_value) in zip(new.items(), old.items(), strict=True)
        )
    return _same_scalar(new, old)


def _same_item(new: Any, old: Any) -> bool:
    return new is old or (new.__class__ not in _CONTAINERS and _same_scalar(new, old))


def _same_scalar(new: Any, old: Any) -> bool:
    if new is old:
        return True
    kind = new.__class__
    if kind is not old.__class__:
        return False
    if kind is LocatedConst:
        return bool(new.value is old.value and new.loc == old.loc)
    if kind in _LOCATED:
        return bool(new == old and new.loc == old.loc)
    return kind in _PLAIN and bool(new == old)
