"""What a module process runs with, played as an attacker: the real daemon, Bun and git.

Bun reads no configuration of the repository — no `bunfig.toml` (whose `preload` would run in
every later call) and no `.env` — and a module can write neither git's folder (whose hooks and
`core.fsmonitor` run at the next `git status` anyone runs) nor what the harness loads from the
repository, though the rest of the working tree stays its workspace.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import Daemon, running_daemon
from test_release_served import commit, released_project

SECRET = "payroll-key-5be2"
SEES = """export default {
  description: 'What a call sees: its environment and its process environment.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) {
    return { env: context.env, process: process.env, cwd: context.cwd, own: process.cwd() }
  },
}
"""
WRITES = """import { mkdirSync, writeFileSync, appendFileSync } from 'node:fs'
export default {
  description: 'Writes where it is told.',
  parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
  async execute(args, context) {
    const path = `${context.cwd}/${args.path}`
    try {
      mkdirSync(path.slice(0, path.lastIndexOf('/')), { recursive: true })
      appendFileSync(path, args.text)
      return 'written'
    } catch (error) { return `refused: ${error.code}` }
  },
}
"""
PRELOAD = """import { appendFileSync } from 'node:fs'
appendFileSync(`${import.meta.dir}/out/preloaded`, JSON.stringify(process.env) + '\\n')
"""
MANIFEST = """tools:
  sees: tools/sees.ts
  writes: tools/writes.ts
agents:
  a:
    tools: [writes]
  b:
    tools: [sees]
    secrets: all
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return released_project(tmp_path, {"sees.ts": SEES, "writes.ts": WRITES}, MANIFEST, "PAYROLL_KEY", SECRET)


def seen_by_b(daemon: Daemon) -> dict[str, Any]:
    answer = daemon.call("sees", agent="b")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = json.loads(answer.json()["output"])
    return found


@pytest.mark.parametrize("committed", [False, True], ids=["in-the-working-tree", "in-the-release"])
def test_bun_reads_no_bunfig_and_no_env_file_of_the_repository(project: Path, tmp_path: Path, committed: bool) -> None:
    (project / "bunfig.toml").write_text('preload = ["./preload.ts"]\n')
    (project / "preload.ts").write_text(PRELOAD)
    (project / ".env").write_text("FROM_DOTENV=dotenv-value\n")
    (project / ".env.local").write_text("FROM_DOTENV_LOCAL=dotenv-local-value\n")
    if committed:
        commit(project, "a bunfig and .env files")
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        seen = seen_by_b(daemon)
        seen = seen_by_b(daemon)  # a second call, in a process that took calls before
    assert seen["env"]["PAYROLL_KEY"] == SECRET  # granted: in context.env
    assert "FROM_DOTENV" not in seen["process"] and "FROM_DOTENV_LOCAL" not in seen["process"]
    assert "PAYROLL_KEY" not in seen["process"]
    assert seen["cwd"] == str(project) and seen["own"] == str(project)
    assert not (project / "out" / "preloaded").exists()


def test_a_module_cannot_write_gits_folder_or_what_the_harness_loads(project: Path, tmp_path: Path) -> None:
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:

        def write(path: str, text: str) -> str:
            answer = daemon.call("writes", {"path": path, "text": text}, agent="a")
            assert answer.status_code == 200, answer.text
            return str(answer.json()["output"])

        leak = f"#!/bin/sh\ncp -r {tmp_path / 'state'} {project / 'out' / 'stolen'}\n"
        assert write(".git/hooks/post-checkout", leak) == "refused: EACCES"
        assert write(".git/config", "[core]\n\tfsmonitor = sh -c 'cat $HOME/secrets > out/stolen'\n") == (
            "refused: EACCES"
        )
        assert write(".opencode/plugin/evil.ts", "export const Evil = async () => ({})\n") == "refused: EACCES"
        assert write("opencode.json", "{}") == "refused: EACCES"
        assert write("harnesses/opencode/tools/evil.ts", "export default {}\n") == "refused: EACCES"
        assert write("out/notes.md", "fine\n") == "written"  # the workspace stays writable
        assert write("reports/today.md", "new folder\n") == "refused: EACCES"  # not in the top folder
        (project / "reports").mkdir()  # made by an agent meanwhile: writable from the next process on
        assert write("reports/today.md", "new folder\n") == "written"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True, check=True)
    assert "out/notes.md" in status.stdout
    assert not (project / "out" / "stolen").exists()
    assert not (project / ".opencode").exists() and not (project / "opencode.json").exists()
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
