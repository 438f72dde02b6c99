"""Inputs that once took quadratic time or crashed, too large for a golden case: what
they are answered with. How long they take is measured by benchmarks/bench_hostile.py, not here.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from beeuni.engine.lang.similar import MAX_LENGTH, closest_name
from beeuni.engine.project import open_project
from beeuni.engine.yaml.loader import load_yaml
from shipped_texts import filled, rules_call


def test_a_short_list_gets_difflibs_own_suggestion() -> None:
    known = ["imports", "tools", "agents", "tool_a", "toolbox"]
    for name in ["tool", "agnets", "importz", "x", "toolz", ""]:
        found = difflib.get_close_matches(name, known, n=1)
        assert closest_name(name, known) == (found[0] if found else None)


def test_a_long_list_still_finds_the_name_one_typo_away_at_either_end() -> None:
    known = [f"tool_{i:04d}" for i in range(2000)]
    assert closest_name("tool_1499x", known) == "tool_1499"
    assert closest_name("xool_1499", known) == "tool_1499"
    assert closest_name("tool_0000", ["a" * 60_000, *known]) == "tool_0000"


def test_names_longer_than_any_real_one_get_no_suggestion() -> None:
    assert closest_name("a" * (MAX_LENGTH + 1), ["a" * (MAX_LENGTH + 1)]) is None
    assert closest_name("a" * 60_000, ["a" * 59_999 + "b"]) is None


def test_a_huge_sexagesimal_number_is_refused_where_it_starts() -> None:
    root, problems = load_yaml(b"tools: [1" + b":00" * 400_000 + b"]\n", "beeuni.yaml")
    assert root is None
    assert [(p.kind, p.loc) for p in problems] == [("too-long-number", ("beeuni.yaml", 1, 9))]


def test_thousands_of_unknown_look_alike_names_each_get_their_suggestion(tmp_path: Path) -> None:
    tools = "".join(f"  tool_{i:04d}: tools/t{i}.ts\n" for i in range(2000))
    names = ", ".join(f"tool_{i:04d}x" for i in range(2000))
    (tmp_path / "beeuni.yaml").write_text(f"tools:\n{tools}agents:\n  a:\n    tools: [{names}]\n")
    unknown = [d.message for d in open_project(tmp_path).diagnostics() if d.rule == "agents/unknown-tool"]
    assert len(unknown) == 2000
    assert filled("agents/unknown-tool", unknown[1234]) == ["tool_1234x", rules_call("suggestion", "tool_1234")]


def test_two_names_of_sixty_thousand_characters_are_reported_without_a_suggestion(tmp_path: Path) -> None:
    name, other = "a" * 60_000, "a" * 59_999 + "b"
    (tmp_path / "beeuni.yaml").write_text(
        f"tools:\n  ? {name}\n  : tools/x.ts\nagents:\n  x:\n    connectors: [{other}]\n    tools: [{other}]\n"
    )
    found = {d.rule: d.message for d in open_project(tmp_path).diagnostics()}
    assert filled("tools/name-format", found["tools/name-format"])[0] == name
    did_you_mean = rules_call("suggestion", "X").split("X")[0]  # the rules' own words
    assert did_you_mean not in "".join(found.values())
