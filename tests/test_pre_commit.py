"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit on a temporary git
repository that names this repository as the hook's source: pre-commit installs beeuni from it
into a virtualenv of its own, as it would for a user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent))


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_hook_checks_the_manifest_and_its_imports(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "more").mkdir(parents=True)
    git("init", "-q", cwd=project)
    (project / "beeuni.yaml").write_text("imports: [more/tools.yaml]\ntools:\n  web_search: beeuni:web_search\n")
    (project / "more" / "tools.yaml").write_text("tools:\n  lookup: tools/lookup.ts\n")
    (project / "notes.txt").write_text("not YAML\n")
    revision = git("rev-parse", "HEAD", cwd=ROOT)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {revision}\n    hooks:\n      - id: beeuni-validate\n"
    )
    git("add", "-A", cwd=project)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "NO_COLOR": "1",
        "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache"),
    }

    def pre_commit(*args: str) -> subprocess.CompletedProcess[str]:
        assert PRE_COMMIT is not None
        command = [PRE_COMMIT, "run", "--color", "never", *args]
        return subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, timeout=900)

    broken = pre_commit("--files", "more/tools.yaml")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "beeuni validate" in broken.stdout and "Failed" in broken.stdout
    assert "more/tools.yaml:2:11: error[tools/module-missing] `tools/lookup.ts` does not exist" in broken.stdout

    skipped = pre_commit("--files", "notes.txt")
    assert skipped.returncode == 0 and "Skipped" in skipped.stdout

    (project / "tools").mkdir()
    (project / "tools" / "lookup.ts").write_text("export default {}\n")
    git("add", "-A", cwd=project)
    fixed = pre_commit("--all-files")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout

    # a warning passes, and is shown
    (project / "beeuni.yaml").write_text("imports: [more/tools.yaml]\n")
    git("add", "-A", cwd=project)
    warned = pre_commit("--files", "beeuni.yaml")
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "Passed" in warned.stdout
    assert "more/tools.yaml:1:1: warning[tools/no-beeuni-tool]" in warned.stdout
