"""The runtime: a compiled program run over one manifest's facts.

``codegen.py`` turned the program into the code of ``make(rt)``; this module gives that code
what it reads (``runtime_namespace``) and runs it. Top-level ``let`` values are computed on
first use and kept; calls of *costly* functions — those that build lists or look at the
repository, directly or through other functions — are remembered by their arguments
(``memo.py``); a hoisted comprehension is computed once (``hoist.py``), and a guarded loop walks
what its index selects (``indexes.py``). An editor's evaluation also records what each
remembered call and loop item reads, so that the next one keeps what still holds
(``carry.py``).

Truth is Python's: null, false, 0, "" and empty collections are false (``LocatedConst`` answers
``bool()`` like the value it holds).

Two kinds of facts are not plain values. A ``LazyFact`` is computed on first use, so it may use
values the rules define (the suppression comments are found with a pattern from the rules). A
``LateFact`` depends on the other rules' diagnostics: a rule that reads it, directly or through
other definitions, is put off until every other rule has run; then ``settle`` sees those
diagnostics, may drop some (suppressed ones), and gives the late facts' values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..printable import printable
from . import memo, values
from .builtins import BUILTINS, Observer
from .errors import RulesError
from .indexes import Indexes
from .values import ROOM, BudgetExceeded, RuleFailure

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType
    from typing import Any

    from ..edit.text_edit import TextEdit
    from .carry import Carried, Walk
    from .memo import Entry


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
        self.indexes = Indexes(observer.budget)  # each guarded loop's list, indexed (``indexes.py``)
        self._built = 0  # bytes built by the evaluations since what they kept was last forgotten
        self.settle = settle
        self._settled: list[Diagnostic] | None = None
        self._pending: set[str] = set()  # lazy facts being computed
        self._first_pass = False  # running the rules that read no late fact
        self.values: dict[str, Any] = {}  # never rebound: the generated code reads it as `V`
        #: what computing each hoisted comprehension charged the budget: (steps, bytes); and
        #: what the named values computed while one is computed charged
        self.charges: dict[str, tuple[int, int]] = {}
        self._named_charges: list[int] | None = None
        #: each remembered function's store (``memo.py``), each rule's diagnostics as
        #: ``Diagnostic`` arguments, and each loop walked item by item (``loops``): what the
        #: next evaluation may keep
        self.stores: dict[str, dict[Any, Entry]] = {}
        self._by_value: list[dict[Any, list[Any]]] = []
        self.results: dict[int, list[tuple[Any, ...]]] = {}
        self.walks: dict[str, Walk] = {}
        self.incremental = incremental or carried is not None
        self.repo = observer.repo
        self._carried = carried if carried is not None and carried.program is program else None
        self._same_repo = self._carried is not None and self._carried.repo is observer.repo
        self._changed: dict[str, bool] = {}  # top-level name → whether it differs from the carried
        self._changed_keys: dict[str, set[Any] | None] = {}  # … and, for a map, at which keys
        self._replaced: dict[tuple[int, int], tuple[list[Any], list[Any], list[int]]] = {}
        self._kept: dict[str, bool] = {}  # definition → whether what it made last time holds
        self._observes = frozenset(program["observes"])
        #: what an editor's check records of what each remembered call and loop item reads: the
        #: record of the one running (None: none, or not an editor's check), and the names
        #: whose value can change from one manifest to another
        self._deps: dict[Any, Any] | None = None
        self._varying = frozenset([*program["varying"], *facts])
        self._positional = frozenset(program["positional"])
        self._spans: dict[int, list[list[Any]]] | None = None
        costly = frozenset(program["costly"])
        namespace = runtime_namespace(self, observer, costly)
        exec(program["code"], namespace)
        self.lets, self.fns, self.rules, self.docs, self.loop_items = namespace["make"](self)

    def carry(self) -> Carried:
        """What the next evaluation of this program, over an edited manifest, may keep (an
        incremental evaluation's: only it keeps each remembered call's arguments)."""
        assert self.incremental, "only an incremental evaluation is carried"
        from .carry import Carried  # (here: only an editor's evaluations are carried)

        return Carried(self.program, self.values, self.charges, self.stores, self.results, self.walks, self.repo)

    def forget_carried(self) -> None:
        """Let go of the carried evaluation once this one has taken what it keeps. Its values,
        remembered calls and walks are emptied in place: what this evaluation took from them it
        holds itself, and the rest is freed now, by reference counting, instead of when the
        cyclic collector walks the dead evaluation (its generated functions refer to it). A
        value computed later is computed afresh."""
        carried, self._carried = self._carried, None
        if carried is None:
            return
        carried.values.clear()
        for store in carried.stores.values():
            store.clear()
        for container in (carried.stores, carried.walks, carried.results, carried.charges):
            container.clear()

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
            for store in self.stores.values():
                store.clear()  # in place: the remembered functions hold them
            for shared in self._by_value:
                shared.clear()
            self.walks.clear()
            self.sets.forget()
            self.indexes.forget()
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
            if name in carried.charges:
                self.charges[name] = carried.charges[name]
            self._changed[name] = False
            return value
        else:
            value = self._compute_let(name)
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

    def _compute_let(self, name: str) -> Any:
        """Compute a ``let``. What computing a hoisted comprehension charged the budget is kept
        for its later reads, but for the named values it computed on the way: those are
        computed once in any case."""
        budget = self.budget
        budget.spend(self.program["weights"][f"let:{name}"])
        budget.build(self.program["rooms"].get(f"let:{name}", 0))
        left, room = budget.left, budget.room
        hoisted, outer, reading = name[0] == "#", self._named_charges, self._deps
        self._named_charges = [0, 0] if hoisted else None
        self._deps = None  # a let's value depends on the names it reads, not on who reads it
        try:
            key = f"let:{name}"
            value = self._walk(key) if self.incremental and key in self.loop_items else self.lets[name]()
        except (BudgetExceeded, RulesError):
            raise
        except Exception as err:
            if hoisted:  # the failure is the expression's where it is read
                raise
            raise self._failure(err, f"`{name}`", self.program["defined"][f"let:{name}"]) from None
        finally:
            named, self._named_charges, self._deps = self._named_charges, outer, reading
        steps, built = left - budget.left, room - budget.room
        if hoisted:
            assert named is not None
            self.charges[name] = (steps - named[0], built - named[1])
            steps, built = named
        if outer is not None:
            outer[0] += steps
            outer[1] += built
        return value

    def hoisted(self, name: str) -> Any:
        """A hoisted comprehension's value (``H``, ``hoist.py``): computed once, and charged to
        the budget at each read what computing it charged; in an editor's check, recorded as
        read, as a top-level value is."""
        deps = self._deps
        if deps is not None and name in self._varying:
            deps[name] = True
        try:
            value = self.values[name]
        except KeyError:
            return self.value(name)
        steps, room = self.charges.get(name, (0, 0))
        self.budget.spend(steps)
        self.budget.build(room)
        return value

    def read(self, name: str) -> Any:
        """A top-level value, as the rules read it in an editor's check (``G``): recorded as
        read by the remembered call or loop item running."""
        deps = self._deps
        if deps is not None and name in self._varying:
            deps[name] = True
        return self.value(name)

    def read_key(self, name: str, key: Any) -> Any:
        """A top-level value read for ``name[key]`` (``GK``): in an editor's check, recorded as a
        read of that key alone, with what it gave."""
        value = self.value(name)
        deps = self._deps
        if deps is not None:
            try:
                deps[(name, key)] = values.get_index(value, key)
            except TypeError:  # a key that is a list or map: the whole value read
                deps[name] = True
        return value

    def _lazy(self, name: str, fact: LazyFact) -> Any:
        if name in self._pending:
            raise RulesError(self.fallback_file, 1, 1, f"the fact `{name}` depends on itself")
        self._pending.add(name)
        reading, self._deps = self._deps, None
        try:
            return fact.compute()
        finally:
            self._pending.discard(name)
            self._deps = reading

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
        """``function`` remembered by its arguments (``memo.py``), if it is costly: it builds
        lists or looks at the repository, itself or through the functions it calls."""
        if name not in costly:
            return function
        store: dict[Any, Entry] = {}
        self.stores[name] = store  # for the next evaluation (``carry``), and to forget
        by_value: dict[Any, list[Any]] = {}  # `memo.value_key` → [an entry, whether it `shares`]
        self._by_value.append(by_value)
        positional = name in self._positional

        def compute(args: tuple[Any, ...]) -> Entry:
            return (args, function(*args), None)

        def miss(key: Any, args: tuple[Any, ...], compute: Callable[..., Entry] = compute) -> Entry:
            blind = None if positional else memo.value_key(args, self.sets.key)
            if blind is not None:
                found = by_value.get(blind)
                if found is not None:
                    if found[1] is None:
                        found[1] = memo.shares(found[0], self.budget)
                    if found[1]:  # (stored with its own arguments: an identity in the key stays theirs)
                        shared: Entry = (args, found[0][1], found[0][2])
                        store[key] = shared
                        return shared
            entry = store[key] = compute(args)
            if blind is not None and blind not in by_value:
                by_value[blind] = [entry, None]
            return entry

        if not self.incremental:
            return memo.remembered(function, store, miss)

        def recorded(args: tuple[Any, ...]) -> Entry:
            outer = self._deps
            deps: dict[Any, Any] = {}
            self._deps = deps
            try:
                return (args, function(*args), deps)
            finally:
                self._deps = outer

        def recalled(key: Any, args: tuple[Any, ...]) -> Entry:
            entry = self._recall(name, key)
            if entry is None:
                return miss(key, args, recorded)
            store[key] = entry
            return entry

        return memo.reading(store, recalled, lambda: self._deps)

    def _recall(self, name: str, key: Any) -> Entry | None:
        """The carried evaluation's call of ``name`` under ``key``, if what it read holds."""
        carried = self._carried
        entry = carried.stores[name].get(key) if carried is not None and name in carried.stores else None
        if entry is None or (not self._same_repo and f"fn:{name}" in self._observes):
            return None
        return entry if self.holds(entry[2]) else None

    def holds(self, deps: dict[Any, Any] | None) -> bool:
        """Whether what a remembered call or loop item of the carried evaluation read — top-level
        values, and keys of them — is the same in this one."""
        if not deps:
            return deps is not None
        for dep, seen in deps.items():
            if dep.__class__ is str:
                if self.changed(dep):
                    return False
            elif self.changed(dep[0]) and self.changed_at(dep[0], dep[1], seen):
                return False
        return True

    def changed_keys(self, name: str) -> set[Any] | None:
        """The keys at which ``name``, a map that changed, differs from the carried evaluation's
        (None: it or the old value is no map), worked out once."""
        if name not in self._changed_keys:
            from .carry import changed_keys

            assert self._carried is not None
            self._changed_keys[name] = changed_keys(self.value(name), self._carried.values.get(name))
        return self._changed_keys[name]

    def replaced(self, items: list[Any], before: list[Any]) -> list[int]:
        """The positions where list ``items`` holds another object than ``before``, a list as
        long (worked out once for each pair: the loops over one list share it)."""
        key = (id(items), id(before))
        found = self._replaced.get(key)
        if found is None or found[0] is not items or found[1] is not before:
            found = self._replaced[key] = (
                items,
                before,
                [i for i, (a, b) in enumerate(zip(items, before, strict=True)) if a is not b],
            )
        return found[2]

    def changed_at(self, name: str, key: Any, seen: Any) -> bool:
        """Whether ``name[key]`` differs from ``seen``, what it gave in the carried evaluation
        (``name`` changed)."""
        keys = self.changed_keys(name)
        if keys is not None:
            return key in keys
        from .carry import same

        return not same(values.get_index(self.value(name), key), seen)

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
                if self.incremental and f"rule:{index}" in self.loop_items:
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
        key = f"rule:{index}"
        if key in carried.walks:
            self.walks[key] = carried.walks[key]
        return [Diagnostic(*arguments) for arguments in made]

    def _item_by_item(self, index: int, run: Callable[[], Iterator[Any]]) -> Callable[[], Iterator[Any]]:
        """Rule ``index`` (``for x in NAME …``) run item by item (``_walk``); ``run`` (the whole
        rule) when the loop would go over the budget: it fails there, as it does in one piece."""

        def item_by_item() -> Iterator[Any]:
            from itertools import chain

            return chain.from_iterable(filter(None, self._walk(f"rule:{index}", run)))

        return item_by_item

    def _walk(self, key: str, whole: Callable[[], Any] | None = None) -> list[Any]:
        """What the function of one item of loop ``key`` (``loops``: a rule's first loop, or a
        ``let`` that is a comprehension) gives for each item, in order — taken from the carried
        evaluation's walk of the loop for each item that is the same object as then, when what
        it read is the same (``carry.Walk``); for a ``let``, the items it keeps. ``whole``: what
        to run instead when the walk would go over the budget (it fails there)."""
        from .carry import Walk

        name, weight, room = self.program["loops"][key]
        items = values.as_items(self.value(name))
        budget = self.budget
        if whole is not None and (len(items) * weight > budget.left or len(items) * room > budget.room):
            return [list(whole())]
        budget.spend(len(items) * weight)
        budget.build(len(items) * room)
        carried = self._carried
        old = carried.walks.get(key) if carried is not None else None
        observing = (f"item:{key[5:]}" if key.startswith("rule:") else key) in self._observes
        if old is not None and not self._same_repo and observing:
            old = None
        walk = Walk(items)
        each, outer = self.loop_items[key], self._deps
        try:
            for position in walk.take(old, self) if old is not None else range(len(items)):
                deps = self._deps = {}
                walk.put(position, each(items[position]), deps or None)
        finally:
            self._deps = outer
        self.walks[key] = walk
        found = walk.found
        return [item for item in found if item is not values.SKIP] if key.startswith("let:") else found

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
                yield Diagnostic(rule_id, severity, printable(message), printable(loc[0]), loc[1], loc[2], fix)
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
        # an editor's check reads every top-level value through `G`, which records the read
        "G": evaluation.read if evaluation.incremental else evaluation.value,
        "V": {} if evaluation.incremental else evaluation.values,
        "GK": evaluation.read_key if evaluation.incremental else lambda name, key: evaluation.value(name),
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
        "H": evaluation.hoisted,
        "SKIP": values.SKIP,
        # An editor's check walks every item: an index is built once, so what its guard read
        # would be recorded for the loop that built it only, and the next check keep the others'
        "PICK": (
            evaluation.indexes.pick
            if not evaluation.incremental
            else lambda value, guards, weight, room=0: observer.budget.items(value, weight, room)
        ),
        **{f"B_{name}": entry[2] for name, entry in BUILTINS.items()},
    }


def _fix_text(value: Any) -> str | None:
    """What a ``fix`` clause gave: the new text, or None (null: no fix for this finding)."""
    return None if values.is_null(value) else values.text(value)


_MISSING = object()
