"""A call's processes end with the call, whatever they do: the real daemon and Bun, a module that
leaves processes behind every way it can — a child started with `setsid` or `detached: true`, a
grandchild whose parent exited (a double fork), a child it does not wait for — after its answer,
after a 504, and after the daemon is killed with SIGKILL. Each process is found by a unique word in
its command line (a `sleep` of that many seconds), whatever PID namespace it is in; polls are
bounded, never timed.

Run as root (this machine's user) and as an ordinary user (`nobody`, whose daemon puts each
process in a user namespace of its own as well).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from daemon_helpers import (
    Daemon,
    daemon_refused,
    process_runs,
    processes_with,
    running_daemon,
    start_daemon,
    stop_daemon,
    wait_until,
)

STRAYS = """import { spawn } from 'node:child_process'
import { readlinkSync, writeFileSync } from 'node:fs'
export default {
  description: 'Leaves a `sleep` running as it is told; its seconds are the marker.',
  parameters: { type: 'object', properties: { how: { type: 'string' }, marker: { type: 'string' } } },
  async execute(args, context) {
    const sleep = ['sleep', args.marker]
    const quiet = { stdio: ['ignore', 'ignore', 'ignore'] }
    if (args.how === 'setsid') spawn('setsid', sleep, { detached: true, stdio: 'ignore' }).unref()
    if (args.how === 'detached') spawn('sleep', [args.marker], { detached: true, stdio: 'ignore' }).unref()
    if (args.how === 'double') Bun.spawnSync(['sh', '-c', `setsid sleep ${args.marker} >/dev/null 2>&1 &`])
    if (args.how === 'child') Bun.spawn(sleep, quiet)
    if (args.how === 'spin' || args.how === 'hang') {
      spawn('setsid', sleep, { detached: true, stdio: 'ignore' }).unref()
      writeFileSync(`${context.cwd}/marks/${args.marker}`, readlinkSync('/proc/self'))
      if (args.how === 'spin') for (;;) {}
      await new Promise(() => {})
    }
    return `left ${args.how}`
  },
}
"""
MANIFEST = """tools:
  strays: tools/strays.ts
agents:
  a:
    tools: all
"""
NOBODY = 65534
WAYS = ["setsid", "detached", "double", "child"]


def marker() -> str:
    """A number of seconds no other process sleeps: the word its command line is found by."""
    return f"9{secrets.randbelow(10**8):08d}"


def make_project(folder: Path) -> Path:
    (folder / "tools").mkdir(parents=True)
    (folder / "marks").mkdir()
    (folder / "tools" / "strays.ts").write_text(STRAYS)
    (folder / "beeuni.yaml").write_text(MANIFEST)
    return folder


@pytest.fixture(scope="module", params=["root", "nobody"])
def daemon(request: pytest.FixtureRequest) -> Iterator[Daemon]:
    with daemon_as(request.param) as running:
        yield running


@contextmanager
def daemon_as(user: str) -> Iterator[Daemon]:
    """A daemon of ``user`` ("root", or "nobody": an ordinary user, its folders its own) serving a
    project with the `strays` module, in a folder of its own removed afterwards."""
    if user == "nobody" and os.geteuid() != 0:
        pytest.skip("only root can start a daemon as another user")
    folder = Path(tempfile.mkdtemp(prefix="beeuni-strays-"))
    try:
        project = make_project(folder / "project")
        if user == "nobody":
            os.chmod(folder, 0o755)
            for path in [folder, *folder.rglob("*")]:
                os.chown(path, NOBODY, NOBODY)
        env = {"HOME": str(folder), "TMPDIR": str(folder)}
        uid = NOBODY if user == "nobody" else None
        daemon = start_daemon(
            project, folder / "state", "--harness", "experimental", "--timeout", "3", env=env, user=uid
        )
        try:
            yield daemon
        finally:
            stop_daemon(daemon)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def project_of(daemon: Daemon) -> Path:
    return daemon.state.parent / "project"


def gone(word: str) -> bool:
    return not processes_with(word)


@pytest.mark.parametrize("how", WAYS)
def test_what_a_call_leaves_running_ends_with_it(daemon: Daemon, how: str) -> None:
    word = marker()
    answer = daemon.call("strays", {"how": how, "marker": word}, agent="a")
    assert (answer.status_code, answer.json()["output"]) == (200, f"left {how}")
    wait_until(lambda: gone(word), f"the `{how}` process to end with its call")
    again = daemon.call("strays", {"how": "none", "marker": word}, agent="a")  # the daemon serves on
    assert again.status_code == 200


def test_what_a_call_left_running_ends_with_its_timeout(daemon: Daemon) -> None:
    word = marker()
    with call_in_a_thread(daemon, {"how": "spin", "marker": word}) as answer:
        wait_until((project_of(daemon) / "marks" / word).exists, "the call to start")
        wait_until(lambda: not gone(word), "its `setsid` process to run")
    assert answer[0] is not None and answer[0].status_code == 504
    wait_until(lambda: gone(word), "the `setsid` process to end with the call's 504")


@contextmanager
def call_in_a_thread(daemon: Daemon, args: dict[str, str]) -> Iterator[list[httpx.Response | None]]:
    """A call of `strays` in a thread: its answer (None while it runs, or when the connection
    broke) in a list, the thread joined on leaving."""
    answer: list[httpx.Response | None] = [None]

    def call() -> None:
        with contextlib.suppress(httpx.HTTPError):
            answer[0] = daemon.call("strays", args, agent="a")

    thread = threading.Thread(target=call)
    thread.start()
    try:
        yield answer
    finally:
        thread.join(timeout=120)


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_every_process_ends_with_a_daemon_killed_by_sigkill(user: str) -> None:
    word = marker()
    with daemon_as(user) as daemon:
        with call_in_a_thread(daemon, {"how": "hang", "marker": word}):
            wait_until((project_of(daemon) / "marks" / word).exists, "the call to start")
            wait_until(lambda: not gone(word), "its `setsid` process to run")
            hosts = daemon.host_pids()
            assert hosts  # the running call's and the warm ones
            assert all(init_of_its_namespace(pid) for pid in hosts)
            assert "no PID namespace" not in daemon.log()
            daemon.process.send_signal(signal.SIGKILL)
            daemon.process.wait()
        wait_until(lambda: gone(word), "the `setsid` process to end with the daemon")
        wait_until(lambda: not any(process_runs(pid) for pid in hosts), "the module processes to end with the daemon")


def test_what_a_module_starts_at_import_ends_with_the_load_and_with_the_call(tmp_path: Path) -> None:
    """The load report imports every module in a probe process of its own: what an import starts
    ends with that process, as what a call's import starts ends with the call."""
    word = marker()
    project = make_project(tmp_path / "project")
    at_import = f"""import {{ spawn }} from 'node:child_process'
import {{ appendFileSync }} from 'node:fs'
spawn('setsid', ['sleep', '{word}'], {{ detached: true, stdio: 'ignore' }}).unref()
appendFileSync('{project}/marks/{word}', 'started\\n')
export default {{
  description: 'Starts a process when it is imported.',
  parameters: {{ type: 'object', properties: {{}} }},
  async execute() {{ return 'imported' }},
}}
"""
    (project / "tools" / "at_import.ts").write_text(at_import)
    (project / "beeuni.yaml").write_text(MANIFEST.replace("agents:", "  at_import: tools/at_import.ts\nagents:"))
    marks = project / "marks" / word
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        assert marks.read_text() == "started\n"  # by the load report's import
        wait_until(lambda: gone(word), "what the load's import started to end with the probe")
        assert daemon.call("at_import", agent="a").json()["output"] == "imported"
        assert marks.read_text() == "started\n" * 2
        wait_until(lambda: gone(word), "what the call's import started to end with the call")


def init_of_its_namespace(pid: int) -> bool:
    """Whether process ``pid`` is process 1 of a PID namespace below this one."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    numbers = next(line for line in status if line.startswith("NSpid:")).split()[1:]
    return len(numbers) == 2 and numbers[1] == "1"


def test_without_pid_namespaces_the_daemon_says_so_and_cleans_up_by_process_group(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    off = {"BEEUNI_PID_NAMESPACE": "off"}
    with running_daemon(project, tmp_path, "--harness", "experimental", env=off) as daemon:
        kept, escaped = marker(), marker()
        assert daemon.call("strays", {"how": "child", "marker": kept}, agent="a").status_code == 200
        wait_until(lambda: gone(kept), "the call's child to be killed with its process group")
        assert daemon.call("strays", {"how": "setsid", "marker": escaped}, agent="a").status_code == 200
        try:  # what the log line warns of: a new session escapes the process group
            wait_until(lambda: not gone(escaped), "the `setsid` process to be found")
        finally:
            for pid in processes_with(escaped):
                os.kill(pid, signal.SIGKILL)
        line = "[tools] the module host's processes get no PID namespace of their own (BEEUNI_PID_NAMESPACE=off):"
        assert daemon.log().count(line) == 1
    refused, handed = daemon_refused(project, tmp_path / "s", "--require-confinement", env=off)
    assert (refused.code, handed) == (2, b"")
    assert refused.stderr == (
        "beeuni daemon: the module host's processes get no PID namespace of their own (BEEUNI_PID_NAMESPACE=off)"
        " and --require-confinement was given\n"
    )
