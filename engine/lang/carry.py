"""What one evaluation leaves for the next one over an edited manifest (an editor's checks as
you type), and how the next one knows what it may keep.

The rules language is pure: a value depends only on what it reads. A ``let``'s value and a
rule's diagnostics depend on the top-level names they read — themselves or through the functions
they call; the code generator lists them (``program["reads"]``). A remembered call's result and
what the function of one loop item (``loops``) gave depend on their arguments or item and on what
they read, which the evaluation records as they run: top-level names, and keys of them
(``first_tool_declarations[t.name]``) with what each gave. The definitions that look at the
repository (``program["observes"]``) also depend on what its folders hold. So the next
evaluation keeps:

- a ``let``'s value when none of its names changed; else it computes the value, and when that is
  ``same`` as the old one it keeps the old object, so that what depends on it is kept too (the
  "early cutoff" of incremental compilers);
- a rule's diagnostics when none of its names changed;
- a remembered call, and what a loop item gave, when what it read is the same (a key read of a
  changed map is the same when its entry is); a loop's items are matched to the old ones by
  identity (the manifest's unchanged values are the old objects: see ``yaml/reparse.py``), and
  only the new items and those that read what changed are computed again (``Walk``);

and what looks at the repository only while it is the same ``Repository`` (the same view of the
folders). A fact is compared like a ``let``'s new value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr

if TYPE_CHECKING:
    from typing import Protocol

    from ..paths import Repository
    from .memo import Entry

    class Changes(Protocol):
        """What a walk asks the evaluation that carries it: which names and keys changed."""

        def changed(self, name: str) -> bool: ...
        def changed_keys(self, name: str) -> set[Any] | None: ...
        def changed_at(self, name: str, key: Any, seen: Any) -> bool: ...
        def replaced(self, items: list[Any], before: list[Any]) -> list[int]: ...


class Carried(NamedTuple):
    """An evaluation's values (and what each hoisted comprehension charged), each remembered
    function's store (``memo.py``), each rule's results, each loop walked item by item, and
    the repository view."""

    program: dict[str, Any]
    values: dict[str, Any]
    charges: dict[str, tuple[int, int]]
    stores: dict[str, dict[Any, Entry]]
    results: dict[int, list[tuple[Any, ...]]]
    walks: dict[str, Walk]
    repo: Repository


class Walk:
    """One walk of a loop item by item (``Evaluation._walk``): its items, what the function of
    one item gave for each, what each read (a record like a remembered call's), and for each
    top-level name read, which positions read which key of it (None: the whole value)."""

    __slots__ = ("found", "items", "owned", "readers", "reads")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.found: list[Any] = [None] * len(items)
        self.reads: list[dict[Any, Any] | None] = [None] * len(items)
        self.readers: dict[str, dict[Any, set[int]]] = {}
        #: the sets of ``readers`` this walk made; the others are the carried walk's, copied
        #: before they change (most stay as they were, and a copy of each is work at every edit)
        self.owned: set[int] = set()

    def take(self, old: Walk, evaluation: Changes) -> list[int]:
        """Take from ``old``, the carried evaluation's walk of the same loop, what each item
        gave where the item is the same object and what it read is the same; the positions
        whose item must be computed again, in order (all, when items were added or removed).
        What changed is found from the names and keys that changed, not item by item."""
        items, before = self.items, old.items
        if len(items) != len(before):
            return list(range(len(items)))
        self.found, self.reads = list(old.found), list(old.reads)
        self.readers = {name: dict(keys) for name, keys in old.readers.items()}
        redo = set(evaluation.replaced(items, before))
        for name, keys in self.readers.items():
            if evaluation.changed(name):
                changed = evaluation.changed_keys(name)  # a map's: look up the keys that changed
                for key in keys if changed is None else [key for key in (None, *changed) if key in keys]:
                    seen = self.reads[next(iter(keys[key]))][(name, key)] if key is not None else None  # type: ignore[index]
                    if key is None or evaluation.changed_at(name, key, seen):
                        redo.update(keys[key])
        return sorted(redo)

    def put(self, position: int, found: Any, reads: dict[Any, Any] | None) -> None:
        """What the item at ``position`` gave, and what it read."""
        was = self.reads[position]
        if was:
            for dep in was:
                name, key = (dep, None) if dep.__class__ is str else dep
                keys = self.readers[name]
                self._own(keys, key).discard(position)
                if not keys[key]:
                    del keys[key]
        self.found[position] = found
        self.reads[position] = reads
        for dep in reads or ():
            name, key = (dep, None) if dep.__class__ is str else dep
            keys = self.readers.setdefault(name, {})
            if key in keys:
                self._own(keys, key).add(position)
            else:
                made = keys[key] = {position}
                self.owned.add(id(made))

    def _own(self, keys: dict[Any, set[int]], key: Any) -> set[int]:
        """The set of ``keys[key]``, this walk's own (a copy of the carried walk's, made once)."""
        found = keys[key]
        if id(found) not in self.owned:
            found = keys[key] = set(found)
            self.owned.add(id(found))
        return found


def changed_keys(new: Any, old: Any) -> set[Any] | None:
    """The keys at which map ``new`` differs from map ``old`` (not ``same``, added or
    removed); None when either is no map."""
    if not (isinstance(new, dict) and isinstance(old, dict)):
        return None
    absent = object()
    found = {key for key, value in new.items() if value is not old.get(key, absent)}
    found = {key for key in found if key not in old or not same(new[key], old[key])}
    found.update(key for key in old if key not in new)
    return found


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
        from operator import is_

        return all(map(is_, new, old)) or all(_same_item(a, b) for a, b in zip(new, old, strict=True))
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
