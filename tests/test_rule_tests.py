"""`beeuni rules test`: the shipped rules pass their own cases with every rule covered both ways,
and the runner's report on a passing and a failing set of cases is as stored.

    tests/rule_tests/<set>/<case>/   cases, run beside a copy of the shipped rules
    tests/rule_tests/<set>.out       what `beeuni rules test rules` printed (`make golden` rewrites it)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from beeuni.cli.rule_tests import read_annotations
from conftest import ROOT, run_beeuni

SETS = ROOT / "tests" / "rule_tests"
UPDATE = bool(os.environ.get("BEEUNI_UPDATE_GOLDEN"))


def test_the_shipped_rules_pass_their_cases_and_cover_every_rule_both_ways() -> None:
    """Run without DIR, the command finds the cases in the installed package (package data)."""
    result = run_beeuni(["rules", "test"], cwd=ROOT / "tests")
    assert result.code == 0, result.stdout + result.stderr
    assert "rules with no" not in result.stdout, result.stdout
    assert result.stdout.endswith(" passed, 0 failed\n")


def rules_copy_with_cases(tmp_path: Path, cases: Path) -> Path:
    """The shipped rules (with their Beeuni tools' modules), their own cases replaced by ``cases``."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__", "tests"))
    shutil.copytree(cases, rules / "tests")
    return rules


@pytest.mark.parametrize("name", ["passing", "failing"])
def test_the_runners_report(tmp_path: Path, name: str) -> None:
    rules_copy_with_cases(tmp_path, SETS / name)
    actual = run_beeuni(["rules", "test", "rules"], cwd=tmp_path).transcript()
    expected = SETS / f"{name}.out"
    if UPDATE:
        expected.write_text(actual)
    assert expected.read_text() == actual


def test_a_broken_rules_file_is_reported_not_tested(tmp_path: Path) -> None:
    rules = rules_copy_with_cases(tmp_path, SETS / "passing")
    with (rules / "tools.rules").open("a") as handle:
        handle.write("\nrule tools/broken {\n")
    result = run_beeuni(["rules", "test", "rules"], cwd=tmp_path)
    assert result.code == 2
    assert result.stderr.startswith("rules/tools.rules:")
    assert "error[rules]" in result.stderr


def test_annotations_concern_their_own_line_or_the_next_one(tmp_path: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text(
        "tools:\n"
        "  a: tools/a.ts  # expect: tools/name-format a fragment\n"
        "  # ok: tools/module-missing\n"
        "  # expect: tools/harness-name\n"
        "  bash: x\n"
    )
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.ts").write_text("export default {}; // ok: tools/opencode-shadow\n")
    annotations, dangling = read_annotations(str(tmp_path))
    found = [(a.kind, a.rule, a.fragment, a.file, a.line, a.source_line) for a in annotations]
    assert found == [
        ("expect", "tools/name-format", "a fragment", "beeuni.yaml", 2, "  a: tools/a.ts"),
        ("ok", "tools/module-missing", "", "beeuni.yaml", 5, "  bash: x"),
        ("expect", "tools/harness-name", "", "beeuni.yaml", 5, "  bash: x"),
        ("ok", "tools/opencode-shadow", "", "tools/a.ts", 1, "export default {};"),
    ]
    assert dangling == []


def test_every_annotation_on_a_line_is_read(tmp_path: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text(
        "tools:\n"
        "  a: tools/a.ts  # ok: tools/module-missing  # expect: tools/name-format a # fragment  // ok: x/y\n"
        "  # ok: tools/harness-name  # expect: tools/module-missing text\n"
        "  bash: x\n"
    )
    annotations, _ = read_annotations(str(tmp_path))
    found = [(a.kind, a.rule, a.fragment, a.line, a.source_line) for a in annotations]
    assert found == [
        ("ok", "tools/module-missing", "", 2, "  a: tools/a.ts"),
        ("expect", "tools/name-format", "a # fragment", 2, "  a: tools/a.ts"),
        ("ok", "x/y", "", 2, "  a: tools/a.ts"),
        ("ok", "tools/harness-name", "", 4, "  bash: x"),
        ("expect", "tools/module-missing", "text", 4, "  bash: x"),
    ]


def test_an_annotation_without_a_rule_is_an_error(tmp_path: Path) -> None:
    rules = rules_copy_with_cases(tmp_path, SETS / "passing")
    case = rules / "tests" / "bare-annotation"
    case.mkdir()
    (case / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search  # expect:\n")
    result = run_beeuni(["rules", "test", "rules"], cwd=tmp_path)
    assert result.code == 1
    where = "rules/tests/bare-annotation/beeuni.yaml:2"
    assert f"{where}: `expect:` names no rule: write `expect: group/name`" in result.stdout
