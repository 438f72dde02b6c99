"""Start the real daemon on an ephemeral 127.0.0.1 port, with real Bun, and talk to it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from conftest import BEEUNI, ROOT

BUN = ROOT / "node_modules" / ".bin" / "bun"
STARTUP_LIMIT = 60.0  # seconds to wait for the daemon to be ready (a failure, not a measurement)


@dataclass
class Daemon:
    process: subprocess.Popen[str]
    url: str
    token: str
    state: Path
    log_path: Path

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
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return [int(child) for child in children if process_runs(int(child)) and _runs_host(int(child))]


def _runs_host(pid: int) -> bool:
    try:
        return "host.ts" in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return False


def process_runs(pid: int) -> bool:
    """Whether ``pid`` is a process that can still run code (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@contextmanager
def running_daemon(project: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Daemon]:
    state = tmp_path / "state"
    log_path = tmp_path / "daemon.log"
    environment = {
        **os.environ,
        "BEEUNI_STATE_DIR": str(state),
        "BEEUNI_BUN": str(BUN),
        "NO_COLOR": "1",
        **(env or {}),
    }
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [BEEUNI, "daemon", str(project), *args], stdout=log, stderr=subprocess.STDOUT, env=environment, text=True
        )
    try:
        connection = _wait_for_connection(state, process, log_path)
        yield Daemon(process, connection["url"], connection["token"], state, log_path)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_for_connection(state: Path, process: subprocess.Popen[str], log_path: Path) -> dict[str, Any]:
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        found = list(state.glob("projects/*/daemon.json"))
        if found:
            connection: dict[str, Any] = json.loads(found[0].read_text())
            return connection
        if process.poll() is not None:
            raise AssertionError(f"the daemon exited with {process.returncode}:\n{log_path.read_text()}")
        time.sleep(0.05)
    raise AssertionError(f"the daemon was not ready:\n{log_path.read_text()}")


def wait_until(condition: Any, what: str, limit: float = 30.0) -> None:
    """Poll ``condition`` until it holds (a failure after ``limit`` seconds, not a measurement)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")
