"""The command as a CI job expects it: ``--version``, ``-V`` and ``-h``; a closed standard output
ends with the exit status of the check and nothing else; Bun is found where the project or the
set-up put it, without PATH."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from beeuni.daemon.host import bun as bun_lookup
from conftest import BEEUNI, ROOT, run_beeuni

STARTER = ROOT / "examples" / "starter"
REAL_BUN = ROOT / "node_modules" / ".bin" / "bun"


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_the_version(tmp_path: Path, flag: str) -> None:
    result = run_beeuni([flag], cwd=tmp_path)
    assert (result.code, result.stdout, result.stderr) == (0, f"beeuni {version('beeuni')}\n", "")


@pytest.mark.parametrize(
    "args",
    # the first is the Typer application's; validate, resolve and rules check have fast paths of their own
    [["-h"], ["validate", "-h"], ["resolve", "-h"], ["rules", "check", "-h"], ["tools", "ls", "-h"]],
)
def test_short_help(tmp_path: Path, args: list[str]) -> None:
    short = run_beeuni(args, cwd=tmp_path)
    long = run_beeuni([*args[:-1], "--help"], cwd=tmp_path)
    assert short.code == 0, short.stderr
    assert short.stdout == long.stdout and f"Usage: beeuni {' '.join(args[:-1])}".rstrip() in short.stdout


@pytest.fixture(scope="module")
def failing_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A manifest with 600 errors: its output is larger than a pipe holds."""
    project = tmp_path_factory.mktemp("failing")
    lines = [f"  Bad-Name{i}: tools/missing{i}.ts\n" for i in range(300)]
    (project / "beeuni.yaml").write_text("tools:\n" + "".join(lines))
    return project


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "--format", "github"],
        ["validate", "--format", "text"],
        ["validate", "--format", "sarif"],
        ["resolve", "--json"],
        ["tools", "ls"],
    ],
)
def test_a_closed_pipe_ends_with_the_status_of_the_check(failing_project: Path, args: list[str]) -> None:
    """Standard output and error are pipes whose reader has gone before the command starts."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    os.close(out_read)
    os.close(err_read)
    try:
        done = subprocess.run([BEEUNI, *args, str(failing_project)], stdout=out_write, stderr=err_write, timeout=120)
    finally:
        os.close(out_write)
        os.close(err_write)
    assert done.returncode == 1


def test_head_reads_one_line(failing_project: Path) -> None:
    """``beeuni validate --format github | head -1``, in bash with pipefail: the first annotation,
    and the exit status of the check."""
    command = f"'{BEEUNI}' validate --format github | head -1"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=failing_project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stdout.startswith("::warning file=beeuni.yaml,") and done.stdout.count("\n") == 1
    assert done.stderr == ""


def _executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_order_bun_is_looked_for_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configured = _executable(tmp_path / "configured" / "bun")
    project = tmp_path / "mono" / "projects" / "shop"
    project.mkdir(parents=True)
    above = _executable(tmp_path / "mono" / "node_modules" / ".bin" / "bun")
    installed = _executable(tmp_path / "venv" / "bin" / "bun")
    on_path = _executable(tmp_path / "path" / "bun")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.setenv("BEEUNI_BUN", str(configured))
    assert bun_lookup.find_bun(str(project)) == str(configured)
    monkeypatch.setenv("BEEUNI_BUN", str(tmp_path / "nothing"))  # set: there and nowhere else
    with pytest.raises(bun_lookup.BunMissing):
        bun_lookup.find_bun(str(project))
    monkeypatch.delenv("BEEUNI_BUN")
    assert bun_lookup.find_bun(str(project)) == str(above)
    beside = _executable(project / "node_modules" / ".bin" / "bun")
    assert bun_lookup.find_bun(str(project)) == str(beside)
    assert bun_lookup.find_bun(str(tmp_path)) == str(installed)
    installed.unlink()
    assert bun_lookup.find_bun(str(tmp_path)) == str(on_path)
    beside.chmod(0o644)  # not executable: not Bun
    assert bun_lookup.find_bun(str(project)) == str(above)


def test_the_projects_own_bun_runs_its_modules(tmp_path: Path) -> None:
    """Without BEEUNI_BUN and PATH, `validate --modules` loads the modules with the Bun of the
    node_modules above the project."""
    project = tmp_path / "projects" / "shop"
    shutil.copytree(STARTER, project)
    used = tmp_path / "used"
    _executable(tmp_path / "node_modules" / ".bin" / "bun", f"#!/bin/sh\n: > '{used}'\nexec '{REAL_BUN}' \"$@\"\n")
    # The stand-in Bun writes outside the repository and runs another Bun: what confinement forbids
    # a tool module's process. This test is about which Bun is found, so it runs unconfined.
    environment = {"BEEUNI_BUN": "", "PATH": "", "BEEUNI_LANDLOCK": "off"}
    result = run_beeuni(["validate", "--modules"], cwd=project, env=environment)
    assert result.code == 0, result.stdout + result.stderr
    assert used.exists()


def test_the_bun_of_the_set_up_is_found_without_path(tmp_path: Path) -> None:
    """`make setup` links the Bun it installed beside the virtualenv's scripts."""
    result = run_beeuni(["validate", "--modules", str(STARTER)], cwd=tmp_path, env={"BEEUNI_BUN": "", "PATH": ""})
    assert result.code == 0, result.stdout + result.stderr
