"""The rules language's fixed set of built-in functions.

Two kinds: pure functions on values, and *observations* of the repository (whether a path
exists, stays inside, is a file; what a folder holds). Observations are answered by the
``Repository`` of the run and remembered, so a rule that asks about the same path 2,000 times
costs one look at the disk.

Adding a built-in is a change to the language (and to ``docs/rules-language.md``), not to policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..paths import QUESTIONS, Repository
from ..yaml.located import LocatedStr, unwrap
from . import patterns
from .values import OBJECT, Budget, RuleFailure, SetCache, as_items, text, type_name

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Builtin = tuple[int, int, Callable[..., Any], str | None]


class Observer:
    """What built-ins may consult besides their arguments: the repository, with every answer
    remembered, and the evaluation's membership sets."""

    def __init__(self, repo: Repository, before: Observer | None = None) -> None:
        """``before``: an earlier observer of the same repository, whose answers hold."""
        self.repo = repo
        self.budget = Budget()
        self.sets = SetCache(self.budget)
        #: question (a ``Repository`` method of one path) → path → answer; a table per question,
        #: so that the built-ins look an answer up by the path alone
        self.known: dict[str, dict[str, Any]] = (
            before.known if before is not None and before.repo is repo else {question: {} for question in QUESTIONS}
        )


# pure functions ------------------------------------------------------------------------------


def b_len(value: Any) -> Any:
    kind = value.__class__
    if kind is list or kind is dict or kind is str:
        return len(value)
    value = unwrap(value)
    return len(value) if isinstance(value, list | dict | str) else 0 if value is None else None


def b_keys(observer: Observer, value: Any) -> list[Any]:
    return observer.budget.sized(list(value)) if isinstance(value, dict) else []


def b_values(observer: Observer, value: Any) -> list[Any]:
    return observer.budget.sized(list(value.values())) if isinstance(value, dict) else []


def b_matches(observer: Observer, value: Any, pattern: Any) -> bool:
    """True when the regular expression ``pattern`` matches somewhere in the string ``value``
    (anchor it with ``^``/``$`` to match the whole). RE2 syntax, linear time (``patterns.py``)."""
    try:
        matcher = _MATCHERS[pattern]  # the common case: a pattern seen before
    except (KeyError, TypeError):
        if not isinstance(pattern, str):
            return False
        try:
            matcher = patterns.compiled(str(pattern))
        except patterns.PatternError as err:
            raise RuleFailure(str(err)) from None
    if not isinstance(value, str):
        return False
    if len(value) > _LONG_TEXT:
        observer.budget.spend(len(value) // _LONG_TEXT)  # RE2 reads the whole text
    found = matcher.answers.get(value)
    return matcher.answer(value) if found is None else found


#: a text this long costs ``matches`` a step more per this many characters
_LONG_TEXT = 64
_MATCHERS = patterns.MATCHERS  # read directly: a call less per match


def _affixed(test: Callable[[str, tuple[str, ...]], bool]) -> Callable[[Any, Any], bool]:
    """``starts_with`` or ``ends_with`` (``test``: ``str.startswith`` or ``str.endswith``): the
    affix may be one string or a list of them; false for anything but a string."""

    def affixed(value: Any, affix: Any) -> bool:
        if not isinstance(value, str):
            return False
        if affix.__class__ is list:
            try:
                return test(value, tuple(affix))  # the common case: a list of strings alone
            except TypeError:
                pass
        return test(value, _strings(affix))

    return affixed


b_starts_with, b_ends_with = _affixed(str.startswith), _affixed(str.endswith)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def b_after(observer: Observer, value: Any, prefix: Any) -> Any:
    """The part of ``value`` after ``prefix``, or null when it does not start with it. The part
    keeps the position of ``value``."""
    if not (isinstance(value, str) and isinstance(prefix, str) and value.startswith(prefix)):
        return None
    rest = observer.budget.sized(value[len(prefix) :])
    loc = getattr(value, "loc", None)
    return LocatedStr(rest, loc) if loc is not None else rest


def b_lower(observer: Observer, value: Any) -> Any:
    return observer.budget.sized(value.lower()) if isinstance(value, str) else None


def b_join(observer: Observer, items: Any, separator: Any) -> str:
    values, glue = as_items(items), separator if separator.__class__ is str else text(separator)
    try:
        joined = glue.join(values)  # all strings: at C speed
    except TypeError:
        joined = glue.join(text(item) for item in values)
    return observer.budget.sized(joined)


def b_split(observer: Observer, value: Any, separator: Any) -> list[str]:
    """The parts of the string ``value`` between each ``separator``; none for anything else."""
    if not isinstance(separator, str) or not separator:
        raise RuleFailure(f"`split` needs a separator that is a text of one character or more, not {text(separator)!r}")
    if not isinstance(value, str):
        return []
    observer.budget.spend(len(value) // 64)  # a search through the text
    return observer.budget.sized(str(value).split(separator))


def b_str(observer: Observer, value: Any) -> str:
    return observer.budget.sized(text(value))


def b_stem(observer: Observer, path: Any) -> Any:
    """A file name without folder and without its last extension: ``a/notes.ts`` → ``notes``."""
    if not isinstance(path, str):
        return None
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return observer.budget.sized(name.rsplit(".", 1)[0] if "." in name[1:] else name)


def b_closest(observer: Observer, name: Any, candidates: Any) -> Any:
    """The candidate most like ``name`` (for "did you mean"), or null when none is close."""
    if not isinstance(name, str):
        return None
    from .similar import closest_name

    return closest_name(name, observer.budget.scan(as_items(candidates)))


def b_position(value: Any) -> Any:
    """Where a manifest value was read, as ``file:line:column``; null for a computed value."""
    loc = getattr(value, "loc", None)
    return f"{loc[0]}:{loc[1]}:{loc[2]}" if loc is not None else None


def b_file_of(value: Any) -> Any:
    """The repo-relative file a manifest value was read from; null for a computed value."""
    loc = getattr(value, "loc", None)
    return loc[0] if loc is not None else None


def b_sorted(observer: Observer, items: Any) -> list[Any]:
    keys = [(type_name(item), text(item)) for item in observer.budget.scan(as_items(items))]
    observer.budget.spend(sum(len(key[1]) for key in keys))  # each item read as a text
    ordered = sorted(range(len(keys)), key=keys.__getitem__)
    found = as_items(items)
    return observer.budget.sized([found[index] for index in ordered])


def b_unique(observer: Observer, items: Any) -> list[Any]:
    return observer.budget.sized(observer.sets.unique(observer.budget.scan(as_items(items))))


def b_flatten(observer: Observer, items: Any) -> list[Any]:
    result: list[Any] = []
    for item in observer.budget.scan(as_items(items)):
        if isinstance(item, list):
            result.extend(item)
        elif item is not None:
            result.append(item)
    return observer.budget.sized(result)


def b_group_by(observer: Observer, records: Any, field: Any) -> dict[Any, list[Any]]:
    """``{value of field: [records with it]}``, records in their order."""
    groups: dict[Any, list[Any]] = {}
    for record in observer.budget.scan(as_items(records)):
        key = record.get(field) if isinstance(record, dict) else None
        if isinstance(key, str):  # (a located true, false or null holds no string)
            groups.setdefault(key if key.__class__ is str else str(key), []).append(record)
    observer.budget.build(len(groups) * OBJECT)  # each group's list
    return observer.budget.sized(groups)


def b_index_by(observer: Observer, records: Any, field: Any) -> dict[Any, Any]:
    """``{value of field: first record with it}``."""
    index: dict[Any, Any] = {}
    for record in observer.budget.scan(as_items(records)):
        key = record.get(field) if isinstance(record, dict) else None
        if isinstance(key, str):  # (a located true, false or null holds no string)
            index.setdefault(key if key.__class__ is str else str(key), record)
    return observer.budget.sized(index)


def b_index_of(observer: Observer, items: Any, value: Any) -> Any:
    """Where ``value`` first stands in the list ``items``, or null. Lists and maps compare by
    their structure, as ``==`` does: a list of views can be searched for a view, and a value
    found once stands for every value equal to it (a function remembers calls by their
    arguments' identity). The list's positions are worked out once per evaluation."""
    if not isinstance(items, list):
        return None
    positions = observer.sets.set_of(items)
    if isinstance(value, list | dict):  # looked up by its structure (asked first: no TypeError to catch)
        return positions.get(observer.sets.key(value))
    return positions.get(value)


def b_any(observer: Observer, items: Any) -> bool:
    return any(unwrap(item) for item in observer.budget.scan(as_items(items)))


def b_all(observer: Observer, items: Any) -> bool:
    return all(unwrap(item) for item in observer.budget.scan(as_items(items)))


def b_first(items: Any) -> Any:
    found = as_items(items)
    return found[0] if found else None


def b_subset(observer: Observer, items: Any, container: Any) -> bool:
    """Whether every item of the list ``items`` is in the list ``container``."""
    return observer.sets.subset(as_items(items), as_items(container))


# observations of the repository --------------------------------------------------------------


def _asking(question: str) -> Callable[[Observer, Any], bool]:
    """The built-in that asks the repository ``question`` (its method of that name) of a
    repo-relative path, once per path, and looks the answer up by the path alone after (answers
    are never None); false for anything but a string."""

    def asked(observer: Observer, path: Any) -> bool:
        if not isinstance(path, str):
            return False
        answers = observer.known[question]
        found: bool | None = answers.get(path)
        if found is None:
            found = answers[path] = getattr(observer.repo, question)(path)
        return found

    return asked


#: whether a path stays inside the repository (symbolic links followed), is there, is a file
b_inside_repo, b_exists, b_is_file = _asking("inside"), _asking("exists"), _asking("is_file")


def b_list_dir(observer: Observer, path: Any) -> list[LocatedStr]:
    """The repo-relative paths of what a folder holds, sorted, each located at line 1 of itself."""
    if not isinstance(path, str):
        return []
    listed = observer.known["list_dir"]
    names: list[str] | None = listed.get(path)
    if names is None:
        names = listed[path] = observer.repo.list_dir(path)
    folder = path.rstrip("/")
    observer.budget.build(len(names) * (len(folder) + 2 * OBJECT))  # a located path per name
    return observer.budget.sized([LocatedStr(f"{folder}/{name}", (f"{folder}/{name}", 1, 1)) for name in names])


#: name → (fewest arguments, most arguments, function, what it takes first): None for nothing,
#: "budget" for the ``Observer`` whose budget it charges, "observer" for the ``Observer`` whose
#: repository or sets it consults (a function that calls one is worth remembering)
BUILTINS: dict[str, Builtin] = {
    "len": (1, 1, b_len, None),
    "type": (1, 1, type_name, None),  # as it is: the rules ask it of every value they look at
    "keys": (1, 1, b_keys, "budget"),
    "values": (1, 1, b_values, "budget"),
    "matches": (2, 2, b_matches, "budget"),
    "starts_with": (2, 2, b_starts_with, None),
    "ends_with": (2, 2, b_ends_with, None),
    "after": (2, 2, b_after, "budget"),
    "lower": (1, 1, b_lower, "budget"),
    "join": (2, 2, b_join, "budget"),
    "split": (2, 2, b_split, "budget"),
    "str": (1, 1, b_str, "budget"),
    "stem": (1, 1, b_stem, "budget"),
    "closest": (2, 2, b_closest, "budget"),
    "position": (1, 1, b_position, None),
    "file_of": (1, 1, b_file_of, None),
    "sorted": (1, 1, b_sorted, "budget"),
    "unique": (1, 1, b_unique, "budget"),
    "flatten": (1, 1, b_flatten, "budget"),
    "group_by": (2, 2, b_group_by, "budget"),
    "index_by": (2, 2, b_index_by, "budget"),
    "index_of": (2, 2, b_index_of, "budget"),  # (its sets only a cache: no answer depends on them)
    "any": (1, 1, b_any, "budget"),
    "all": (1, 1, b_all, "budget"),
    "first": (1, 1, b_first, None),
    "subset": (2, 2, b_subset, "observer"),
    "inside_repo": (1, 1, b_inside_repo, "observer"),
    "exists": (1, 1, b_exists, "observer"),
    "is_file": (1, 1, b_is_file, "observer"),
    "list_dir": (1, 1, b_list_dir, "observer"),
}
