"""Start the real daemon on an ephemeral 127.0.0.1 port, with real Bun, and talk to it: as its
starter, the test gets the daemon's connection (URL and token) on a socket (``--connection-fd``),
and hands it on the same way to the harnesses it starts (``hand_off``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from beeuni.daemon.edge.handoff import VARIABLE, HandOff
from beeuni.daemon.plugin import verify
from conftest import BEEUNI, ROOT, Result

BUN = ROOT / "node_modules" / ".bin" / "bun"
STARTUP_LIMIT = 60.0  # seconds to wait for the daemon to be ready (a failure, not a measurement)
HARNESS_LIMIT = 300.0  # seconds a harness's run may take (a failure, not a measurement)


@dataclass
class Daemon:
    process: subprocess.Popen[str]
    connection: bytes  # what the daemon handed its starter: the JSON of its URL, token and pid
    state: Path
    log_path: Path
    starter: HandOff  # the starter's channel, on which the session converges

    @property
    def document(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.connection)
        return found

    def converge(self, release: str | None = None) -> dict[str, Any]:
        """Ask the daemon, as its starter, to converge on ``release``; its answer (``converged``
        or ``convergence_failed``)."""
        self.starter.request({"op": "converge", "release": release})
        return self.event()

    def event(self) -> dict[str, Any]:
        found = self.starter.event(STARTUP_LIMIT)
        assert found is not None, f"the daemon closed its starter's channel:\n{self.log()}"
        return found

    @property
    def url(self) -> str:
        return str(json.loads(self.connection)["url"])

    @property
    def token(self) -> str:
        return str(json.loads(self.connection)["token"])

    def headers(self, agent: str | None = None, parent: str | None = None) -> dict[str, str]:
        headers = {"authorization": f"Bearer {self.token}"}
        if agent:
            headers["x-beeuni-agent"] = agent
        if parent:
            headers["x-beeuni-parent"] = parent
        return headers

    def call(
        self, tool: str, args: dict[str, Any] | None = None, agent: str | None = None, **kw: Any
    ) -> httpx.Response:
        return httpx.post(
            f"{self.url}/beeuni/tools/{tool}", json=args or {}, headers=self.headers(agent, **kw), timeout=60
        )

    def tools(self, agent: str | None = None) -> list[str]:
        answer = httpx.get(f"{self.url}/beeuni/tools", headers=self.headers(agent), timeout=60)
        return [tool["name"] for tool in answer.json()["tools"]]

    def log(self) -> str:
        return self.log_path.read_text()

    def host_pids(self) -> list[int]:
        """The module processes the daemon has started (warm ones and running calls)."""
        children = []  # of every thread: a process is the child of the thread that started it
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            with contextlib.suppress(OSError):
                children += (task / "children").read_text().split()
        return [int(child) for child in children if process_runs(int(child)) and _runs_host(int(child))]


def _runs_host(pid: int) -> bool:
    try:
        return any(os.path.basename(arg) == "host.ts" for arg in Path(f"/proc/{pid}/cmdline").read_text().split("\0"))
    except OSError:
        return False


def process_runs(pid: int) -> bool:
    """Whether ``pid`` is a process that can still run code (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (a unique word a test's module gives the
    processes it starts), zombies left out: found by their number outside any PID namespace."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and process_runs(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile
                continue
    return found


def daemon_environment(state: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "BEEUNI_STATE_DIR": str(state), "BEEUNI_BUN": str(BUN), "NO_COLOR": "1", **(env or {})}


def start_daemon(
    project: Path,
    state: Path,
    *args: str,
    env: dict[str, str] | None = None,
    output: Any = None,
    user: int | None = None,
    program: str = BEEUNI,
) -> Daemon:
    """Start ``beeuni daemon`` as a session's starter does and wait until it hands over its
    connection. Its output goes to a log beside ``state``, or to ``output`` (then not kept).
    ``user``: the user (and group) it runs as, when the test runs as root. ``program``: the
    ``beeuni`` to start (another install's, for a benchmark's comparison)."""
    hand_off = HandOff()
    launcher, env = ([program], env) if user is None else launched_as(user, env)
    command = [*launcher, "daemon", str(project), *args, "--connection-fd", str(hand_off.fd)]
    log_path = state.parent / f"{state.name}.daemon.log"
    with contextlib.ExitStack() as stack:
        if output is None:
            output = stack.enter_context(open(log_path, "w"))
        stderr = subprocess.STDOUT if output is not subprocess.PIPE else subprocess.PIPE
        process = subprocess.Popen(
            command,
            env=daemon_environment(state, env),
            stdout=output,
            stderr=stderr,
            text=True,
            pass_fds=(hand_off.fd,),
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
    hand_off.started()
    try:
        connection = hand_off.receive(STARTUP_LIMIT)
    except TimeoutError:
        connection = b""
    if not connection:
        process.kill()
        raise AssertionError(f"the daemon did not start ({process.wait()}):\n{_read(log_path)}")
    return Daemon(process, connection, state, log_path, hand_off)


def launched_as(user: int, env: dict[str, str] | None) -> tuple[list[str], dict[str, str] | None]:
    """How ``user`` runs beeuni, and its environment: the virtualenv's script, or — where ``user``
    may not run this interpreter (one installed in root's home) — the system's Python of the same
    version with the virtualenv's packages. A test is skipped where neither runs."""
    probe = "import beeuni.cli.main"
    with contextlib.suppress(OSError):
        if subprocess.run([sys.executable, "-c", probe], user=user, capture_output=True, check=False).returncode == 0:
            return [BEEUNI], env
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    packages = {"PYTHONPATH": sysconfig.get_paths()["purelib"]}
    if not os.path.exists(system):
        pytest.skip(f"user {user} cannot run {sys.executable}, and there is no {system}")
    if subprocess.run([system, "-P", "-c", probe], env=packages, user=user, check=False).returncode:
        pytest.skip(f"user {user} cannot import beeuni with {system}")
    launcher = [system, "-P", "-c", "import sys; from beeuni.cli.main import main; sys.exit(main())"]
    return launcher, {**(env or {}), **packages}


def stop_daemon(daemon: Daemon) -> None:
    daemon.starter.close()
    daemon.process.send_signal(signal.SIGTERM)
    try:
        daemon.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        daemon.process.kill()


@contextmanager
def running_daemon(project: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Daemon]:
    daemon = start_daemon(project, tmp_path / "state", *args, env=env)
    try:
        yield daemon
    finally:
        stop_daemon(daemon)


def daemon_refused(project: Path, state: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Result, bytes]:
    """Run ``beeuni daemon`` that is expected not to serve: how it ended, and what it handed its
    starter (nothing, when no client may find it)."""
    hand_off = HandOff()
    command = [BEEUNI, "daemon", str(project), *args, "--connection-fd", str(hand_off.fd)]
    with subprocess.Popen(
        command,
        env=daemon_environment(state, env),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(hand_off.fd,),
    ) as process:
        hand_off.started()
        handed = hand_off.receive(STARTUP_LIMIT)
        if handed:
            process.terminate()
        stdout, stderr = process.communicate(timeout=STARTUP_LIMIT)
    return Result(stdout, stderr, process.returncode), handed


@contextmanager
def hand_off(daemon: Daemon) -> Iterator[tuple[dict[str, str], tuple[int, ...]]]:
    """What a harness started meanwhile needs to get the daemon's connection, as a session's
    starter gives it: the environment variable naming the descriptor, and the descriptor to pass;
    for opencode, the daemon's plugin folder as its configuration folder, checked first."""
    handing = HandOff()
    handing.send(daemon.connection)
    variables = {VARIABLE: str(handing.fd)}
    if daemon.document.get("plugin"):
        variables["OPENCODE_CONFIG_DIR"] = verify(daemon.document)
    try:
        yield variables, (handing.fd,)
    finally:
        handing.close()


def run_harness(
    command: list[str], daemon: Daemon | None, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as a harness that ``daemon``'s starter started: with the daemon's
    connection handed over (none without a daemon)."""
    with hand_off(daemon) if daemon is not None else contextlib.nullcontext(({}, ())) as (variables, fds):
        return subprocess.run(
            command,
            cwd=cwd,
            env={**(env or os.environ), **variables},
            pass_fds=fds,
            capture_output=True,
            text=True,
            timeout=HARNESS_LIMIT,
        )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return "(its output was not kept)"


def wait_until(condition: Any, what: str, limit: float = 30.0) -> None:
    """Poll ``condition`` until it holds (a failure after ``limit`` seconds, not a measurement)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")
