"""The rules language on its own: expressions, definitions, the checker and the runtime."""

from __future__ import annotations

from typing import Any

import pytest
from beeuni.engine.lang import RulesError, compile_sources
from beeuni.engine.lang.builtins import Observer
from beeuni.engine.lang.codegen import HELPERS
from beeuni.engine.lang.evaluator import Evaluation, runtime_namespace
from beeuni.engine.located import LocatedConst, LocatedStr
from beeuni.engine.paths import Repository

FACTS = frozenset({"data"})


def evaluate(source: str, data: Any = None) -> Evaluation:
    program = compile_sources([("test.rules", source.encode())], FACTS)
    return Evaluation(program, {"data": data}, Observer(Repository(".")), "beeuni.yaml")


def value(expression: str, data: Any = None) -> Any:
    return evaluate(f"let result = {expression}", data).get("result")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('["a", "b", "c"] | ["c", "d"]', ["a", "b", "c", "d"]),
        ('["c", "a", "b"] & ["b", "c"]', ["c", "b"]),
        ('["a", "b", "a"] - ["b"]', ["a"]),
        ("[1, 2] + [2]", [1, 2, 2]),
        ('"beeuni:" + "show"', "beeuni:show"),
        ("[x for x in [1, 2, 3, 4] if x > 2]", [3, 4]),
        ("[k for k, v in {a: 1, b: 2} if v == 2]", ["b"]),
        ("if null then 1 else 2", 2),
        ('"a" in ["a"] and "b" not in ["a"]', True),
        ("f\"{1} {'x'} {[1, 2]} {null} {{braces}}\"", "1 x 1, 2 null {braces}"),
        ("data.missing.deeper", None),
        ("data[5]", None),
        ("len(null)", 0),
        ('matches("tool_name", "^[a-z_]+$")', True),
        ('after("beeuni:memory", "beeuni:")', "memory"),
        ('after("tools/x.ts", "beeuni:")', None),
        ('ends_with("a.mts", [".ts", ".mts"])', True),
        ('closest("tool", ["imports", "tools", "agents"])', "tools"),
        ('group_by([{n: "a", i: 1}, {n: "a", i: 2}], "n")', {"a": [{"n": "a", "i": 1}, {"n": "a", "i": 2}]}),
        ("[x for x in 5]", []),
        ('subset(["a"], ["a", "b", "c", "d", "e", "f", "g", "h", "i"])', True),
    ],
)
def test_expressions(expression: str, expected: Any) -> None:
    assert value(expression) == expected


def test_located_values_keep_their_position_through_builtins() -> None:
    located = LocatedStr("beeuni:show", ("beeuni.yaml", 3, 9))
    result = value('after(data, "beeuni:")', located)
    assert result == "show" and result.loc == ("beeuni.yaml", 3, 9)
    assert value("data == null", LocatedConst(None, ("x", 1, 1))) is True


def test_functions_blocks_and_rules() -> None:
    run = evaluate(
        """
        fn twice(x) = x + x
        fn label(n) {
          let doubled = twice(n)
          return f"n={n}, twice={doubled}"
        }
        rule test/odd {
          severity warning
          doc "Odd numbers, reported at the value (or the manifest's first line for a computed one)."
          for n in data
          when n == 1 or n == 3
          let text = label(n)
          at n
          message text
        }
        """,
        [LocatedStr("x", ("f", 1, 1)), 1, 2, 3],
    )
    assert run.call("label", [2]) == "n=2, twice=4"
    found = [(d.rule, d.severity, d.message, d.file, d.line) for d in run.diagnostics()]
    assert found == [
        ("test/odd", "warning", "n=1, twice=2", "beeuni.yaml", 1),
        ("test/odd", "warning", "n=3, twice=6", "beeuni.yaml", 1),
    ]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("let a = b", "unknown name `b`"),
        ("let a = 1\nlet a = 2", "name `a` is defined twice (first at test.rules:1)"),
        ("fn f(x) = x\nlet a = f", "`f` is a function: call it, `f(...)`"),
        ("fn f(x) = x\nlet a = f(1, 2)", "`f` takes 1 argument, not 2"),
        ("let a = nope(1)", "unknown function `nope`"),
        ("fn f(x) = g(x)\nfn g(x) = f(x)", "`f` depends on itself: f -> g -> f"),
        ("let data = 1", "`data` is a built-in name and cannot be redefined"),
        ('rule a/b {\n severity error\n doc "d"\n at 1\n}', "rule `a/b` has no `message` clause"),
        ("let a = [1,", "unexpected end of file"),
    ],
)
def test_mistakes_in_rules_are_reported_with_a_position(source: str, message: str) -> None:
    with pytest.raises(RulesError) as caught:
        compile_sources([("test.rules", source.encode())], FACTS)
    assert message in caught.value.message
    assert caught.value.file == "test.rules" and caught.value.line >= 1


def test_a_type_mistake_at_run_time_names_the_definition() -> None:
    run = evaluate("let a = 1 | [2]")
    with pytest.raises(RulesError) as caught:
        run.get("a")
    assert (caught.value.line, caught.value.message) == (1, "`a` failed: `|` needs lists, not a int")


def test_the_runtime_provides_every_helper_the_generated_code_uses() -> None:
    run = evaluate("let a = 1")
    assert set(HELPERS) == set(runtime_namespace(run, Observer(Repository(".")), frozenset()))
