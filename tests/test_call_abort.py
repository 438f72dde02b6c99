"""``context.signal`` aborts when the call runs past the daemon's ``--timeout`` or its client goes
away, and the module has a grace period to finish before its Worker and processes are ended. The
real daemon and Bun; the module passes the signal to ``fetch`` of a local HTTP server that never
answers, and to an ``abort`` listener that writes marks in the repository."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_beeuni
from daemon_helpers import BUN, Daemon, process_runs, running_daemon, wait_until

WAITING = """import { appendFileSync, readlinkSync } from 'node:fs'
export default {
  description: 'Fetches a page that never comes, passing the call its signal.',
  parameters: { type: 'object', properties: { url: { type: 'string' }, mark: { type: 'string' } } },
  async execute(args, context) {
    const log = (line) => appendFileSync(`${context.cwd}/marks/${args.mark}`, line + '\\n')
    context.signal.addEventListener('abort', () => {
      log(`abort ${context.signal.reason.name}: ${context.signal.reason.message}`)
      setTimeout(() => log('cleaned up after the abort'), 100)  // the grace period lets it finish
    })
    log(`started ${readlinkSync('/proc/self')}`)  // its number outside its PID namespace
    try {
      await fetch(args.url, { signal: context.signal })
    } catch (error) {
      log(`fetch rejected ${error.name}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
      throw error
    }
    return 'answered'
  },
}"""

STUBBORN = """import { appendFileSync, readlinkSync } from 'node:fs'
import { spawn } from 'node:child_process'
export default {
  description: 'Sees the abort and goes on anyway, with a child of its own.',
  parameters: { type: 'object', properties: { mark: { type: 'string' } } },
  async execute(args, context) {
    const log = (line) => appendFileSync(`${context.cwd}/marks/${args.mark}`, line + '\\n')
    spawn('sleep', ['617.25'], { stdio: 'ignore' })  // found by its command line: its number is the namespace's
    context.signal.addEventListener('abort', () => log(`abort ${context.signal.reason.name}`))
    log(`started ${readlinkSync('/proc/self')}`)
    return new Promise(() => {})
  },
}"""


class Silent(socketserver.BaseRequestHandler):
    """Reads a request and never answers: the connection stays open until the client closes it."""

    def handle(self) -> None:
        self.request.recv(65536)
        while self.request.recv(65536):
            pass


@pytest.fixture(scope="module")
def silent_server() -> Iterator[str]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Silent)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/never"
    server.shutdown()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("abort") / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "marks").mkdir()
    (folder / "tools" / "waiting.ts").write_text(WAITING + "\n")
    (folder / "tools" / "stubborn.ts").write_text(STUBBORN + "\n")
    (folder / "beeuni.yaml").write_text("tools:\n  waiting: tools/waiting.ts\n  stubborn: tools/stubborn.ts\n")
    return folder


@pytest.fixture(scope="module")
def daemon(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    state = tmp_path_factory.mktemp("abort-state")
    with running_daemon(project, state, "--harness", "experimental", "--timeout", "3") as running:
        yield running


def sleepers(duration: str) -> list[int]:
    """The running processes whose command line is ``sleep duration``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.joinpath("cmdline").read_bytes() == f"sleep\0{duration}\0".encode() and process_runs(
                    int(entry.name)
                ):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def marks(project: Path, mark: str) -> list[str]:
    path = project / "marks" / mark
    return path.read_text().splitlines() if path.exists() else []


def started_pids(project: Path, mark: str) -> list[int]:
    wait_until(lambda: any(line.startswith("started") for line in marks(project, mark)), "the call to start")
    return [int(pid) for pid in next(line for line in marks(project, mark) if line.startswith("started")).split()[1:]]


def test_at_the_timeout_the_signal_aborts_the_fetch_and_the_module_finishes(
    daemon: Daemon, project: Path, silent_server: str
) -> None:
    answer = daemon.call("waiting", {"url": silent_server, "mark": "timeout"})
    assert answer.status_code == 504
    assert answer.json() == {"error": "waiting did not finish within 3 seconds and was stopped"}
    (host,) = started_pids(project, "timeout")
    wait_until(lambda: "cleaned up after the abort" in marks(project, "timeout"), "the module to finish")
    seen = marks(project, "timeout")
    assert "abort TimeoutError: waiting did not finish within 3 seconds and was stopped" in seen
    assert "fetch rejected TimeoutError" in seen
    wait_until(lambda: not process_runs(host), "its process to end")


def test_when_the_client_goes_away_the_signal_aborts(daemon: Daemon, project: Path, silent_server: str) -> None:
    body = f'{{"url": "{silent_server}", "mark": "gone"}}'.encode()
    port = int(daemon.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as client:
        head = (
            f"POST /beeuni/tools/waiting HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {daemon.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        client.sendall(head.encode() + body)
        (host,) = started_pids(project, "gone")
    # the client closed its connection while the call ran (within the daemon's --timeout of 3 s)
    wait_until(lambda: "cleaned up after the abort" in marks(project, "gone"), "the module to finish")
    seen = marks(project, "gone")
    assert "abort AbortError: the client went away; the call was aborted" in seen
    assert "fetch rejected AbortError" in seen
    wait_until(lambda: not process_runs(host), "its process to end")


def test_a_module_that_ignores_the_signal_is_ended_after_the_grace_period(daemon: Daemon, project: Path) -> None:
    answer = daemon.call("stubborn", {"mark": "stubborn"})
    assert answer.status_code == 504
    (host,) = started_pids(project, "stubborn")
    wait_until(lambda: "abort TimeoutError" in marks(project, "stubborn"), "the abort to reach it")
    wait_until(lambda: not process_runs(host) and not sleepers("617.25"), "its process and child to end")
    assert daemon.call("waiting", {"url": "http://127.0.0.1:9/", "mark": "after"}).status_code == 422


def test_beeuni_tools_call_gives_the_grace_period_too(project: Path, silent_server: str) -> None:
    arguments = f'{{"url": "{silent_server}", "mark": "once"}}'
    environment = {"BEEUNI_STATE_DIR": str(project.parent / "once-state"), "BEEUNI_BUN": str(BUN)}
    command = ["tools", "call", "waiting", "--args", arguments, "--timeout", "2"]
    result = run_beeuni(command, cwd=project, env=environment)
    assert result.stderr == "beeuni: waiting did not finish within 2 seconds and was stopped\n"
    seen = marks(project, "once")  # written before the command ended
    assert "abort TimeoutError: waiting did not finish within 2 seconds and was stopped" in seen
    assert "cleaned up after the abort" in seen
    assert not process_runs(int(seen[0].split()[1]))
