"""Program + facts → values and diagnostics.

Each expression node is compiled once per evaluation into a Python closure taking the local
variables (a dict); names are resolved while compiling, so running a closure does no lookups by
scope. Top-level ``let`` values are computed on first use and kept; function calls are
remembered by their arguments (values never change, so a second call would give the same).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..located import LocatedConst, LocatedStr, unwrap
from .builtins import BUILTINS, Observer
from .errors import RulesError
from .values import SetCache, as_items, as_pairs, binop, compare, get_attr, get_index, text

Node = dict[str, Any]
Env = dict[str, Any]
Code = Callable[[Env], Any]


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

    def __init__(self, program: Node, facts: dict[str, Any], observer: Observer, fallback_file: str) -> None:
        self.program = program
        self.facts = facts
        self.observer = observer
        self.fallback_file = fallback_file
        self.sets = SetCache()
        self.values: dict[str, Any] = {}
        self.lets: dict[str, Code] = {}
        self.fns: dict[str, tuple[list[str], Code]] = {}
        self.memo: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        self.file = ""
        for name, node in program["lets"].items():
            self.file = node["file"]
            self.lets[name] = self.compile(node["expr"], frozenset())
        for name, node in program["fns"].items():
            self.file = node["file"]
            self.fns[name] = (node["params"], self.compile(node["body"], frozenset(node["params"])))

    # public --------------------------------------------------------------------------------

    def get(self, name: str) -> Any:
        """A top-level value: a fact or a ``let``."""
        if name in self.values:
            return self.values[name]
        if name in self.facts:
            return self.facts[name]
        value = self.lets[name]({})
        self.values[name] = value
        return value

    def has(self, name: str) -> bool:
        return name in self.lets or name in self.facts

    def call(self, name: str, args: list[Any]) -> Any:
        """Call a function the rules define."""
        params, body = self.fns[name]
        key = (name, *(_identity(arg) for arg in args))
        found = self.memo.get(key)
        if found is not None:
            return found[1]
        result = body(dict(zip(params, args, strict=True)))
        self.memo[key] = (tuple(args), result)
        return result

    def diagnostics(self) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for rule in self.program["rules"]:
            found.extend(self.run_rule(rule))
        found.sort(key=Diagnostic.sort_key)
        return found

    # rules ---------------------------------------------------------------------------------

    def run_rule(self, rule: Node) -> Iterator[Diagnostic]:
        self.file = rule["file"]
        scope: frozenset[str] = frozenset()
        steps: list[tuple[str, Any, Code]] = []
        for step in rule["steps"]:
            kind = step["t"]
            if kind == "for":
                steps.append(("for", step["vars"], self.compile(step["iter"], scope)))
                scope = scope | set(step["vars"])
            elif kind == "let_clause":
                steps.append(("let", step["name"], self.compile(step["expr"], scope)))
                scope = scope | {step["name"]}
            else:
                steps.append(("when", None, self.compile(step["expr"], scope)))
        at = self.compile(rule["at"], scope)
        message = self.compile(rule["message"], scope)
        rule_id, severity = rule["id"], rule["severity"]

        def walk(index: int, env: Env) -> Iterator[Diagnostic]:
            if index == len(steps):
                loc = getattr(at(env), "loc", None) or (self.fallback_file, 1, 1)
                yield Diagnostic(rule_id, severity, text(message(env)), loc[0], loc[1], loc[2])
                return
            kind, names, code = steps[index]
            if kind == "when":
                if unwrap(code(env)):
                    yield from walk(index + 1, env)
            elif kind == "let":
                env[names] = code(env)
                yield from walk(index + 1, env)
            elif len(names) == 1:
                for item in as_items(code(env)):
                    env[names[0]] = item
                    yield from walk(index + 1, env)
            else:
                for key, value in as_pairs(code(env)):
                    env[names[0]], env[names[1]] = key, value
                    yield from walk(index + 1, env)

        try:
            yield from walk(0, {})
        except TypeError as err:
            line, column = rule["pos"]
            raise RulesError(rule["file"], line, column, f"rule `{rule_id}` failed: {err}") from None

    # expressions ---------------------------------------------------------------------------

    def compile(self, node: Node, scope: frozenset[str]) -> Code:
        method: Callable[[Node, frozenset[str]], Code] = getattr(self, "c_" + node["t"])
        return method(node, scope)

    def fail(self, node: Node, err: Exception) -> RulesError:
        line, column = node["pos"]
        return RulesError(self.file, line, column, str(err))

    def c_value(self, node: Node, scope: frozenset[str]) -> Code:
        value = node["value"]
        return lambda env: value

    def c_name(self, node: Node, scope: frozenset[str]) -> Code:
        name = node["name"]
        if name in scope:
            return lambda env: env[name]
        get = self.get
        return lambda env: get(name)

    def c_list(self, node: Node, scope: frozenset[str]) -> Code:
        items = [self.compile(item, scope) for item in node["items"]]
        return lambda env: [item(env) for item in items]

    def c_map(self, node: Node, scope: frozenset[str]) -> Code:
        pairs = [(key, self.compile(value, scope)) for key, value in node["pairs"]]
        return lambda env: {key: value(env) for key, value in pairs}

    def c_template(self, node: Node, scope: frozenset[str]) -> Code:
        parts: list[Code] = []
        for part in node["parts"]:
            if isinstance(part, str):
                parts.append(lambda env, part=part: part)
            else:
                code = self.compile(part, scope)
                parts.append(lambda env, code=code: text(code(env)))
        return lambda env: "".join(part(env) for part in parts)

    def c_attr(self, node: Node, scope: frozenset[str]) -> Code:
        obj, name = self.compile(node["obj"], scope), node["name"]
        return lambda env: get_attr(obj(env), name)

    def c_index(self, node: Node, scope: frozenset[str]) -> Code:
        obj, key = self.compile(node["obj"], scope), self.compile(node["key"], scope)
        return lambda env: get_index(obj(env), key(env))

    def c_if(self, node: Node, scope: frozenset[str]) -> Code:
        cond = self.compile(node["cond"], scope)
        then, other = self.compile(node["then"], scope), self.compile(node["else"], scope)
        return lambda env: then(env) if unwrap(cond(env)) else other(env)

    def c_and(self, node: Node, scope: frozenset[str]) -> Code:
        left, right = self.compile(node["left"], scope), self.compile(node["right"], scope)
        return lambda env: bool(unwrap(left(env))) and bool(unwrap(right(env)))

    def c_or(self, node: Node, scope: frozenset[str]) -> Code:
        left, right = self.compile(node["left"], scope), self.compile(node["right"], scope)
        return lambda env: bool(unwrap(left(env))) or bool(unwrap(right(env)))

    def c_not(self, node: Node, scope: frozenset[str]) -> Code:
        expr = self.compile(node["expr"], scope)
        return lambda env: not unwrap(expr(env))

    def c_compare(self, node: Node, scope: frozenset[str]) -> Code:
        op = node["op"]
        left, right = self.compile(node["left"], scope), self.compile(node["right"], scope)
        return lambda env: compare(op, left(env), right(env))

    def c_in(self, node: Node, scope: frozenset[str]) -> Code:
        left, right = self.compile(node["left"], scope), self.compile(node["right"], scope)
        contains, fail = self.sets.contains, self.fail

        def member(env: Env) -> bool:
            try:
                return contains(right(env), left(env))
            except TypeError as err:
                raise fail(node, err) from None

        return member

    def c_binop(self, node: Node, scope: frozenset[str]) -> Code:
        op = node["op"]
        left, right = self.compile(node["left"], scope), self.compile(node["right"], scope)
        fail = self.fail

        def operate(env: Env) -> Any:
            try:
                return binop(op, left(env), right(env))
            except TypeError as err:
                raise fail(node, err) from None

        return operate

    def c_comp(self, node: Node, scope: frozenset[str]) -> Code:
        names = node["vars"]
        iterable = self.compile(node["iter"], scope)
        inner = scope | set(names)
        element = self.compile(node["element"], inner)
        cond = self.compile(node["cond"], inner) if node["cond"] is not None else None
        fail = self.fail

        def comprehend(env: Env) -> list[Any]:
            local = dict(env)
            result = []
            try:
                items = as_items(iterable(env)) if len(names) == 1 else as_pairs(iterable(env))
            except TypeError as err:
                raise fail(node, err) from None
            for item in items:
                if len(names) == 1:
                    local[names[0]] = item
                else:
                    local[names[0]], local[names[1]] = item
                if cond is None or unwrap(cond(local)):
                    result.append(element(local))
            return result

        return comprehend

    def c_block(self, node: Node, scope: frozenset[str]) -> Code:
        bindings: list[tuple[str, Code]] = []
        for name, value in node["lets"]:
            bindings.append((name, self.compile(value, scope)))
            scope = scope | {name}
        expr = self.compile(node["expr"], scope)

        def block(env: Env) -> Any:
            local = dict(env)
            for name, value in bindings:
                local[name] = value(local)
            return expr(local)

        return block

    def c_call(self, node: Node, scope: frozenset[str]) -> Code:
        name = node["fn"]
        args = [self.compile(arg, scope) for arg in node["args"]]
        if name in self.program["fns"]:
            call = self.call
            return lambda env: call(name, [arg(env) for arg in args])
        _, _, function, observes = BUILTINS[name]
        observer, fail = self.observer, self.fail

        def builtin(env: Env) -> Any:
            values = [arg(env) for arg in args]
            try:
                return function(observer, *values) if observes else function(*values)
            except TypeError as err:
                raise fail(node, err) from None

        return builtin


def _identity(value: Any) -> Any:
    """A memo key for an argument: itself when hashable by value, else its identity."""
    if isinstance(value, dict | list):
        return ("id", id(value))
    if isinstance(value, LocatedConst):
        return ("const", value.value)
    if isinstance(value, LocatedStr):
        return ("str", str(value), value.loc)  # the result may carry the argument's position
    return value
