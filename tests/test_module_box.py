"""What a module process runs with, played as an attacker: the real daemon, Bun and git.

Bun reads no configuration of the repository — no `bunfig.toml` (whose `preload` would run in
every later call) and no `.env` — and a module can write neither git's folder (whose hooks and
`core.fsmonitor` run at the next `git status` anyone runs) nor what the harness loads from the
repository, though the rest of the working tree stays its workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
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
CHMODS = """import { chmodSync, chownSync, closeSync, copyFileSync, fchmodSync, fchownSync, lchownSync, openSync,
  statSync, utimesSync, writeFileSync } from 'node:fs'
function attempt(act) {
  try { act(); return 'changed' } catch (error) { return error.code }
}
function throughFd(path, act) {
  const fd = openSync(path, 'r')
  try { act(fd) } finally { closeSync(fd) }
}
export default {
  description: 'Changes the mode, owner and times of the files it is given, and makes files of its own.',
  parameters: { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } } } },
  async execute(args, context) {
    const [uid, gid] = [process.getuid(), process.getgid()]
    const tried = {}
    for (const path of args.paths) {
      tried[path] = {
        chmod: attempt(() => chmodSync(path, 0o666)),
        chown: attempt(() => chownSync(path, uid, gid)),
        lchown: attempt(() => lchownSync(path, uid, gid)),
        utimes: attempt(() => utimesSync(path, 1, 1)),
        fchmod: attempt(() => throughFd(path, (fd) => fchmodSync(fd, 0o666))),
        fchown: attempt(() => throughFd(path, (fd) => fchownSync(fd, uid, gid))),
      }
    }
    const shell = Bun.spawnSync(['sh', '-c', 'chmod 666 "$@" 2>/dev/null; echo $?', 'sh', ...args.paths])
    const out = `${context.cwd}/out`
    writeFileSync(`${out}/made`, 'mine', { mode: 0o600 })  // the mode of open: no chmod needed
    copyFileSync(`${out}/made`, `${out}/copied`)
    const touched = Bun.spawnSync(['touch', `${out}/touched`]).exitCode
    const own = attempt(() => chmodSync(`${out}/made`, 0o644))
    const made = statSync(`${out}/made`).mode & 0o777
    return { tried, shell: shell.stdout.toString().trim(), made, touched, own }
  },
}
"""
MANIFEST = """tools:
  sees: tools/sees.ts
  writes: tools/writes.ts
  chmods: tools/chmods.ts
agents:
  a:
    tools: [writes, chmods]
  b:
    tools: [sees]
    secrets: all
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tools = {"sees.ts": SEES, "writes.ts": WRITES, "chmods.ts": CHMODS}
    return released_project(tmp_path, tools, MANIFEST, "PAYROLL_KEY", SECRET)


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


def attributes(path: Path) -> tuple[int, int, int, int]:
    found = path.lstat()
    return found.st_mode, found.st_uid, found.st_gid, found.st_mtime_ns


def test_a_module_changes_no_mode_owner_or_time_outside_its_workspace(project: Path, tmp_path: Path) -> None:
    """Landlock does not cover a file's attributes: the syscall filter refuses the changes, by
    path or through a descriptor, of the files a module cannot open (the secrets store, the state
    folder) and of those it may only read (the served release, the plugin, Bun's empty
    bunfig.toml, git's configuration), in the module's process and in the programs it starts."""
    with running_daemon(project, tmp_path) as daemon:
        private = next(Path(tempfile.gettempdir()).glob(f"beeuni-daemon-{daemon.process.pid}-*"))
        targets = [
            next(daemon.state.glob("projects/*/secrets.json")),
            daemon.state,
            project / ".git" / "config",
            private,
            *(path for path in private.rglob("*") if path.is_file() and "host" not in path.relative_to(private).parts),
        ]
        assert any(path.name == "bunfig.toml" for path in targets) and any(path.name == "chmods.ts" for path in targets)
        assert any("plugin" in path.parts for path in targets)
        before = {path: attributes(path) for path in targets}
        answer = daemon.call("chmods", {"paths": [str(path) for path in targets]}, agent="a")
        assert answer.status_code == 200, answer.text
        seen = json.loads(answer.json()["output"])
        after = {path: attributes(path) for path in targets}
    assert after == before
    for path, tried in seen["tried"].items():
        by_path = {tried[call] for call in ("chmod", "chown", "lchown", "utimes")}
        assert by_path == {"EPERM"}, path
        # what it may not even open fails at the open
        assert {tried["fchmod"], tried["fchown"]} <= {"EPERM", "EACCES"}, path
    assert seen["shell"] == "1"  # the filter holds in the programs a module starts
    # what a module makes is made with its mode; a copy and `touch` work; its own files keep theirs too
    assert (seen["made"], seen["touched"], seen["own"]) == (0o600, 0, "EPERM")
    assert (project / "out" / "copied").read_text() == "mine"
    assert os.stat(project / "out" / "made").st_mode & 0o777 == 0o600
