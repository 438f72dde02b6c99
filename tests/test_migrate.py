"""`beeuni tools migrate` beyond its golden cases (tests/golden/migrate-*, run
by test_eject.py): a dry run changes nothing, a run that fails half-way takes its writes back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from beeuni.cli.tool_files import Changes
from beeuni.engine.paths import Repository
from conftest import ROOT, run_beeuni

SHAPES = ROOT / "tests" / "golden" / "migrate-docs-shapes" / "project"


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


def test_a_dry_run_changes_nothing_not_even_timestamps(tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(SHAPES, work)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    before = snapshot(work)
    result = run_beeuni(["tools", "migrate", "project", "--dry-run"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "convert  .opencode/tools/math.ts → tools/math_add.ts" in result.stdout
    assert snapshot(work) == before


def test_a_second_run_finds_only_what_it_could_not_convert(tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(SHAPES, work)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    assert run_beeuni(["tools", "migrate", "project"], cwd=tmp_path).code == 0
    again = run_beeuni(["tools", "migrate", "project"], cwd=tmp_path)
    assert again.code == 0
    assert again.stdout.startswith("Nothing was changed:\n")
    assert "convert" not in again.stdout and "delete" not in again.stdout


def test_changes_that_fail_half_way_are_taken_back(tmp_path: Path) -> None:
    (tmp_path / "old.ts").write_bytes(b"old")
    (tmp_path / "kept.ts").write_bytes(b"kept")
    (tmp_path / "blocked").write_bytes(b"a file where a folder must be")
    repo = Repository(str(tmp_path))
    changes = Changes(repo)
    changes.write("new.ts", str(tmp_path / "new.ts"), b"new")
    changes.write("kept.ts", str(tmp_path / "kept.ts"), b"changed")
    changes.delete("old.ts", str(tmp_path / "old.ts"))
    changes.write("blocked/module.ts", str(tmp_path / "blocked" / "module.ts"), b"cannot be written")
    with pytest.raises(OSError):
        changes.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "kept.ts", "old.ts"]
    assert (tmp_path / "kept.ts").read_bytes() == b"kept" and (tmp_path / "old.ts").read_bytes() == b"old"
