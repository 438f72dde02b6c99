"""`beeuni validate --fix` and `--diff`: golden before/after trees, byte for
byte, and the refusals that must write nothing.

    tests/golden/fix-<case>/
        project/        the repository before
        commands        the commands to run, in order, on a copy of project/
        after/          the repository after; no after/ means "unchanged"
        <command>.out   each command's transcript

`make golden` rewrites after/ and the .out files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni
from test_eject import tree
from test_golden import UPDATE, output_name

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(path for path in GOLDEN.glob("fix-*") if (path / "project").is_dir())


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_fix(case: Path, tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(case / "project", work, symlinks=True)
    transcripts = []
    for command in (case / "commands").read_text().splitlines():
        result = run_beeuni(command.split(), cwd=tmp_path)
        transcripts.append((case / output_name(command), result.transcript()))
    after = tree(work)
    if UPDATE:
        for expected_file, transcript in transcripts:
            expected_file.write_text(transcript)
        shutil.rmtree(case / "after", ignore_errors=True)
        if after != tree(case / "project"):
            for name, data in after.items():
                (case / "after" / name).parent.mkdir(parents=True, exist_ok=True)
                (case / "after" / name).write_bytes(data)
        return
    for expected_file, transcript in transcripts:
        assert expected_file.read_text() == transcript, expected_file.name
    expected = tree(case / "after") if (case / "after").is_dir() else tree(case / "project")
    assert after == expected


def copy_case(name: str, tmp_path: Path) -> Path:
    work = tmp_path / "project"
    shutil.copytree(GOLDEN / name / "project", work, symlinks=True)
    return work


def stamps(folder: Path) -> dict[Path, tuple[int, bytes]]:
    return {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in folder.rglob("*") if path.is_file()}


def test_diff_writes_nothing_and_exits_1_when_it_would_change_something(tmp_path: Path) -> None:
    work = copy_case("fix-typos", tmp_path)
    before = stamps(work)
    result = run_beeuni(["validate", "project", "--diff"], cwd=tmp_path)
    assert result.code == 1
    assert result.stdout.startswith("--- a/beeuni.yaml\n+++ b/beeuni.yaml\n")
    assert stamps(work) == before


def test_the_json_fix_is_the_edit_that_fix_makes(tmp_path: Path) -> None:
    """Applying the `fix` spans of `--format json` by hand gives what `--fix` writes."""
    work = copy_case("fix-in-import", tmp_path)
    document = json.loads(run_beeuni(["validate", "project", "--format", "json"], cwd=tmp_path).stdout)
    fixes = [d["fix"] for d in document["diagnostics"] if d["fix"] is not None]
    assert {fix["file"] for fix in fixes} == {"config/agents.yaml"}
    text = (work / "config" / "agents.yaml").read_bytes().decode()
    lines = text.split("\r\n")
    for fix in sorted(fixes, key=lambda fix: (fix["line"], fix["column"]), reverse=True):
        assert fix["line"] == fix["end_line"]
        line = lines[fix["line"] - 1]
        lines[fix["line"] - 1] = line[: fix["column"] - 1] + fix["replacement"] + line[fix["end_column"] - 1 :]
    run_beeuni(["validate", "project", "--fix"], cwd=tmp_path)
    assert (work / "config" / "agents.yaml").read_bytes() == "\r\n".join(lines).encode()


def test_a_manifest_reached_through_a_link_out_of_the_repository_is_not_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.yaml").write_text("tool:\n  web_search: beeuni:web_search\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "beeuni.yaml").symlink_to(outside / "real.yaml")
    result = run_beeuni(["validate", "repo", "--fix"], cwd=tmp_path)
    assert result.code == 2
    assert "beeuni.yaml is reached through a link out of the repository; nothing was written" in result.stderr
    assert (outside / "real.yaml").read_text() == "tool:\n  web_search: beeuni:web_search\n"
    assert (repo / "beeuni.yaml").is_symlink()


def test_an_import_linked_inside_the_repository_is_fixed_in_its_target(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "shared").mkdir(parents=True)
    (repo / "shared" / "agents.yaml").write_text("agents:\n  a: {tools: [reed]}\n")
    (repo / "agents.yaml").symlink_to(os.path.join("shared", "agents.yaml"))
    (repo / "beeuni.yaml").write_text("imports: [agents.yaml]\n")
    result = run_beeuni(["validate", "repo", "--fix"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (repo / "agents.yaml").is_symlink()
    assert (repo / "shared" / "agents.yaml").read_text() == "agents:\n  a: {tools: [read]}\n"


def test_a_file_mode_survives_a_fix(tmp_path: Path) -> None:
    work = copy_case("fix-top-level-key", tmp_path)
    (work / "beeuni.yaml").chmod(0o640)
    assert run_beeuni(["validate", "project", "--fix"], cwd=tmp_path).code == 0
    assert (work / "beeuni.yaml").stat().st_mode & 0o777 == 0o640


def test_fix_then_reports_what_remains_with_the_options_of_validate(tmp_path: Path) -> None:
    copy_case("fix-typos", tmp_path)
    result = run_beeuni(["validate", "project", "--fix", "--quiet"], cwd=tmp_path)
    assert result.code == 1
    assert [line.split(" ")[1].split("[")[0] for line in result.stdout.splitlines()] == ["error"]
    assert "fixed 9 problems in 1 file" in result.stderr
