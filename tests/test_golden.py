"""Golden cases: each folder under tests/golden/ is a project and the outputs it must give.

    tests/golden/<case>/
        project/            the repository: beeuni.yaml and whatever else the case needs
        rules/              (optional) a rules folder to run with, via --rules
        commands            (optional) which commands to run, one per line; default below; an
                            argument with spaces is written in single quotes (`--title 'A b'`)
        setup               (optional) shell lines run in a copy of project/ first (e.g. `git init`,
                            `git add`: a case's own repository cannot be kept inside beeuni's);
                            the commands then run in that copy
        <command>.out       what each command printed: stdout, then stderr and the exit code

Regenerate every expected file with ``make golden`` (BEEUNI_UPDATE_GOLDEN=1) and read the diff.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni

GOLDEN = ROOT / "tests" / "golden"
#: SARIF's ``%SRCROOT%``, the root of the git repository holding a case: this clone, wherever it is
CLONE_URI = ROOT.as_uri() + "/"
UPDATE = bool(os.environ.get("BEEUNI_UPDATE_GOLDEN"))
DEFAULT_COMMANDS = [
    "validate project",
    "validate project --format json",
    "tools ls project",
    "tools ls project --json",
]


def arguments(command: str) -> list[str]:
    """A command line's arguments: split at spaces, except inside single quotes (which go)."""
    return [word[1:-1] if word.startswith("'") else word for word in re.findall(r"'[^']*'|\S+", command)]


def output_name(command: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", command.replace(" project", "").lower()).strip("-") + ".out"


def case_commands(case: Path) -> list[str]:
    listed = case / "commands"
    commands = listed.read_text().splitlines() if listed.exists() else DEFAULT_COMMANDS
    commands = [line for line in commands if line.strip() and not line.startswith("#")]
    if (case / "rules").is_dir():
        commands = [f"{command} --rules rules" for command in commands]
    return commands


# eject-*, fix-*, tools-new-* and migrate-* cases change their project: test_eject.py and test_fix.py run them on a copy
CASES = sorted(
    path
    for path in GOLDEN.iterdir()
    if (path / "project").is_dir() and not path.name.startswith(("eject-", "fix-", "tools-new-", "migrate-"))
)


def prepared(case: Path, tmp_path: Path) -> Path:
    """The folder to run the case's commands in: the case itself, or a copy after its ``setup``."""
    setup = case / "setup"
    if not setup.exists():
        return case
    copy = tmp_path / case.name
    shutil.copytree(case, copy, symlinks=True)
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    for line in setup.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            subprocess.run(["sh", "-c", line], cwd=copy / "project", check=True, env=environment, capture_output=True)
    return copy


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_golden(case: Path, tmp_path: Path) -> None:
    mismatches = []
    where = prepared(case, tmp_path)
    for command in case_commands(case):
        result = run_beeuni(arguments(command), cwd=where)
        expected_file = case / output_name(command.replace(" --rules rules", ""))
        actual = result.transcript().replace(CLONE_URI, "file://<clone>/")
        if UPDATE:
            expected_file.write_text(actual)
            continue
        assert expected_file.exists(), f"{expected_file} is missing: run `make golden`"
        if expected_file.read_text() != actual:
            mismatches.append(f"$ beeuni {command}\n--- expected\n{expected_file.read_text()}--- actual\n{actual}")
    assert not mismatches, "\n".join(mismatches)


def test_every_case_has_a_project() -> None:
    strays = [path.name for path in GOLDEN.iterdir() if path.is_dir() and not (path / "project").is_dir()]
    assert not strays, f"golden folders without project/: {strays}"
