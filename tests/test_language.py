"""The rules language on its own: expressions, definitions, the checker and the runtime."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from beeuni.engine.contract import rules_interface as contract
from beeuni.engine.lang import Interface, RulesError, compile_sources, hints, patterns
from beeuni.engine.lang.builtins import Observer
from beeuni.engine.lang.codegen import HELPERS
from beeuni.engine.lang.evaluator import Evaluation, runtime_namespace
from beeuni.engine.paths import Repository
from beeuni.engine.yaml.located import LocatedConst, LocatedStr
from hypothesis import given, settings
from hypothesis import strategies as st

FACTS = Interface({"data": "any"})


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


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            'unique([["read,grep"], ["read", "grep"], ["read", "grep"], ["grep", "read"]])',
            [["read,grep"], ["read", "grep"], ["grep", "read"]],
        ),
        ('index_of([["read,grep"], ["read", "grep"]], ["read", "grep"])', 1),
        ('index_of([["read,grep"], ["read", "grep"]], ["read grep"])', None),
        ("index_of([{a: 1, b: [2]}, {a: 1}], {b: [2], a: 1})", 0),
        ('index_of(["x", "y"], "y")', 1),
        ("index_of(data, 1)", None),
        ('[["a"]] & [["a"], ["b"]]', [["a"]]),
        ('[["a"], ["b"]] - [["a"]]', [["b"]]),
        ('[["a", "b"]] | [["a", "b"], ["b", "a"]]', [["a", "b"], ["b", "a"]]),
        ('[\'"read"\'] in [["read"], [\'"read"\']]', True),
        ("{x: [1, {y: 2}]} in [{x: [1, {y: 2}]}]", True),
        ('unique([{a: "1"}, {a: 1}])', [{"a": "1"}, {"a": 1}]),
    ],
)
def test_lists_and_maps_are_told_apart_by_their_structure(expression: str, expected: Any) -> None:
    """A list or map is one member of a set however it was written: `unique`, `in`, the set
    operators and `index_of` agree with `==`, so a rule groups by a list and never by joined text."""
    assert value(expression) == expected


def test_a_list_read_from_the_manifest_equals_one_written_in_the_rules() -> None:
    data = [LocatedStr("read", ("beeuni.yaml", 3, 5)), LocatedStr("grep", ("beeuni.yaml", 3, 11))]
    assert value('index_of([["grep"], ["read", "grep"]], data)', data) == 1


def test_a_field_read_many_times_is_read_from_the_value_its_name_stands_for_there() -> None:
    """The generated code reads a field used several times once per function call or
    comprehension item (``codegen.hoisted``): a comprehension whose variable has a parameter's
    name, or a field of a value that is no map, still reads what the expression names."""
    run = evaluate(
        """
        fn shadowed(t) = [t.name for t in t.items] + [t.name, t.name]
        fn kinds(t) = [type(t.v), type(t.v), if type(t.v) == "string" then t.v else null]
        let result = {
          shadowed: shadowed({name: "outer", items: [{name: "a"}, {name: "b"}]}),
          kinds: [kinds(x) for x in [{v: "s"}, {v: 1}, "no map", {v: [1]}]],
          items: [[x.n, x.n, x.n] for x in [{n: 1}, 5, {n: "z"}]],
        }
        """
    )
    assert run.get("result") == {
        "shadowed": ["a", "b", "outer", "outer"],
        "kinds": [["string", "string", "s"], ["int", "int", None], ["null", "null", None], ["list", "list", None]],
        "items": [[1, 1, 1], [None, None, None], ["z", "z", "z"]],
    }


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
        ("let a = 1\nlet a = 2", "name `a` is defined twice: first defined at test.rules:1"),
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


def test_a_type_mistake_at_run_time_is_reported_at_the_expression() -> None:
    run = evaluate("let a = data | [2]", 1)
    with pytest.raises(RulesError) as caught:
        run.get("a")
    error = caught.value
    assert (error.line, error.column, error.message) == (1, 9, "`a`: `|` (union) needs lists, not a number")


# the runtime: failures at the failing expression, and a bound on every evaluation -------------

ENTRIES = [
    {"name": LocatedStr("first", ("beeuni.yaml", 6, 3)), "n": 1},
    {"name": LocatedStr("second", ("beeuni.yaml", 7, 3)), "n": "two"},
]


def failure(source: str, data: Any = None) -> str:
    """What running every rule of ``source`` over ``data`` reports."""
    run = evaluate(source, ENTRIES if data is None else data)
    with pytest.raises(RulesError) as caught:
        run.diagnostics()
    return caught.value.problems[0].text()


def rule_over_entries(when: str) -> str:
    return f'rule x/y {{\n severity error\n doc "d"\n for e in data\n when {when}\n at e.name\n message "m"\n}}\n'


def test_a_failure_inside_a_function_blames_the_functions_expression_and_the_manifest_value() -> None:
    source = "fn plus_one(e) = e.n + 1\n" + rule_over_entries("plus_one(e) > 1")
    assert failure(source) == (
        "test.rules:1:18: error[rules] rule `x/y`: cannot add a string and a number, while checking beeuni.yaml:7:3"
    )


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ('matches("a", "[" + e.name)', "regular expression `[first` does not compile: missing ] at `[first`"),
        ('matches("a", e.name + "(?=x)")', "regular expression `first(?=x)` uses lookahead `(?=…)`"),
        ('"a" in e.n', "`in` needs a list, map or string on its right, not a number"),
        ("e.name - [1]", "`-` (difference) needs lists, not a string"),
        ("e.n + e.name", "cannot add a number and a string"),
    ],
)
def test_nothing_a_rule_does_at_run_time_is_an_internal_error(when: str, message: str) -> None:
    found = failure(rule_over_entries(when))
    assert found.startswith("test.rules:5:7: error[rules] rule `x/y`: " + message)
    assert found.endswith(", while checking beeuni.yaml:6:3")


def doubling(name: str, first: str, times: int) -> str:
    """``let name0 = first`` and ``times`` lets, each ``+`` of the one before with itself."""
    return f"let {name}0 = {first}\n" + "".join(
        f"let {name}{i} = {name}{i - 1} + {name}{i - 1}\n" for i in range(1, times + 1)
    )


def rule_with(clauses: str) -> str:
    return f'rule x/y {{\n severity error\n doc "d"\n {clauses}\n at 1\n message "m"\n}}\n'


def test_a_rule_that_would_run_without_end_is_stopped_and_named() -> None:
    """32,768 times 32,768 items walked: a billion, building nothing."""
    source = doubling("l", "[1, 2, 3, 4]", 13) + rule_with("for a in l13\n for b in l13\n when a == 5")
    assert failure(source).endswith(
        "error[rules] rule `x/y`: stopped after 40,000,000 steps: a loop or a value grows without bound"
    )


@pytest.mark.parametrize(
    ("lets", "clauses", "where"),
    [
        # a list twice as long in each let: the last would hold 2 trillion items
        (doubling("l", "[1, 2, 3, 4]", 40), "when len(l40) > 0", "21:11"),
        # a list of 4,096 lists of 4,096 items: within the steps, 16 million items
        (doubling("l", "[1, 2, 3, 4]", 10), "when len([[y for y in l10] for x in l10]) > 0", "15:12"),
        # a map per item of a million
        (doubling("l", "[1, 2, 3, 4]", 18), "when len([{a: x, b: x} for x in l18]) > 0", "23:11"),
        # a diagnostic per item of a million
        (doubling("l", "[1, 2, 3, 4]", 18), "for x in l18", "23:2"),
    ],
    ids=["doubling", "comprehension", "maps", "diagnostics"],
)
def test_a_rule_that_would_take_all_the_memory_is_stopped_and_named_at_the_expression(
    lets: str, clauses: str, where: str
) -> None:
    assert failure(lets + rule_with(clauses)) == (
        f"test.rules:{where}: error[rules] rule `x/y`: stopped after building 64 MB of values: "
        "a loop or a value grows without bound"
    )


@pytest.mark.parametrize(
    "clauses",
    [
        'for x in l16\n when s18 + "" == s18',  # 262,144 times, two texts of a million characters
        'for x in l16\n when s18 < s18 + "b"',
        'for x in l16\n when "b" in s18',
        "for x in l16\n when all(l16)",  # 262,144 times, a list of as many items read through
        "for x in l16\n when len(unique(l16)) == 0",
    ],
    ids=["==", "<", "in", "all", "unique"],
)
def test_what_reads_a_long_value_through_is_charged_by_its_length(clauses: str) -> None:
    """Each of these would take minutes if reading a long operand cost a step."""
    lets = doubling("l", "[true, true, true, true]", 16) + doubling("s", '"aaaa"', 18)
    assert failure(lets + rule_with(clauses)).endswith(
        "error[rules] rule `x/y`: stopped after 40,000,000 steps: a loop or a value grows without bound"
    )


def test_a_text_doubled_without_end_is_stopped() -> None:
    found = failure(doubling("s", '"abcd"', 40) + rule_with("when len(s40) > 0"))
    assert found.startswith("test.rules:") and ": error[rules] rule `x/y`: stopped after " in found


def test_what_evaluations_keep_for_later_ones_is_forgotten_past_the_bound() -> None:
    """Eight rules, each reading two lists of 262,144 items: each evaluation stays
    within the bound, together they would not; the lets kept are dropped (and computed again
    when read again), and every rule still finds what it finds."""
    lets = doubling("l", "[1, 2, 3, 4]", 16)
    lets += "".join(f"let big{i} = [x + {i} for x in l16]\n" for i in range(8))
    rules = "".join(
        f'rule x/r{i} {{\n severity error\n doc "d"\n when len(big{i}) > 0 and len(big{(i + 1) % 8}) > 0\n'
        f' at 1\n message "m{i}"\n}}\n'
        for i in range(8)
    )
    run = evaluate(lets + rules)
    assert [d.message for d in run.diagnostics()] == [f"m{i}" for i in range(8)]
    assert len([name for name in run.values if name.startswith("big")]) < 8


def test_a_chain_of_definitions_too_long_to_run_is_found_before_anything_runs() -> None:
    chain = "".join(f"fn f{i}(x) = f{i - 1}(x) + 1\n" for i in range(1, 3000))
    found = problems("fn f0(x) = x\n" + chain + "let result = f2999(1)\nfn pick(name, harness) = name\n")
    assert found == [
        "101:1: error `f100` starts a chain of more than 100 definitions, each using the next: "
        "a run would nest too deeply; join some of them"
    ]


@pytest.mark.parametrize(
    "expression",
    ["[" * 150 + "1" + "]" * 150, " + ".join(["1"] * 3000), "[" * 3000 + "1" + "]" * 3000],
    ids=["150 lists", "3,000 additions", "3,000 lists"],
)
def test_an_expression_nested_too_deeply_to_compile_is_a_problem_at_its_definition(expression: str) -> None:
    found = problems(f"let ok = 1\nlet result = {expression}\nfn pick(name, harness) = name\n")
    assert [entry for entry in found if "error" in entry] == [
        f"2:{found[0].split(':')[1]}: error nested more than 100 deep: split it with `let`s or functions"
    ]


def test_a_value_that_would_read_as_a_text_without_end_is_stopped() -> None:
    shared = "".join(f"let t{i} = [t{i - 1}, t{i - 1}]\n" for i in range(1, 60))
    found = failure("let t0 = [1, 2, 3]\n" + shared + rule_over_entries('f"{t59}" == ""'))
    assert "rule `x/y`: a text longer than 1,000,000 characters" in found


def test_calls_that_multiply_beyond_the_bound_are_found_before_anything_runs() -> None:
    chain = "".join(f"fn f{i}(x) = f{i - 1}(x) and f{i - 1}(x)\n" for i in range(1, 40))
    found = problems("fn f0(x) = x\n" + chain + "let result = f39(1)\nfn pick(name, harness) = name\n")
    assert found[0].startswith("24:1: error `f23` takes more than 40,000,000 steps to evaluate")


def test_the_runtime_provides_every_helper_the_generated_code_uses() -> None:
    run = evaluate("let a = 1")
    assert set(HELPERS) == set(runtime_namespace(run, Observer(Repository(".")), frozenset()))


# the checker: every problem of a rule set, before any manifest -------------------------------

RECORDS = Interface(
    {"entries": [{"name": "string", "value": "any"}], "by_key": {"*": ["string"]}},
    values=("result",),
    functions={"pick": ("name", "harness")},
)


def problems(source: str, interface: Interface = RECORDS, files: dict[str, str] | None = None) -> list[str]:
    """Every problem the checker reports, as ``line:col: severity message`` (file name added when
    several files are checked)."""
    sources = [(name, text.encode()) for name, text in (files or {"test.rules": source}).items()]
    try:
        program = compile_sources(sources, interface)
    except RulesError as err:
        found = err.problems
    else:
        from beeuni.engine.lang.errors import Problem

        found = [Problem(*item) for item in program["problems"]]
    prefix = (lambda p: f"{p.file}:") if files else (lambda p: "")
    return [f"{prefix(p)}{p.line}:{p.column}: {p.severity} {p.message}" for p in found]


GOOD = "let result = 1\nfn pick(name, harness) = name\n"


def test_a_good_rule_set_has_no_problems() -> None:
    assert problems(GOOD) == []


def test_every_mistake_is_reported_not_only_the_first() -> None:
    source = GOOD + "let a = nope\nlet b = nope2(1)\nlet c = len(1, 2)\nrule x/y {\n severity error\n at a + b + c\n}\n"
    assert problems(source) == [
        "3:9: error unknown name `nope`",
        "4:9: error unknown function `nope2`",
        "5:9: error `len` takes 1 argument, not 2",
        "6:1: error rule `x/y` has no `doc` clause",
        "6:1: error rule `x/y` has no `message` clause",
    ]


def test_unused_definitions_are_warnings_and_do_not_stop_the_rules() -> None:
    assert problems(GOOD + "let spare = 1\nfn helper(x) = spare\n") == [
        "3:1: warning value `spare` is never used",
        "4:1: warning function `helper` is never used",
    ]


def test_a_duplicate_is_reported_where_the_later_one_stands() -> None:
    files = {"a.rules": GOOD + "let twice = 1\n", "b.rules": "let twice = 2\n"}
    assert "b.rules:1:1: error name `twice` is defined twice: first defined at a.rules:3" in problems("", files=files)


def test_the_names_the_host_reads_back_are_checked_with_their_kind_and_arity() -> None:
    assert problems("fn result(x) = x\nlet pick = 1\n") == [
        "1:1: error the engine reads `result` as a value: define it with `let`, not `fn`",
        "2:1: error the engine calls `pick`: define it as a function, `pick(name, harness)`",
    ]
    assert problems("let result = 1\nfn pick(name) = name\n") == [
        "2:1: error the engine calls `pick` with 2 arguments: `pick(name, harness)`",
    ]
    assert problems("let x = 1\n", files={"r/a.rules": "let x = 1\n"}) == [
        "r/a.rules:1:1: error the rules define no `result`, which the engine reads",
        "r/a.rules:1:1: error the rules define no function `pick(name, harness)`, which the engine calls",
        "r/a.rules:1:1: warning value `x` is never used",
    ]


def test_a_missing_name_the_host_reads_back_is_reported_where_the_others_are() -> None:
    """At the top of the file that defines most of the names the engine reads (not at the
    folder, which an editor cannot open), the first in order on a tie."""
    files = {"r/a.rules": 'let x = 1\nrule x/y {\n severity error\n doc "d"\n when x\n at 1\n message "m"\n}\n'}
    files["r/engine.rules"] = "fn pick(name, harness) = name\n"
    assert problems("", files=files) == [
        "r/engine.rules:1:1: error the rules define no `result`, which the engine reads"
    ]
    assert problems("", files={"r/b.rules": "let y = 2\n", "r/a.rules": "let x = 1\n"})[:2] == [
        "r/a.rules:1:1: error the rules define no `result`, which the engine reads",
        "r/a.rules:1:1: error the rules define no function `pick(name, harness)`, which the engine calls",
    ]


def test_syntax_errors_do_not_stop_the_other_definitions_or_files() -> None:
    files = {
        "a.rules": GOOD + "let a = [1,\nlet b = result\nlet c = nope\n",
        "b.rules": 'rule x/y {\n  severity error\n  doc "d"\n  at 1\n  message b + c\n\nlet d = 1\n',
    }
    assert problems("", files=files) == [
        "a.rules:4:1: error unexpected `let`: the `[` opened at 3:9 is never closed",
        "a.rules:5:9: error unknown name `nope`",
        "b.rules:7:10: error unexpected end of file: the `{` opened at 1:10 is never closed",
    ]  # `a`, lost to the syntax error, is not reported as unknown, nor `b` and `c` as unused


def test_a_field_a_fact_does_not_have_is_an_error_with_a_suggestion() -> None:
    rule = 'rule x/y {\n severity error\n doc "d"\n for e in entries\n when named(e)\n at e.valeu\n message "m"\n}\n'
    source = GOOD + "fn named(e) = e.nmae\n" + rule
    assert problems(source) == [
        "3:15: error no field `nmae` here; did you mean `name`? (fields: name, value)",
        "9:5: error no field `valeu` here; did you mean `value`? (fields: name, value)",
    ]


def test_fields_of_records_built_by_the_rules_are_checked_through_lets_and_built_ins() -> None:
    source = (
        GOOD
        + 'let made = [{name: "a", kind: "b"}]\n'
        + 'let index = index_by(made, "name")\n'
        + 'let used = [index["a"].knd, first(made).name, values(by_key)]\n'
        + 'let grouped = group_by(entries, "nam")\n'
        + 'rule x/y {\n severity error\n doc "d"\n when used and grouped\n at 1\n message "m"\n}\n'
    )
    assert problems(source) == [
        "5:13: error no field `knd` here; did you mean `kind`? (fields: kind, name)",
        "6:33: error no field `nam` here; did you mean `name`? (fields: name, value)",
    ]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('f"a{1}" + 1', "cannot add a string and a number"),
        ('[1] + "a"', "cannot add a list and a string"),
        ('"a" | ["b"]', "`|` (union) needs lists, not a string"),
        ("1 in 2", "`in` needs a list, map or string on its right, not a number"),
        ("[1].name", "`.name` of a list is always null: only maps have fields"),
        ('matches("a", 1)', "the pattern of `matches` must be a string, not a number"),
        ('matches("a", "[a-")', "regular expression `[a-` does not compile: missing ] at `[a-`"),
    ],
)
def test_an_operation_that_can_never_work_is_an_error_even_where_no_manifest_reaches(
    expression: str, message: str
) -> None:
    found = problems(f"let result = if false then {expression} else 1\nfn pick(name, harness) = name\n")
    assert [entry.split(" ", 2)[2] for entry in found] == [message]


def test_a_regular_expression_is_traced_through_lets_to_where_it_is_written() -> None:
    files = {
        "a.rules": GOOD + 'let PATTERN = PREFIX + "[a-"\nlet ok = matches(result, PATTERN)\n',
        "b.rules": 'let PREFIX = "^"\nrule x/y {\n severity error\n doc "d"\n when ok\n at 1\n message "m"\n}\n',
    }
    assert problems("", files=files) == [
        "a.rules:3:15: error regular expression `^[a-` does not compile: missing ] at `[a-`"
    ]


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        (r"(a)\1", r"a backreference `\1`"),
        ("(?P<x>a)(?P=x)", "a backreference `(?P=name)`"),
        ("(?=a)", "lookahead `(?=…)`"),
        ("(?!a)", "negative lookahead `(?!…)`"),
        ("(?<=a)b", "lookbehind `(?<=…)`"),
        ("(?<!a)b", "negative lookbehind `(?<!…)`"),
        (r"a\Z", r"`\Z` (write `\z` for the end of the text)"),
        ("a{1001}", "a repetition count above 1000"),
    ],
)
def test_a_pattern_that_could_not_run_in_linear_time_is_reported_at_its_literal_saying_why(
    pattern: str, what: str
) -> None:
    """A pattern is written in the rules as it reads: a backslash other than an escape stays."""
    found = problems(f'let result = matches("a", "{pattern}")\nfn pick(name, harness) = name\n')
    assert found == [
        f"1:27: error regular expression `{pattern}` uses {what}, which RE2 does not have "
        "(the rules' regular expressions are RE2's, matched in time linear in the text: "
        "no backreferences, no lookaround, repetition counts up to 1000)"
    ]


def test_a_pattern_that_backtracks_exponentially_in_python_matches_in_linear_time() -> None:
    """``(a+)+$`` against a's and a b: Python's `re` would take about 2^40 steps; RE2 one pass."""
    source = rule_over_entries('matches(e.name, "(a+)+$")')
    run = evaluate(source, [{"name": "a" * 40 + "b"}, {"name": "a" * 40}])
    assert [d.message for d in run.diagnostics()] == ["m"]


_PATTERN_PARTS = ["a", "b", ":", "/", ".", "*", "+", "?", "(", ")", "|", "[", "]", "^", "$", "{", "}", "\\"]
_PATTERN_PARTS += [r"\.", r"\d", r"\x41", "{2}", "{,3}", "[ab]", "[^:]", "(?i)", "[[:alpha:]]", "A"]
_PATTERN_PARTS += ["(?:", "(?P<n>", r"\b", "(?=", "ab"]


@given(st.lists(st.sampled_from(_PATTERN_PARTS), min_size=1, max_size=6).map("".join), st.data())
@settings(deadline=None, max_examples=400)
def test_a_matcher_answers_as_re2s_search(pattern: str, data: st.DataObject) -> None:
    """``Matcher`` (RE2's own ``Match``) and RE2's search (``regex``) agree, on texts the pattern
    matches (as Python's ``re`` reads it, which mostly agrees with RE2) and on others."""
    try:
        matcher = patterns.compiled(pattern)
    except patterns.PatternError:
        return
    texts = [data.draw(st.text("ab:/.A{},23", max_size=8))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `re` warns of a nested set, `[[`
        try:
            re.compile(pattern)
        except re.error:
            pass
        else:
            texts.append(data.draw(st.from_regex(pattern)))
    for text in texts:
        assert matcher.matches(text) == (patterns.regex(pattern).search(text) is not None), (pattern, text)


@pytest.mark.parametrize(
    "pattern", ["a", "(a)(b)?", "(?P<ids>x)(?P<reason>.*)", "#[ \t]*(?:[^]]*)(?P<é>y)", "((a)|(?P<n>b))"]
)
def test_the_groups_of_a_pattern_read_without_the_wrapper_are_the_wrappers(pattern: str) -> None:
    """``groups`` (RE2's extension alone, for the shape of a value read back) tells what the
    ``re``-like wrapper tells as ``groups`` and ``groupindex``."""
    compiled = patterns.regex(pattern)
    assert patterns.groups(pattern) == (compiled.groups, dict(compiled.groupindex))


def test_cycles_are_reported_once_each() -> None:
    assert [p for p in problems(GOOD + "let a = b\nlet b = a\nlet c = c\n") if "error" in p] == [
        "3:1: error `a` depends on itself: a -> b -> a",
        "5:1: error `c` depends on itself: c -> c",
    ]


# docs as templates ---------------------------------------------------------------------------


def test_a_doc_template_is_rendered_from_constants_when_the_rules_are_compiled() -> None:
    source = (
        GOOD
        + 'let KINDS = ["a", "b"]\n'
        + 'rule x/y {\n severity error\n doc f"""\n    There are {len(KINDS)} kinds:\n    {join(KINDS, ", ")}.\n  """\n'
        + ' at 1\n message "m"\n}\n'
    )
    program = compile_sources([("test.rules", source.encode())], RECORDS)
    assert program["rules"][0]["doc"] == "There are 2 kinds:\na, b."


def test_a_doc_template_cannot_use_the_facts_or_a_rules_variables() -> None:
    source = (
        GOOD
        + "let count = len(entries)\n"
        + 'rule x/y {\n severity error\n doc f"{count} entries, {e}"\n for e in entries\n at e.name\n message "m"\n}\n'
    )
    assert problems(source) == [
        "6:2: error the doc of rule `x/y` uses `entries` (through `count`): "
        "a doc is written before any manifest is read",
        "6:26: error unknown name `e`",
    ]


# fields of data whose shape the rules declare (the manifest's: MANIFEST_SHAPE) ---------------

SHAPED = Interface(
    contract.FACTS,
    values=("result", "SHAPE"),
    functions={"pick": ("name", "harness")},
    data_shape=("SHAPE", contract.manifest_facts),
)


SHAPE = (
    'let SHAPE = {imports: ["string"], tools: {"*": "string"}, '
    'agents: {"*": {tools: "any", connectors: ["string"], model: "string"}}}\n'
)


def shaped_problems(expression: str) -> list[str]:
    return problems(f"{SHAPE}let result = {expression}\nfn pick(name, harness) = name\n", SHAPED)


def settings_of(field: str) -> str:
    return f'[if type(a.value) == "map" then a.value else {{}} for a in sections.agents][0].{field}'


@pytest.mark.parametrize(
    ("expression", "warning"),
    [
        # a file's root: the top-level keys
        ("[f.root.tool for f in files]", "no field `tool` in `SHAPE` (imports, tools, agents); did you mean `tools`?"),
        ('[f.root["agent"] for f in files]', "no field `agent` in `SHAPE` (imports, tools, agents); did you mean"),
        # the sections: their keys, and an entry's value — a tool's is a string, an agent's its settings
        ("sections.agnets", "no key `agnets` in `SHAPE` (imports, tools, agents); did you mean `agents`?"),
        ("[a.value.conectors for a in sections.agents]", "no field `conectors` in `SHAPE` (tools, connectors, model)"),
        (settings_of("modle"), "no field `modle` in `SHAPE` (tools, connectors, model); did you mean `model`?"),
        ("[[c.x for c in f.root.agents.a.tool] for f in files]", "no field `tool` in `SHAPE` (tools, connectors"),
    ],
)
def test_a_field_the_declared_shape_lacks_is_a_warning_with_did_you_mean(expression: str, warning: str) -> None:
    [found] = shaped_problems(expression)
    assert found.startswith("2:") and f": warning the data here has {warning}" in found


@pytest.mark.parametrize(
    "expression",
    [
        "[f.root.tools for f in files]",
        "[a.value.connectors for a in sections.agents]",
        settings_of("model"),
        "[[n for n in a.value.connectors] for a in sections.agents]",
        "[t.value.anything for t in sections.tools]",  # a tool's value is a string: no fields to check
        "[v.tools for k, v in [f.root.agents for f in files][0]]",
        "sections.tools",
    ],
)
def test_a_field_the_declared_shape_has_is_no_problem(expression: str) -> None:
    assert shaped_problems(expression) == []


def test_without_a_literal_shape_nothing_is_checked() -> None:
    source = "let SHAPE = keys({a: 1})\nlet result = [f.root.anything for f in files]\nfn pick(name, harness) = name\n"
    assert problems(source, SHAPED) == []


# habits from other languages: each entry of the hints' tables, as `rules check` reports it --------


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        *((f"let result = true {op} false", message) for op, message in hints.OPERATORS.items()),
        ("let result = !true", hints.NOT),
        *((f'let result = "x".{name}("y")', hints.method_hint(name)) for name in hints.METHODS),
        ('let result = "x".upper()', hints.method_hint("upper")),
        *((f"let result = if true then 1 {word} true then 2 else 3", m) for word, m in hints.KEYWORDS.items()),
        *((f"let result = {name}", hints.literal_hint(name)) for name in hints.LITERALS),
        ('let result = startswith("a", "b")', hints.function_hint("startswith")),
    ],
)
def test_a_habit_from_another_language_is_answered_with_the_rules_languages_way(source: str, hint: str) -> None:
    found = problems(source + "\nfn pick(name, harness) = name\n")
    assert [entry.split(" ", 2)[2] for entry in found if " error " in entry] == [hint]
