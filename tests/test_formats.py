"""`validate`'s machine formats (GitHub workflow commands, SARIF, GitLab Code Quality),
`--output`, `--quiet` and `--max-warnings`; the golden case `ci-formats` holds each format's
whole output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from beeuni.cli.formats import Findings
from beeuni.cli.formats.github import escape_data, escape_property, step_summary
from beeuni.cli.formats.gitlab import code_quality
from beeuni.engine.lang.evaluator import Diagnostic
from beeuni.engine.yaml.spans import Sources
from conftest import ROOT, run_beeuni

CASE = ROOT / "tests" / "golden" / "ci-formats"
#: the CI formats name a file by its path from the root of the git repository: this clone's
IN_CLONE = "tests/golden/ci-formats/project/"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())


def test_sarif_output_is_valid_against_the_sarif_2_1_0_schema() -> None:
    result = run_beeuni(["validate", "project", "--format", "sarif"], cwd=CASE)
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert result.code == 1


def test_sarif_describes_every_rule_and_points_results_at_repo_relative_regions() -> None:
    log = json.loads(run_beeuni(["validate", "project", "--format", "sarif"], cwd=CASE).stdout)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    listed = json.loads(run_beeuni(["rules", "list", "--json"], cwd=CASE).stdout)
    assert [rule["id"] for rule in rules] == [rule["id"] for rule in listed]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["manifest/unknown-key"]["defaultConfiguration"] == {"level": "warning"}
    assert by_id["tools/beeuni-override"]["defaultConfiguration"] == {"level": "note"}
    assert "\n" not in by_id["manifest/duplicate-key"]["shortDescription"]["text"]
    assert by_id["manifest/duplicate-key"]["fullDescription"]["text"].startswith("A key appears twice")
    imported = next(r for r in run["results"] if r["ruleId"] == "tools/unknown-beeuni-tool")
    assert rules[imported["ruleIndex"]]["id"] == "tools/unknown-beeuni-tool"
    location = imported["locations"][0]["physicalLocation"]
    # `  lookup: beeuni:lookp` — the value's 12 characters from column 11
    assert location["artifactLocation"] == {"uri": IN_CLONE + "more/tools.yaml", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": ROOT.as_uri() + "/"}}
    assert location["region"] == {"startLine": 2, "startColumn": 11, "endLine": 2, "endColumn": 23}


def test_sarif_results_carry_the_fixes_validate_fix_makes() -> None:
    """A result whose rule has a `fix` clause carries it as a SARIF fix (deleted region, inserted
    text), the same edit `validate --format json` shows and `validate --fix` applies; the log is
    valid SARIF 2.1.0 (the test above)."""
    log = json.loads(run_beeuni(["validate", "project", "--format", "sarif"], cwd=CASE).stdout)
    fixes = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["fixes"]
        for r in log["runs"][0]["results"]
        if "fixes" in r
    }
    document = json.loads(run_beeuni(["validate", "project", "--format", "json"], cwd=CASE).stdout)
    expected = {}
    for d in document["diagnostics"]:
        if d["fix"] is None:
            continue
        fix = d["fix"]
        region = {
            "startLine": fix["line"],
            "startColumn": fix["column"],
            "endLine": fix["end_line"],
            "endColumn": fix["end_column"],
        }
        change = {
            "artifactLocation": {"uri": IN_CLONE + fix["file"], "uriBaseId": "%SRCROOT%"},
            "replacements": [{"deletedRegion": region, "insertedContent": {"text": fix["replacement"]}}],
        }
        expected[(d["rule"], d["line"])] = [{"artifactChanges": [change]}]
    assert fixes == expected
    # `agnets:` on line 9 of the manifest becomes `agents`: its six characters from column 1
    [change] = fixes[("manifest/unknown-key", 9)][0]["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 9, "startColumn": 1, "endLine": 9, "endColumn": 7},
            "insertedContent": {"text": "agents"},
        }
    ]


def test_github_escapes_data_and_properties_as_github_defines() -> None:
    assert escape_data("100%\r\nnext: a, b") == "100%25%0D%0Anext: a, b"
    assert escape_property("100%\r\nnext: a, b") == "100%25%0D%0Anext%3A a%2C b"


def test_github_workflow_commands_carry_severity_position_and_rule() -> None:
    lines = run_beeuni(["validate", "project", "--format", "github"], cwd=CASE).stdout.splitlines()
    assert lines[0].startswith(
        f"::error file={IN_CLONE}beeuni.yaml,line=5,col=15,endLine=5,endColumn=34,title=tools/beeuni-ref::"
    )
    assert lines[1].startswith("::notice ")
    assert "::tool name `100%25, right: no` must" in lines[2]
    assert "`two\\nlines`" in lines[3]  # a manifest's line break is shown escaped, in every format
    assert len(lines) == 6


def test_github_appends_a_markdown_table_to_the_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = run_beeuni(
        ["validate", "project", "--format", "github"], cwd=CASE, env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert result.code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n### beeuni: 4 errors, 1 warning, 1 info\n\n| Severity | Rule | Location |")
    assert f"| error | `tools/name-format` | `{IN_CLONE}beeuni.yaml:8:3` | tool name `two\\\\nlines` must be" in text
    assert text.count("\n| ") == 2 + 6


def test_step_summary_escapes_pipes_and_says_when_there_is_nothing() -> None:
    found = Diagnostic("a/b", "error", "x | y", "f.yaml", 1, 1)
    assert "| x \\| y |" in step_summary(Findings([found], [], Sources(lambda _: None)))
    assert step_summary(Findings([], [], Sources(lambda _: None))) == "### beeuni: no problems\n\n"


def test_gitlab_fingerprints_are_stable_when_lines_move_and_distinct_for_repeats() -> None:
    def fingerprints(*lines: int) -> list[str]:
        found = [Diagnostic("a/b", "warning", "same", "f.yaml", line, 3) for line in lines]
        return [issue["fingerprint"] for issue in code_quality(Findings(found, [], Sources(lambda _: None)))]

    assert fingerprints(4, 9) == fingerprints(14, 19)
    assert len(set(fingerprints(4, 9))) == 2


def test_gitlab_issues_have_the_fields_code_quality_reads() -> None:
    issues = json.loads(run_beeuni(["validate", "project", "--format", "gitlab"], cwd=CASE).stdout)
    assert {issue["severity"] for issue in issues} == {"major", "minor", "info"}
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert set(issue["location"]) == {"path", "lines"}
        assert isinstance(issue["location"]["lines"]["begin"], int)


@pytest.mark.parametrize("output_format", ["sarif", "gitlab", "github", "json"])
def test_output_writes_the_format_to_a_file_while_the_terminal_gets_text(tmp_path: Path, output_format: str) -> None:
    project = tmp_path / "project"
    shutil.copytree(CASE / "project", project)
    target = tmp_path / "reports" / f"beeuni.{output_format}"
    result = run_beeuni(["validate", str(project), "--format", output_format, "--output", str(target)], cwd=tmp_path)
    plain = run_beeuni(["validate", str(project)], cwd=tmp_path)
    alone = run_beeuni(["validate", str(project), "--format", output_format], cwd=tmp_path)
    assert (result.stdout, result.stderr, result.code) == (plain.stdout, plain.stderr, plain.code)
    assert target.read_text() == alone.stdout


def test_quiet_prints_errors_only_and_keeps_the_exit_code() -> None:
    result = run_beeuni(["validate", "project", "--quiet"], cwd=CASE)
    assert result.code == 1
    assert result.stderr == ""
    assert result.stdout.count(": error[") == 4
    assert ": warning[" not in result.stdout and ": info[" not in result.stdout


def test_max_warnings_fails_a_run_with_more_warnings(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\ntool: {}\n")
    assert run_beeuni(["validate", "project", "--max-warnings", "1"], cwd=tmp_path).code == 0
    over = run_beeuni(["validate", "project", "--max-warnings", "0"], cwd=tmp_path)
    assert over.code == 1
    assert over.stderr.endswith("beeuni: 1 warning, more than --max-warnings 0 allows\n")
    assert run_beeuni(["validate", "project", "--max-warnings", "-1"], cwd=tmp_path).code == 2


def test_several_manifests_make_one_report_with_paths_from_the_current_folder(tmp_path: Path) -> None:
    for name in ("front", "back"):
        shutil.copytree(CASE / "project", tmp_path / name)
    log = json.loads(run_beeuni(["validate", "front", "back", "--format", "sarif"], cwd=tmp_path).stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["front/beeuni.yaml"] * 5 + ["front/more/tools.yaml"] + ["back/beeuni.yaml"] * 5 + [
        "back/more/tools.yaml"
    ]
    assert log["runs"][0]["results"][5]["locations"][0]["physicalLocation"]["region"]["endColumn"] == 23


def run_on_terminal(args: list[str], cwd: Path, colour: bool) -> str:
    """Run beeuni with standard output on a pseudo-terminal; what the terminal received."""
    import os

    from conftest import BEEUNI, read_terminal

    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    if not colour:
        env["NO_COLOR"] = "1"
    return read_terminal([BEEUNI, *args], cwd, env, "stdout", 60)[0]


def test_on_a_terminal_text_is_code_frames_and_concise_stays_one_line() -> None:
    typos = ROOT / "tests" / "golden" / "agents-typos"
    framed = run_on_terminal(["validate", "project"], typos, colour=False)
    assert framed == (typos / "validate-format-full.out").read_text().split("--- stderr")[0]
    assert "  |                 ^^^ agents/unknown-tool\n  |\n  = help: did you mean `bash`?\n" in framed
    concise = run_on_terminal(["validate", "project", "--format", "concise"], typos, colour=False)
    assert concise == (typos / "validate.out").read_text().split("--- stderr")[0]


def test_code_frames_on_a_terminal_come_from_libyaml_events() -> None:
    """On a terminal, the frames' spans, and the fixes' splices (`did you mean`), come from
    libyaml's events (``engine/yaml/spans.py``)."""
    import os
    import sys

    from conftest import BEEUNI, read_terminal

    typos = ROOT / "tests" / "golden" / "agents-typos"
    command = [sys.executable, "-X", "importtime", BEEUNI, "validate", "project"]
    run_on_terminal(["validate", "project"], typos, colour=False)  # the rule cache warm
    _, report = read_terminal(command, typos, {**os.environ, "NO_COLOR": "1"}, "stdout", 60)
    imported = {line.rpartition("|")[2].strip() for line in report.splitlines() if line.startswith("import time:")}
    assert {"beeuni.engine.yaml.spans", "beeuni.cli.frames"} <= imported


def test_colour_on_a_terminal_unless_no_color() -> None:
    typos = ROOT / "tests" / "golden" / "agents-typos"
    coloured = run_on_terminal(["validate", "project"], typos, colour=True)
    assert "\x1b[1;33mwarning\x1b[0m" in coloured and "\x1b[1;33m^^^\x1b[0m" in coloured
    assert "\x1b[" not in run_on_terminal(["validate", "project"], typos, colour=False)


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [('"(unclosed"', "regular expression `(unclosed` does not compile"), ('"no group"', "with a group")],
)
def test_a_broken_help_pattern_is_a_mistake_of_the_rules(tmp_path: Path, pattern: str, problem: str) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("tests"))
    editors = rules / "editors.rules"
    source = editors.read_text()
    start = source.index("let HELP_PATTERN = ")
    end = source.index("\n", start)
    editors.write_text(source[:start] + f"let HELP_PATTERN = {pattern}" + source[end:])
    result = run_beeuni(["validate", "project", "--format", "full", "--rules", str(rules)], cwd=CASE)
    line = source[:start].count("\n") + 1
    assert result.code == 2
    assert result.stderr.startswith(f"{rules}/editors.rules:{line}:1: error[rules] `HELP_PATTERN`"), result.stderr
    assert problem in result.stderr


def test_rules_check_writes_the_same_formats(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("tests"))
    tools = rules / "tools.rules"
    tools.write_text(tools.read_text().replace("let BEEUNI_PREFIX = ", "let BEEUNI_PREFIX = = ", 1))
    sarif = run_beeuni(["rules", "check", "rules", "--format", "sarif"], cwd=tmp_path)
    assert sarif.code == 1
    log = json.loads(sarif.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    [result] = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert result["ruleId"] == "rules"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "rules/tools.rules"
    github = run_beeuni(["rules", "check", "rules", "--format", "github"], cwd=tmp_path)
    assert "::error file=rules/tools.rules,line=" in github.stdout


def test_ci_formats_name_files_from_the_git_root_else_the_current_folder(tmp_path: Path) -> None:
    """A monorepo: each file by its path from the root of the git repository that holds it, for
    one path as for several, whatever the current folder; outside git, from the current folder.
    Text keeps the manifest's own paths."""
    import subprocess

    mono = tmp_path / "mono"
    for name in ("shop", "support"):
        shutil.copytree(CASE / "project", mono / "projects" / name)
    outside = run_beeuni(["validate", "projects/shop", "--format", "github"], cwd=mono).stdout.splitlines()
    files = [line.split(",")[0].split(" file=")[1] for line in outside]
    assert files == ["projects/shop/beeuni.yaml"] * 5 + ["projects/shop/more/tools.yaml"]

    subprocess.run(["git", "init", "-q"], cwd=mono, check=True)
    subprocess.run(["git", "add", "-A"], cwd=mono, check=True)  # the release holds what outside git is checked
    projects = mono / "projects"
    one = run_beeuni(["validate", "shop", "--format", "github"], cwd=projects).stdout
    assert one == "\n".join(outside) + "\n"
    target = tmp_path / "shop.sarif"
    run_beeuni(["validate", "shop", "support", "--format", "sarif", "--output", str(target)], cwd=projects)
    log = json.loads(target.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": mono.as_uri() + "/"}}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    files_of = ("beeuni.yaml", "more/tools.yaml")
    assert uris == {f"projects/{name}/{file}" for name in ("shop", "support") for file in files_of}
    gitlab = json.loads(run_beeuni(["validate", "../support", "--format", "gitlab"], cwd=projects / "shop").stdout)
    assert {issue["location"]["path"] for issue in gitlab} == {f"projects/support/{file}" for file in files_of}
    text = run_beeuni(["validate", "shop"], cwd=projects).stdout
    assert text.startswith("beeuni.yaml:5:15: error[tools/beeuni-ref]")
