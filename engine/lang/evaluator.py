"""The runtime: a compiled program run over one manifest's facts.

``codegen.py`` turned the program into the code of ``make(rt)``; this module gives that code
what it reads (``runtime_namespace``) and runs it. Top-level ``let`` values are computed on
first use and kept. Calls of *costly* functions — those that build lists or look at the
repository, directly or through other functions — are remembered by their arguments (values
never change, so a second call would give the same).

Truth is Python's: null, false, 0, "" and empty collections are false (``LocatedConst`` answers
``bool()`` like the value it holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..located import LocatedConst, LocatedStr
from . import values
from .builtins import BUILTINS, Observer
from .errors import RulesError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


class Diagnostic:
    __slots__ = ("column", "file", "line", "message", "rule", "severity")

    def __init__(self, rule: str, severity: str, message: str, file: str, line: int, column: int) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
        }


class Evaluation:
    """One run of a program over one manifest's facts."""

    def __init__(self, program: dict[str, Any], facts: dict[str, Any], observer: Observer, fallback_file: str) -> None:
        self.program = program
        self.facts = facts
        self.fallback_file = fallback_file
        self.values: dict[str, Any] = {}
        self.memo: dict[tuple[Any, ...], tuple[list[Any], Any]] = {}
        costly = frozenset(program["costly"])
        namespace = runtime_namespace(self, observer, costly)
        exec(program["code"], namespace)
        self.lets, self.fns, self.rules = namespace["make"](self)

    def get(self, name: str) -> Any:
        """A top-level value: a fact or a ``let``."""
        try:
            return self.values[name]
        except KeyError:
            pass
        if name in self.facts:
            value = self.facts[name]
        else:
            try:
                value = self.lets[name]()
            except TypeError as err:
                raise self._failure("let", name, err) from None
        self.values[name] = value
        return value

    def call(self, name: str, args: list[Any]) -> Any:
        """Call a function the rules define."""
        try:
            return self.fns[name](*args)
        except TypeError as err:
            raise self._failure("fn", name, err) from None

    def memoize(self, name: str, function: Callable[..., Any], costly: frozenset[str]) -> Callable[..., Any]:
        if name not in costly:
            return function
        memo = self.memo

        def remembered(*args: Any) -> Any:
            key = (name, *map(_identity, args))
            found = memo.get(key)
            if found is None:
                found = memo[key] = (list(args), function(*args))  # args kept alive: ids stay theirs
            return found[1]

        return remembered

    def diagnostics(self) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for rule, run in zip(self.program["rules"], self.rules, strict=True):
            found.extend(self._run_rule(rule, run))
        found.sort(key=Diagnostic.sort_key)
        return found

    def _run_rule(self, rule: dict[str, Any], run: Callable[[], Iterator[tuple[Any, str]]]) -> Iterator[Diagnostic]:
        rule_id, severity = rule["id"], rule["severity"]
        try:
            for at, message in run():
                loc = getattr(at, "loc", None) or (self.fallback_file, 1, 1)
                yield Diagnostic(rule_id, severity, message, loc[0], loc[1], loc[2])
        except TypeError as err:
            line, column = rule["pos"]
            raise RulesError(rule["file"], line, column, f"rule `{rule_id}` failed: {err}") from None

    def _failure(self, kind: str, name: str, err: TypeError) -> RulesError:
        where = self.program["defined"][f"{kind}:{name}"]
        return RulesError(where[0], where[1], where[2], f"`{name}` failed: {err}")


def runtime_namespace(evaluation: Evaluation, observer: Observer, costly: frozenset[str]) -> dict[str, Any]:
    """What generated code reads: the helpers named in ``codegen.HELPERS``."""
    return {
        "G": evaluation.get,
        "A": values.get_attr,
        "I": values.get_index,
        "IN": observer.sets.contains,
        "OP": observer.sets.binop,
        "EQ": values.equal,
        "NULL": values.is_null,
        "CMP": values.compare,
        "ITEMS": values.as_items,
        "PAIRS": values.as_pairs,
        "T": values.text,
        "MEMO": lambda name, function: evaluation.memoize(name, function, costly),
        "OBS": observer,
        "B": {name: entry[2] for name, entry in BUILTINS.items()},
    }


def _identity(value: Any) -> Any:
    """A memo key for an argument: itself when hashable by value, else its identity."""
    if isinstance(value, dict | list):
        return ("id", id(value))
    if isinstance(value, LocatedConst):
        return ("const", value.value)
    if isinstance(value, LocatedStr):
        return ("str", str(value), value.loc)  # the result may carry the argument's position
    return value
