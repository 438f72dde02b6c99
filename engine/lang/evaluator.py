"""The runtime: a compiled program run over one manifest's facts.

``codegen.py`` turned the program into the code of ``make(rt)``; this module gives that code
what it reads (``runtime_namespace``) and runs it. Top-level ``let`` values are computed on
first use and kept. Calls of *costly* functions — those that build lists or look at the
repository, directly or through other functions — are remembered by their arguments (values
never change, so a second call would give the same): measured without it, ``resolve`` of the
benchmarks' 2,000-tool project on its first run takes 314 ms instead of 178 (``memoize``).

Truth is Python's: null, false, 0, "" and empty collections are false (``LocatedConst`` answers
``bool()`` like the value it holds).

Two kinds of facts are not plain values. A ``LazyFact`` is computed on first use, so it may use
values the rules define (the suppression comments are found with a pattern from the rules). A
``LateFact`` depends on the other rules' diagnostics: a rule that reads it, directly or through
other definitions, is put off until every other rule has run; then ``settle`` sees those
diagnostics, may drop some (suppressed ones), and gives the late facts' values.
"""

from __future__ import annotations

from ..visible import visible
from ..yaml.located import LocatedConst, LocatedList, LocatedMap, LocatedStr
from . import values
from .builtins import BUILTINS, Observer
from .errors import RulesError
from .values import ROOM, BudgetExceeded, RuleFailure

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType
    from typing import Any

    from ..edit.text_edit import TextEdit
    from .carry import Carried


class Diagnostic:
    """One finding. ``fix_value`` is what the rule's ``fix`` clause gave (the new text of the
    value at the diagnostic's position), ``fix`` the edit that makes it, once the engine has
    found where that value ends in the file (``engine/edit/fixes.py``); both None without a fix."""

    __slots__ = ("column", "file", "fix", "fix_value", "line", "message", "rule", "severity")

    def __init__(
        self, rule: str, severity: str, message: str, file: str, line: int, column: int, fix_value: str | None = None
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.fix_value = fix_value
        self.fix: TextEdit | None = None

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
            "fix": self.fix.as_dict() if self.fix is not None else None,
        }


if TYPE_CHECKING:
    #: ``settle(diagnostics)`` → (the diagnostics kept, the values of the late facts)
    Settle = Callable[[list[Diagnostic]], tuple[list[Diagnostic], dict[str, Any]]]


class LazyFact:
    """A fact computed on its first use."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[], Any]) -> None:
        self.compute = compute


class LateFact:
    """A fact known only once the other rules have run (its value comes from ``settle``)."""


class _Later(BaseException):
    """Raised where a rule reads a late fact before the other rules are done (a BaseException:
    no handler of failures in the rules takes it for one)."""


class Evaluation:
    """One run of a program over one manifest's facts."""

    def __init__(
        self,
        program: dict[str, Any],
        facts: dict[str, Any],
        observer: Observer,
        fallback_file: str,
        settle: Settle | None = None,
        carried: Carried | None = None,
        incremental: bool = False,
    ) -> None:
        """``carried``: what the evaluation of an earlier version of the same manifest left
        (``carry``), for an editor's checks as you type; what it can keep is kept (``carry.py``).
        ``incremental``: keep what the next one may need (the findings of each loop item)."""
        self.program = program
        self.facts = facts
        self.fallback_file = fallback_file
        self.budget = observer.budget
        self.sets = observer.sets
        self._built = 0  # bytes built by the evaluations since what they kept was last forgotten
        self.settle = settle
        self._settled: list[Diagnostic] | None = None
        self._pending: set[str] = set()  # lazy facts being computed
        self._first_pass = False  # running the rules that read no late fact
        self.values: dict[str, Any] = {}  # never rebound: the generated code reads it as `V`
        #: each remembered function's stores (``memoize``: each entry holds the call's arguments
        #: beside its result), each rule's diagnostics as
        #: ``Diagnostic`` arguments, and the findings of each item of a rule's first loop: what
        #: the next evaluation may keep
        self.stores: dict[str, tuple[dict[Any, Any], dict[int, Any]]] = {}
        self.results: dict[int, list[tuple[Any, ...]]] = {}
        self.items: dict[int, dict[int, tuple[Any, list[Any]]]] = {}
        self.incremental = incremental or carried is not None
        self.repo = observer.repo
        self._carried = carried if carried is not None and carried.program is program else None
        self._same_repo = self._carried is not None and self._carried.repo is observer.repo
        self._changed: dict[str, bool] = {}  # top-level name → whether it differs from the carried
        self._kept: dict[str, bool] = {}  # definition → whether what it made last time holds
        self._observes = frozenset(program["observes"])
        self._spans: dict[int, list[list[Any]]] | None = None
        costly = frozenset(program["costly"])
        namespace = runtime_namespace(self, observer, costly)
        exec(program["code"], namespace)
        self.lets, self.fns, self.rules, self.docs, self.rule_items = namespace["make"](self)

    def carry(self) -> Carried:
        """What the next evaluation of this program, over an edited manifest, may keep (an
        incremental evaluation's: only it keeps each remembered call's arguments)."""
        assert self.incremental, "only an incremental evaluation is carried"
        from .carry import Carried  # (here: only an editor's evaluations are carried)

        return Carried(self.program, self.values, self.stores, self.results, self.items, self.repo)

    def changed(self, name: str) -> bool:
        """Whether the top-level value ``name`` differs from the carried evaluation's (computing
        it if need be; one that cannot be computed here counts as changed)."""
        found = self._changed.get(name)
        if found is None:
            if self.facts.get(name).__class__ is LateFact:
                return True
            try:
                self.value(name)
            except (Exception, _Later):
                return True
            found = self._changed.get(name, True)
        return found

    def keeps(self, key: str) -> bool:
        """Whether what the definition ``key`` (``let:x``, ``fn:f``, ``rule:3``) made in the
        carried evaluation holds in this one: nothing it reads changed, nor, if it looks at the
        repository, the repository view."""
        found = self._kept.get(key)
        if found is None:
            reads = self.program["reads"][key]
            if self._carried is None or (not self._same_repo and key in self._observes):
                found = False
            elif any(self._changed.get(name) for name in reads):
                found = False  # known already: nothing to compute
            else:
                # the facts first (cheap to compare), so that a changed fact spares computing lets
                facts = self.facts
                found = not any(self.changed(name) for name in sorted(reads, key=lambda name: name not in facts))
            self._kept[key] = found
        return found

    def get(self, name: str) -> Any:
        """A top-level value, for the engine: a fact or a ``let``, with a budget of its own."""
        try:
            return self.values[name]
        except KeyError:
            pass
        self._begin()
        try:
            return self.value(name)
        except BudgetExceeded as err:
            raise self._failure(err, f"`{name}`", self.program["defined"].get(f"let:{name}")) from None

    def _begin(self) -> None:
        """A new evaluation: its own steps and room. What earlier ones built and this run keeps
        — ``let`` values, remembered calls, membership sets — is forgotten once they built more
        than ``ROOM`` together: all of it can be computed again, and nothing else would bound it."""
        budget = self.budget
        self._built += ROOM - budget.room
        budget.reset()
        if self._built > ROOM:
            self._built = 0
            for memo, by_id in self.stores.values():
                memo.clear()  # in place: the remembered functions hold them
                by_id.clear()
            self.sets.forget()
            for name in self.program["lets"]:
                self.values.pop(name, None)

    def value(self, name: str) -> Any:
        """A top-level value, as the rules read it (``G``): computed on first use, then kept."""
        try:
            return self.values[name]
        except KeyError:
            pass
        carried = self._carried
        if name in self.facts:
            value = self.facts[name]
            if value.__class__ is LazyFact:
                value = self._lazy(name, value)
            elif value.__class__ is LateFact:
                if self._first_pass:
                    raise _Later
                self.diagnostics()
                return self.values[name]
        elif carried is not None and name in carried.values and self.keeps(f"let:{name}"):
            value = self.values[name] = carried.values[name]
            self._changed[name] = False
            return value
        else:
            self.budget.spend(self.program["weights"][f"let:{name}"])
            self.budget.build(self.program["rooms"].get(f"let:{name}", 0))
            try:
                value = self.lets[name]()
            except (BudgetExceeded, RulesError):
                raise
            except Exception as err:
                raise self._failure(err, f"`{name}`", self.program["defined"][f"let:{name}"]) from None
        if carried is not None:
            from .carry import same

            old = carried.values.get(name, _MISSING)
            if old is _MISSING:
                # never needed there: had it been, it would have been this value if nothing it
                # reads changed (a constant, say), so what was made without it still holds
                key = f"let:{name}"
                unchanged = key in self.program["reads"] and self.keeps(key)
            else:
                unchanged = same(value, old)
                if unchanged:
                    value = old  # the old object: what depends on it by identity is kept too
            self._changed[name] = not unchanged
        self.values[name] = value
        return value

    def _lazy(self, name: str, fact: LazyFact) -> Any:
        if name in self._pending:
            raise RulesError(self.fallback_file, 1, 1, f"the fact `{name}` depends on itself")
        self._pending.add(name)
        try:
            return fact.compute()
        finally:
            self._pending.discard(name)

    def call(self, name: str, args: list[Any]) -> Any:
        """Call a function the rules define, for the engine, with a budget of its own."""
        self._begin()
        try:
            self.budget.spend(self.program["weights"][f"fn:{name}"])
            self.budget.build(self.program["rooms"].get(f"fn:{name}", 0))
            return self.fns[name](*args)
        except RulesError:
            raise
        except Exception as err:
            raise self._failure(err, f"`{name}`", self.program["defined"][f"fn:{name}"]) from None

    def render_doc(self, index: int) -> str:
        """The text of rule ``index``'s doc template."""
        rule = self.program["rules"][index]
        self._begin()
        try:
            return str(self.docs[index]())
        except RulesError:
            raise
        except Exception as err:
            raise self._failure(err, f"the doc of rule `{rule['id']}`", [rule["file"], *rule["pos"]]) from None

    def memoize(self, name: str, function: Callable[..., Any], costly: frozenset[str]) -> Callable[..., Any]:
        if name not in costly:
            return function
        # Each function has stores of its own: key → (arguments, result), the arguments kept
        # alive so that an id used in a key stays theirs.
        memo: dict[Any, tuple[Any, Any]] = {}
        by_id: dict[int, tuple[Any, Any]] = {}  # one-parameter calls on a record or list
        self.stores[name] = (memo, by_id)  # for the next evaluation (``carry``), and to forget
        if self._carried is not None:
            return self._memoize_carried(name, function, memo, by_id)
        plain, containers = _PLAIN_KEYS, _CONTAINERS
        arity = function.__code__.co_argcount

        # One- and two-parameter functions (most of them) get a key without building an
        # argument list; a plain string or number is its own key, a record or list its id.
        # (Measured with the general one alone: resolve of 2,000 tools, 15 % more instructions.)
        def remembered1(a: Any) -> Any:
            cls = a.__class__
            if cls in containers:
                found = by_id.get(id(a))
                if found is None:
                    found = by_id[id(a)] = (a, function(a))
                return found[1]
            key = a if cls in plain else _identity(a)
            found = memo.get(key)
            if found is None:
                found = memo[key] = (a, function(a))
            return found[1]

        def remembered2(a: Any, b: Any) -> Any:
            # `_identity` written out for the common arguments: a plain value, a record or list
            kind = a.__class__
            first = a if kind in plain else ("id", id(a)) if kind in containers else _identity(a)
            kind = b.__class__
            key = (first, b if kind in plain else ("id", id(b)) if kind in containers else _identity(b))
            found = memo.get(key)
            if found is None:
                found = memo[key] = ((a, b), function(a, b))
            return found[1]

        def remembered(*args: Any) -> Any:
            key = tuple(map(_identity, args))
            found = memo.get(key)
            if found is None:
                found = memo[key] = (args, function(*args))
            return found[1]

        return remembered1 if arity == 1 else remembered2 if arity == 2 else remembered

    def _memoize_carried(
        self,
        name: str,
        function: Callable[..., Any],
        memo: dict[Any, tuple[Any, Any]],
        by_id: dict[int, tuple[Any, Any]],
    ) -> Callable[..., Any]:
        """``memoize``, taking a call's result from the carried evaluation's stores when the
        function reads nothing that changed."""
        assert self._carried is not None
        old_memo, old_by_id = self._carried.stores.get(name, ({}, {}))
        keeps, plain, containers = self.keeps, _PLAIN_KEYS, _CONTAINERS
        defined = f"fn:{name}"

        def remembered1(a: Any) -> Any:
            cls = a.__class__
            if cls in containers:
                found = by_id.get(id(a))
                if found is None:
                    found = old_by_id.get(id(a))
                    if found is None or found[0] is not a or not keeps(defined):
                        found = (a, function(a))
                    by_id[id(a)] = found
                return found[1]
            key = a if cls in plain else _identity(a)
            found = memo.get(key)
            if found is None:
                found = old_memo.get(key)
                if found is None or not keeps(defined):
                    found = (a, function(a))
                memo[key] = found
            return found[1]

        def remembered(*args: Any) -> Any:
            key = tuple(map(_identity, args))
            found = memo.get(key)
            if found is None:
                found = old_memo.get(key)
                if found is None or not keeps(defined):
                    found = (args, function(*args))
                memo[key] = found
            return found[1]

        return remembered1 if function.__code__.co_argcount == 1 else remembered

    def diagnostics(self) -> list[Diagnostic]:
        """Every rule's diagnostics, sorted; rules that read a late fact run last."""
        if self._settled is not None:
            return self._settled
        found: list[Diagnostic] = []
        later = []
        self._first_pass = True
        try:
            for index, (rule, run) in enumerate(zip(self.program["rules"], self.rules, strict=True)):
                kept = self._kept_results(index)
                if kept is not None:
                    found.extend(kept)
                    continue
                if self.incremental and index in self.rule_items:
                    run = self._item_by_item(index, run)
                try:
                    found.extend(self._recorded(index, list(self._run_rule(index, rule, run))))
                except _Later:
                    later.append((index, rule, run))
        finally:
            self._first_pass = False
        late_values: dict[str, Any] = {}
        if self.settle is not None:
            found, late_values = self.settle(found)
        self.values.update(late_values)
        for name, value in self.facts.items():
            if value.__class__ is LateFact and name not in self.values:
                self.values[name] = []  # nothing settled it: no value
        self._settled = found
        for index, rule, run in later:
            found.extend(self._recorded(index, list(self._run_rule(index, rule, run))))
        found.sort(key=Diagnostic.sort_key)
        return found

    def _kept_results(self, index: int) -> list[Diagnostic] | None:
        """Rule ``index``'s diagnostics from the carried evaluation, when they hold."""
        carried = self._carried
        if carried is None or index not in carried.results or not self.keeps(f"rule:{index}"):
            return None
        made = self.results[index] = carried.results[index]
        if index in carried.items:
            self.items[index] = carried.items[index]
        return [Diagnostic(*arguments) for arguments in made]

    def _item_by_item(self, index: int, run: Callable[[], Iterator[Any]]) -> Callable[[], Iterator[Any]]:
        """Rule ``index`` (``for x in NAME …``) run item by item: each item's findings are kept
        for the next evaluation, and taken from the carried one for an item that is the same
        object when the rest of the rule reads nothing that changed. ``run`` (the whole rule)
        when the loop would go over the budget: it fails there, as it does in one piece."""
        name, weight, room = self.program["loops"][str(index)]
        each = self.rule_items[index]
        carried = self._carried
        old = carried.items.get(index) if carried is not None and self.keeps(f"item:{index}") else None
        made: dict[int, tuple[Any, list[Any]]] = {}
        self.items[index] = made

        def item_by_item() -> Iterator[Any]:
            items = values.as_items(self.value(name))
            if len(items) * weight > self.budget.left or len(items) * room > self.budget.room:
                yield from run()
                return
            self.budget.spend(len(items) * weight)
            self.budget.build(len(items) * room)
            keys = list(map(id, items))
            # what the carried evaluation found for each item, looked up at C speed
            carried_found = list(map(old.get, keys)) if old is not None else [None] * len(keys)
            for item, key, found in zip(items, keys, carried_found, strict=True):
                if found is None or found[0] is not item:
                    found = made.get(key)  # the same item earlier in the list
                    if found is None or found[0] is not item:
                        found = (item, each(item))
                made[key] = found
                if found[1]:
                    yield from found[1]

        return item_by_item

    def _recorded(self, index: int, found: list[Diagnostic]) -> list[Diagnostic]:
        self.results[index] = [(d.rule, d.severity, d.message, d.file, d.line, d.column, d.fix_value) for d in found]
        return found

    def _run_rule(
        self, index: int, rule: dict[str, Any], run: Callable[[], Iterator[tuple[Any, str, str | None]]]
    ) -> Iterator[Diagnostic]:
        """A rule's diagnostics, with a budget of its own. A failure is reported at the failing
        expression, with the manifest value the rule was looking at."""
        rule_id, severity = rule["id"], rule["severity"]
        self._begin()
        try:
            self.budget.spend(self.program["weights"][f"rule:{index}"])
            self.budget.build(self.program["rooms"].get(f"rule:{index}", 0))
            for at, message, fix in run():
                loc = getattr(at, "loc", None) or (self.fallback_file, 1, 1)
                # a manifest value in the text or the file name is shown escaped: one line, no control codes
                yield Diagnostic(rule_id, severity, visible(message), visible(loc[0]), loc[1], loc[2], fix)
        except RulesError:
            raise
        except Exception as err:
            raise self._failure(err, f"rule `{rule_id}`", [rule["file"], *rule["pos"]], in_rule=True) from None

    # failures ------------------------------------------------------------------------------------

    def _failure(self, err: Exception, what: str, defined: list[Any] | None, in_rule: bool = False) -> RulesError:
        """``err``, raised while the generated code ran, as a rules error: at the rules expression
        of the innermost generated-code instruction it passed through (else where ``what`` is
        defined), naming ``what`` and, in a rule, the manifest value the rule was looking at.
        An error the generated code did not pass through is the engine's own: raised as is."""
        passed, checked = [], None
        over_budget = isinstance(err, BudgetExceeded)  # no one value led there
        trace = err.__traceback__
        generated = self.program["code"].co_filename  # "<rules>", or the precompiled module's file
        while trace is not None:
            code = trace.tb_frame.f_code
            if code.co_filename == generated:
                passed.append(trace)
                if in_rule and checked is None and code.co_name.startswith("r_") and not over_budget:
                    checked = _checked_value(trace.tb_frame.f_locals)
            trace = trace.tb_next
        if not passed:
            raise err
        # the innermost expression; a charge of the budget is none (`BUILD`): the one around it
        at = (self._expression_at(trace) for trace in reversed(passed))
        where = next((found for found in at if found is not None), None) or defined or [self.fallback_file, 1, 1]
        message = f"{what}: {_reason(err)}"
        if checked is not None:
            message += f", while checking {checked}"
        return RulesError(where[0], where[1], where[2], message)

    def _expression_at(self, trace: TracebackType) -> list[Any] | None:
        """The rules position of the instruction ``trace`` stopped at, from the table of spans."""
        if self._spans is None:
            import marshal

            self._spans = {}
            for span in marshal.loads(self.program["spans"]):
                self._spans.setdefault(span[0], []).append(span)
        positions = list(trace.tb_frame.f_code.co_positions())
        line, end_line, start, end = positions[trace.tb_lasti // 2]
        if line is None or start is None or end is None or end_line != line:
            return None
        spans = self._spans.get(line, [])
        around = [span for span in spans if span[1] <= start and end <= span[2]]
        if around:
            return list(min(around, key=lambda span: span[2] - span[1])[3:])
        inside = [span for span in spans if start <= span[1] and span[2] <= end]
        if inside:
            return list(max(inside, key=lambda span: span[2] - span[1])[3:])
        return None


def _reason(err: Exception) -> str:
    if isinstance(err, RuleFailure | TypeError | ValueError):
        return str(err)
    if isinstance(err, RecursionError):
        return "values nested too deeply"
    if isinstance(err, MemoryError):
        return "its values do not fit in the machine"
    return f"{type(err).__name__}: {err}"


def _checked_value(local: dict[str, Any]) -> str | None:
    """Where the manifest value a rule's innermost loop variable holds was read, if it was."""
    for name, value in reversed(list(local.items())):
        if not name.startswith("v_"):
            continue
        loc = getattr(value, "loc", None)
        if loc is None and isinstance(value, dict):
            loc = next((item.loc for item in value.values() if getattr(item, "loc", None)), None)
        if loc is not None:
            return f"{loc[0]}:{loc[1]}:{loc[2]}"
    return None


def runtime_namespace(evaluation: Evaluation, observer: Observer, costly: frozenset[str]) -> dict[str, Any]:
    """What generated code reads: the helpers named in ``codegen.HELPERS``."""
    return {
        "G": evaluation.value,
        "V": evaluation.values,
        "A": values.get_attr,
        "I": values.get_index,
        "IN": observer.sets.contains,
        "OP": observer.sets.binop,
        "EQ": observer.budget.equal,
        "LT": observer.budget.ordering("<"),
        "LE": observer.budget.ordering("<="),
        "GT": observer.budget.ordering(">"),
        "GE": observer.budget.ordering(">="),
        "ITEMS": observer.budget.items,
        "PAIRS": observer.budget.pairs,
        "BUILD": observer.budget.build,
        "BUDGET": observer.budget,
        "T": values.text,
        "TJ": observer.budget.joined,
        "FIX": _fix_text,
        "MEMO": lambda name, function: evaluation.memoize(name, function, costly),
        "OBS": observer,
        "TN": values.TYPE_NAMES,
        **{f"B_{name}": entry[2] for name, entry in BUILTINS.items()},
    }


def _fix_text(value: Any) -> str | None:
    """What a ``fix`` clause gave: the new text, or None (null: no fix for this finding)."""
    return None if values.is_null(value) else values.text(value)


#: argument types that are their own memo key (hashable by value, no position that could end up
#: in the result)
_PLAIN_KEYS = frozenset({str, int, float, bool, type(None)})
#: the containers manifest data and rule values are made of: remembered by identity (never changed)
_CONTAINERS = frozenset({dict, list, LocatedMap, LocatedList})


_MISSING = object()


def _identity(value: Any) -> Any:
    """A memo key for an argument: itself when hashable by value, else its identity."""
    kind = value.__class__
    if kind is LocatedStr:
        return ("str", value, value.loc)  # the result may carry the argument's position
    if kind in _CONTAINERS or isinstance(value, dict | list):
        return ("id", id(value))
    if isinstance(value, LocatedConst):
        return ("const", value.value)
    return value
