"""`rules diff` and `tools migrate` show a rich progress bar on a terminal (its label from the
rules); off a terminal they import no rich at all, so CI pays nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, read_terminal

CORPUS = ROOT / "tests" / "golden" / "rules-diff" / "project" / "corpus"
MIGRATE = ROOT / "tests" / "golden" / "migrate-docs-shapes" / "project"
#: run the command with `rich` unimportable: any import of it fails the command
WITHOUT_RICH = "import sys; sys.modules['rich'] = None; from beeuni.cli.main import main; main()"


def commands(tmp_path: Path) -> dict[str, list[str]]:
    shutil.copytree(MIGRATE, tmp_path / "migrating")
    return {
        "rules diff": ["rules", "diff", "--base", str(ROOT / "rules"), "--workers", "1", "--corpus", str(CORPUS)],
        "tools migrate": ["tools", "migrate", str(tmp_path / "migrating"), "--dry-run"],
    }


@pytest.mark.parametrize("command", ["rules diff", "tools migrate"])
def test_off_a_terminal_rich_is_not_imported(tmp_path: Path, command: str) -> None:
    args = commands(tmp_path)[command]
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RICH, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert "rich" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr


@pytest.mark.parametrize(("command", "label"), [("rules diff", "Comparing projects"), ("tools migrate", "Loading")])
def test_on_a_terminal_a_progress_bar(tmp_path: Path, command: str, label: str) -> None:
    """Standard error is a terminal: the bar, with the rules' label, is drawn there."""
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm"}
    args = [sys.executable, "-c", "from beeuni.cli.main import main; main()", *commands(tmp_path)[command]]
    received = read_terminal(args, tmp_path, env, "stderr", 300)
    assert label in received
