"""`beeuni rules diff`: two rule sets over a corpus of projects, their report and exit status,
and the same results in this process, on a local process pool and on a real Dask cluster.

The base rules are made here from the shipped ones by two edits, so that the case follows the
rules as they are: the base knows no `show` Beeuni tool (the change under review adds it), and
reports an unknown top-level key as an error (the change makes it a warning). The expected
reports are in tests/golden/rules-diff/ (``make golden`` rewrites them).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni
from test_golden import UPDATE

CASE = ROOT / "tests" / "golden" / "rules-diff"
CORPUS = CASE / "project" / "corpus"
SHOW = '"memory", "show"]'
UNKNOWN_KEY = "rule manifest/unknown-key {\n  severity warning"


def edited_rules(folder: Path, *edits: tuple[str, str, str]) -> Path:
    """A copy of the shipped rules with each (file, old, new) replacement made exactly once."""
    shutil.copytree(ROOT / "rules", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    for name, old, new in edits:
        source = (folder / name).read_text()
        assert source.count(old) == 1, f"the shipped {name} changed: update this test's edit of `{old}`"
        (folder / name).write_text(source.replace(old, new))
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder holding `base-rules` (before the change) and `new-rules` (the shipped rules)."""
    edited_rules(
        tmp_path / "base-rules",
        ("tools.rules", SHOW, '"memory"]'),
        ("manifest.rules", UNKNOWN_KEY, UNKNOWN_KEY.replace("warning", "error")),
    )
    edited_rules(tmp_path / "new-rules")
    return tmp_path


def diff(workspace: Path, *args: str, base: str = "base-rules", rules: str = "new-rules") -> tuple[str, str, int]:
    result = run_beeuni(["rules", "diff", "--base", base, "--rules", rules, *args], cwd=workspace)
    return result.stdout, result.stderr, result.code


@pytest.mark.parametrize("output_format", ["text", "json", "markdown"])
def test_golden_report(workspace: Path, output_format: str) -> None:
    """The report of the change: summary and counts per rule first, then each affected project;
    the project no rule set can read is listed as not compared."""
    result = run_beeuni(
        ["rules", "diff", "--base", "base-rules", "--corpus", str(CORPUS), "--format", output_format],
        cwd=workspace,
    )
    expected = CASE / f"rules-diff-{output_format}.out"
    if UPDATE:
        expected.write_text(result.transcript())
    assert expected.read_text() == result.transcript()


def test_the_report_counts_what_changed(workspace: Path) -> None:
    stdout, _, code = diff(workspace, "--corpus", str(CORPUS), "--format", "json")
    report = json.loads(stdout)
    summary = report["summary"]
    assert (summary["projects"], summary["affected"], summary["not_compared"]) == (5, 3, 1)
    assert summary["session_tools_changed"] == 3  # all but explicit-tools, which lists its tools
    by_project = {project["project"]: project for project in report["projects"]}
    assert "explicit-tools" not in by_project
    assert by_project["starter"]["tools"]["added"] == ["show"]
    assert [d["rule"] for d in by_project["starter"]["diagnostics"]["removed"]] == ["tools/unknown-beeuni-tool"]
    changed = by_project["unknown-keys/beeuni.yaml"]["diagnostics"]["changed"]
    assert [(c["before"]["severity"], c["after"]["severity"]) for c in changed] == [("error", "warning")] * 4
    writer = [a for a in by_project["no-tools-key"]["agents"] if a["agent"] == "writer"]
    assert [(a["harness"], a["added"], a["removed"]) for a in writer] == [
        ("experimental", ["show"], []),
        ("standard", ["show"], []),
    ]
    assert by_project["missing"]["failure"] == {"base": "no manifest found", "new": "no manifest found"}
    assert code == 1


def test_same_rules_exit_0(workspace: Path) -> None:
    stdout, _, code = diff(workspace, "--corpus", str(CORPUS), base="new-rules")
    assert "5 projects compared, 0 affected, 0 new errors" in stdout
    assert code == 0


def test_fail_on_new_errors(workspace: Path) -> None:
    """The change removes errors only: it passes with --fail-on new-errors; the reverse change
    (taking `show` away again) brings errors and fails."""
    _, _, code = diff(workspace, "--corpus", str(CORPUS), "--fail-on", "new-errors")
    assert code == 0
    stdout, _, code = diff(
        workspace, "--corpus", str(CORPUS), "--fail-on", "new-errors", base="new-rules", rules="base-rules"
    )
    # `show: beeuni:show` becomes an error in starter; four warnings become errors in unknown-keys
    assert "5 projects compared, 3 affected, 5 new errors" in stdout
    assert code == 1


def test_a_rule_failing_on_one_project_is_reported_for_it(workspace: Path) -> None:
    """A rule that fails while it runs on a project (adding a number to a string the manifest
    holds: no static check can see it): that project fails under the new rules only,
    every other project is still compared."""
    broken = edited_rules(
        workspace / "broken-rules",
        (
            "manifest.rules",
            "rule manifest/unknown-key {",
            'rule x/failing {\n  severity error\n  doc "Fails."\n'
            '  for t in tools\n  when t.value + 1\n  at t.name\n  message "never"\n}\n\nrule manifest/unknown-key {',
        ),
    )
    stdout, _, code = diff(workspace, "--corpus", str(CORPUS), "--format", "json", base="new-rules", rules=broken.name)
    report = json.loads(stdout)
    failing = {p["project"]: p["failure"] for p in report["projects"]}
    assert set(failing) == {"starter", "explicit-tools", "missing"}  # the two others declare no tools
    assert failing["starter"]["base"] is None
    assert "error[rules] rule `x/failing`" in failing["starter"]["new"]
    assert report["summary"]["fails_under_new_only"] == 2
    assert code == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-rules", "project"], "no-such-rules:1:1: error[rules] cannot read the rules folder"),
        (["--base", "base-rules"], "name the projects to compare"),
        (["--base", "base-rules", "--corpus", "no-such-file"], "cannot read the corpus file no-such-file"),
        (["--base", "base-rules", "--workers", "0", "x"], "--workers must be at least 1"),
        (["x"], "Missing option '--base'"),
        (["--base", "base-rules", "--format", "xml", "x"], "Invalid value for '--format'"),
    ],
)
def test_usage_and_rules_errors_exit_2(workspace: Path, args: list[str], message: str) -> None:
    result = run_beeuni(["rules", "diff", *args], cwd=workspace)
    assert result.code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_base_rules_file_is_reported_at_its_position(workspace: Path) -> None:
    (workspace / "base-rules" / "tools.rules").write_text("rule broken {\n")
    result = run_beeuni(["rules", "diff", "--base", "base-rules", str(CORPUS.parent / "starter")], cwd=workspace)
    assert result.code == 2
    assert "base-rules/tools.rules:1:6: error[rules] unexpected `broken`" in result.stderr


def test_scheduler_without_the_dask_extra_names_it(workspace: Path) -> None:
    blocked = "import sys; sys.modules['distributed'] = None; from beeuni.cli.main import main; main()"
    args = ["rules", "diff", "--base", "base-rules", "--scheduler", "tcp://127.0.0.1:1", str(CORPUS.parent / "starter")]
    done = subprocess.run([sys.executable, "-c", blocked, *args], cwd=workspace, capture_output=True, text=True)
    assert done.returncode == 2
    assert "install the `dask` extra (pip install 'beeuni[dask]')" in done.stderr


@pytest.fixture(scope="module")
def dask_scheduler() -> Iterator[str]:
    """A real Dask cluster: two worker processes of one thread each, on 127.0.0.1."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def test_local_pool_and_dask_cluster_give_the_same_results(workspace: Path, dask_scheduler: str) -> None:
    """The same task everywhere: in this process, on two local processes, on the Dask cluster."""
    corpus = workspace / "corpus"
    # every project several times, so that the work is split into several batches
    lines = CORPUS.read_text().splitlines() * 7
    corpus.write_text("".join(f"{CORPUS.parent / line}\n" for line in lines if not line.startswith("#")))
    runs = {
        "one process": diff(workspace, "--corpus", str(corpus), "--format", "json", "--workers", "1"),
        "local pool": diff(workspace, "--corpus", str(corpus), "--format", "json", "--workers", "2"),
        "dask": diff(workspace, "--corpus", str(corpus), "--format", "json", "--scheduler", dask_scheduler),
    }
    reference = runs["one process"]
    assert json.loads(reference[0])["summary"]["projects"] == 35
    for name, run in runs.items():
        assert run == reference, name
