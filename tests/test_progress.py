"""Rich only on a terminal: `rules diff` and `tools migrate` show a progress bar there (its label
from the rules), and help and usage errors come in Rich's panels; off a terminal no command
imports rich at all, so CI pays nothing, and help is Click's plain text."""

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
    received, _ = read_terminal(args, tmp_path, env, "stderr", 300)
    assert label in received


#: run the command, and say at its exit whether rich was imported (Typer imports it where it can)
TELLING_RICH = (
    "import atexit, sys; atexit.register(lambda: print('rich imported:', 'rich' in sys.modules, file=sys.stderr)); "
    "from beeuni.cli.main import main; main()"
)


@pytest.mark.parametrize("args", [["-h"], ["tools", "-h"], ["rules", "check", "-h"], ["sessions", "ls", "--nope"]])
def test_off_a_terminal_help_and_usage_errors_are_plain_text(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", TELLING_RICH, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    shown = done.stdout + done.stderr
    assert "Traceback" not in shown and "Usage: " in shown, shown
    assert "rich imported: False" in done.stderr, done.stderr
    assert not any(line in shown for line in "╭│╰"), shown  # no panel drawn


def test_on_a_terminal_help_comes_in_panels(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm"}
    args = [sys.executable, "-c", "from beeuni.cli.main import main; main()", "-h"]
    received, _ = read_terminal(args, tmp_path, env, "stdout", 60)
    assert "Usage:" in received and "╭─" in received and "Commands" in received, received
