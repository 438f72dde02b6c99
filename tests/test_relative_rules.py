"""A relative `--rules` folder, such as `--rules ../copy`, is the folder from the current one for
every command, those that run modules in Bun included: `tools call`, `daemon`, `tools eject` and
`validate --modules`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni
from daemon_helpers import running_daemon

MARK = "from the copy"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``copy/``: the shipped rules, whose `show` logs a mark when loaded; ``project/``: uses
    `show` and a module of its own."""
    root = tmp_path_factory.mktemp("relative-rules")
    shutil.copytree(ROOT / "rules", root / "copy")
    show = root / "copy" / "beeuni_tools" / "show.ts"
    text = show.read_text()
    assert "export default {" in text
    show.write_text(text + f"\nconsole.error({json.dumps(MARK)})\n")
    (root / "project" / "tools").mkdir(parents=True)
    (root / "project" / "tools" / "lookup.ts").write_text(
        "export default { description: 'Look up.', parameters: { type: 'object', properties: {} },"
        " async execute() { return 'found' } }\n"
    )
    (root / "project" / "beeuni.yaml").write_text("tools:\n  show: beeuni:show\n  lookup: tools/lookup.ts\n")
    return root


def test_tools_call(layout: Path) -> None:
    args = json.dumps({"type": "markdown", "content": "# hi"})
    result = run_beeuni(["tools", "call", "show", "--args", args, "--rules", "../copy"], cwd=layout / "project")
    assert result.code == 0, result.stdout + result.stderr
    assert "Cannot find module" not in result.stderr


def test_daemon(layout: Path, tmp_path: Path) -> None:
    relative = os.path.relpath(layout / "copy")  # from the test's folder, which the daemon starts in
    assert relative.startswith("..")
    with running_daemon(layout / "project", tmp_path, "--rules", relative) as daemon:
        answer = daemon.call("show", {"type": "markdown", "content": "# hi"})
        assert answer.status_code == 200, answer.text + daemon.log()
    assert MARK in daemon.log()


def test_tools_eject(layout: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(layout / "project", project)
    shutil.copytree(layout / "copy", tmp_path / "copy")
    result = run_beeuni(["tools", "eject", "show", "--rules", "../copy"], cwd=project)
    assert result.code == 0, result.stdout + result.stderr
    assert MARK in next((project / "tools").glob("show*.ts")).read_text()


def test_validate_modules(layout: Path) -> None:
    result = run_beeuni(["validate", "--modules", "--rules", "../copy"], cwd=layout / "project")
    assert (result.code, result.stdout) == (0, ""), result.stdout + result.stderr
