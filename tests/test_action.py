"""The GitHub Action (action.yml), run as a runner runs a composite action: each step's `run:`
in bash with `-eo pipefail`, its `env:` with the inputs and contexts substituted, and what a step
appends to `$GITHUB_PATH` on the PATH of the steps after it. The action's source is a copy of
this repository's tracked files (what `uses: owner/beeuni@ref` checks out); it installs beeuni
from there into a virtualenv of its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import ROOT

EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _source_checkout(target: Path) -> Path:
    """The repository's tracked files, as the working tree has them."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in listed.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def run_action(inputs: dict[str, str], workspace: Path, runner: Path) -> tuple[int, str, str]:
    """Run the action's steps with ``inputs`` in ``workspace``; the exit status of the step that
    failed (or 0), the output of every step, and the step summary written."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    given = {name: inputs.get(name, spec.get("default", "")) for name, spec in action["inputs"].items()}
    assert given.keys() >= inputs.keys(), "an input the action does not declare"
    contexts = {
        **{f"inputs.{name}": value for name, value in given.items()},
        "github.action_path": str(_source_checkout(runner / "action")),
        "runner.temp": str(runner / "temp"),
    }
    (runner / "temp").mkdir()
    github_path, summary = runner / "github_path", runner / "step_summary"
    github_path.touch()
    paths: list[str] = []
    output = ""
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash" and "uses" not in step
        env = {name: EXPRESSION.sub(lambda m: contexts[m.group(1)], str(value)) for name, value in step["env"].items()}
        assert EXPRESSION.search(step["run"]) is None, "inputs reach a script only through env:"
        environment = {
            **os.environ,
            **env,
            "GITHUB_PATH": str(github_path),
            "GITHUB_STEP_SUMMARY": str(summary),
            "PATH": os.pathsep.join([*reversed(paths), "/usr/bin", "/bin"]),
        }
        environment.pop("VIRTUAL_ENV", None)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )
        output += done.stdout + done.stderr
        if done.returncode:
            return done.returncode, output, summary.read_text() if summary.exists() else ""
        paths = github_path.read_text().splitlines()
    return 0, output, summary.read_text() if summary.exists() else ""


def test_the_action_installs_beeuni_and_annotates(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "projects" / "shop").mkdir(parents=True)
    shop = workspace / "projects" / "shop" / "beeuni.yaml"
    shop.write_text("tools:\n  web_search: beeuni:web_search\n  Bad: x.ts\n")
    shutil.copytree(ROOT / "examples" / "starter", workspace / "projects" / "support")
    runner = tmp_path / "runner"
    runner.mkdir()
    inputs = {"paths": "projects/shop projects/support", "args": "--max-warnings 0", "python": sys.executable}
    status, output, summary = run_action(inputs, workspace, runner)
    assert status == 1, output
    assert "::error file=projects/shop/beeuni.yaml,line=3," in output
    assert "title=tools/name-format::" in output
    assert "| `projects/shop/beeuni.yaml:3:3` |" in summary, summary
    installed = runner / "temp" / "beeuni-venv" / "bin" / "beeuni"
    assert installed.exists()
