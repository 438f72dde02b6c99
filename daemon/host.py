"""The daemon's side of the module host: a Bun process per call, started ahead, thrown away after.

A session generation keeps a few processes warm (``POOL_SIZE``); each has started ``host.ts``
confined (``sandbox.py``) and waits on its channel. A call takes one, sends it the module, the
arguments, the environment and the working folder, and reads its answer; then, whatever the
answer — a result, a thrown error, the timeout, the client gone — the process and its process
group are killed and its temporary folder removed. No global, module instance, patched built-in
or timer of one call survives into another, and a module that spins, crashes, exits, writes to
its fd 1 or forges frames harms only its own call. A refill replaces the process taken.

The load report (each tool's description and parameters) comes from one probe process at the
generation's start (``probe.load_modules``), confined the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import frames
from .log import write as log
from .messages import say
from .probe import load_modules
from .sandbox import Confinement, Started, start

POOL_SIZE = max(2, min(4, os.cpu_count() or 2))  # warm processes per generation
DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024  # bytes of a tool's output (`beeuni daemon --max-output`)
MODULE_LOG_LIMIT = 64 * 1024  # bytes of a call's fd 1 and 2 that reach the daemon's log
# the HTTP status of each failure: a thrown error is the model's to read, a process that stopped
# (a crash, an exit, a kill, a forged frame) is the host's failure
STATUS_OF_REASON = {
    "thrown": 422,
    "unsendable": 400,
    "too_large": 413,
    "cancelled": 499,
    "crashed": 502,
    "timed_out": 504,
}
EXIT_GRACE = 2.0  # seconds a process that closed its channel has to exit before it is killed


@dataclass
class CallOutcome:
    ok: bool
    output: str = ""
    error: str = ""
    # for a failure: "thrown", "timed_out", "cancelled", "crashed", "too_large", "unsendable", "not_loaded"
    reason: str = ""


@dataclass
class LoadReport:
    loaded: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {description, parameters}
    failed: dict[str, str] = field(default_factory=dict)  # name -> reason


class ModuleHost:
    def __init__(
        self,
        bun: str,
        modules: dict[str, str],
        confinement: Confinement,
        max_output: int,
        messages: dict[str, str],
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.bun = bun
        self.pool_size = pool_size  # 0 for a single call (`beeuni tools call`): nothing to keep warm
        self.modules = modules  # tool name -> absolute module path
        self.confinement = confinement
        self.max_output = max_output
        self.messages = messages
        self.report = LoadReport()
        self.folder = tempfile.mkdtemp(prefix="beeuni-host-")  # the calls' temporary folders
        self._warm: deque[_Process] = deque()
        self._live: set[_Process] = set()  # started and not yet exited: stop() waits for them
        self._refill: asyncio.Task[None] | None = None
        self._stopped = False

    async def start(self, limit: float) -> LoadReport:
        """Load every module in one probe process (``limit`` seconds per module), then warm the pool."""
        facts = await asyncio.to_thread(
            load_modules, self.bun, list(self.modules.items()), self.confinement, limit, self.folder
        )
        for fact in facts:
            if fact["loaded"]:
                self.report.loaded[fact["name"]] = {
                    "description": fact["description"],
                    "parameters": fact["parameters"],
                }
            else:
                self.report.failed[fact["name"]] = fact["error"] or fact["problem"]
        self._keep_warm()
        return self.report

    async def call(self, tool: str, args: Any, env: dict[str, str], cwd: str, timeout: float) -> CallOutcome:
        module = self.modules.get(tool)
        if module is None or tool not in self.report.loaded:
            return CallOutcome(False, error=tool, reason="not_loaded")
        try:
            request = frames.encode({"op": "call", "module": module, "args": args, "env": env, "cwd": cwd})
        except (ValueError, RecursionError) as err:
            return CallOutcome(False, error=str(err), reason="unsendable")
        process = await self._take()
        process.label = tool
        try:
            async with asyncio.timeout(timeout):
                return await process.run(request, self.max_output)
        except TimeoutError:
            return CallOutcome(False, reason="timed_out")
        finally:
            process.end()

    async def stop(self) -> None:
        self._stopped = True
        if self._refill is not None:
            self._refill.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refill
        while self._warm:
            self._warm.popleft().end()
        exits = {process.exited for process in self._live}
        if exits:  # killed above or after their call: reaped before the host is gone
            await asyncio.wait(exits, timeout=EXIT_GRACE)
        shutil.rmtree(self.folder, ignore_errors=True)

    # the pool ------------------------------------------------------------------------------

    async def _take(self) -> _Process:
        while self._warm:
            process = self._warm.popleft()
            if process.alive():
                self._keep_warm()
                return process
            process.end()
        self._keep_warm()
        return await self._spawn()

    def _keep_warm(self) -> None:
        if self._stopped or not self.pool_size or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.create_task(self._fill())

    async def _fill(self) -> None:
        while len(self._warm) < self.pool_size and not self._stopped:
            try:
                process = await self._spawn()
            except OSError as err:
                log(say(self.messages, "host_not_started", detail=str(err)) + "\n")
                return
            if self._stopped:
                process.end()
                return
            self._warm.append(process)

    async def _spawn(self) -> _Process:
        folder = tempfile.mkdtemp(dir=self.folder)
        read_end, write_end = os.pipe()
        try:
            started = await asyncio.to_thread(start, self.bun, self.confinement, folder, write_end)
        except BaseException:
            os.close(read_end)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            os.close(write_end)
        process = _Process(
            started, lambda label, line: log(say(self.messages, "module_output", tool=label, detail=line) + "\n")
        )
        self._live.add(process)
        process.exited.add_done_callback(lambda _: self._live.discard(process))
        await process.connect(read_end)
        return process


class _Process:
    """One module process, from its start to its end."""

    def __init__(self, started: Started, log_line: Callable[[str, str], None]) -> None:
        self.started = started
        self.label = ""  # the tool it runs, once taken
        self._log_line = log_line
        self._logged = 0
        self._partial = b""
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pidfd = os.pidfd_open(started.process.pid)
        self._ended = False
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._output: int | None = None  # the read end of the pipe on its fd 1 and 2

    async def connect(self, output_fd: int) -> None:
        loop = asyncio.get_running_loop()
        loop.add_reader(self._pidfd, self._on_exit)
        self._reader, self._writer = await asyncio.open_connection(sock=self.started.channel)
        os.set_blocking(output_fd, False)
        self._output = output_fd
        loop.add_reader(output_fd, self._read_output)

    def alive(self) -> bool:
        return not self.exited.done()

    async def run(self, request: bytes, max_output: int) -> CallOutcome:
        assert self._reader is not None and self._writer is not None
        try:
            self._writer.write(request)
            await self._writer.drain()
            head = await frames.read_message(self._reader)
            if head.get("op") != "result":
                raise frames.BadFrame(f"a frame {str(head.get('op'))!r} where the result belongs")
            if head.get("ok") is True:
                data = await frames.read_raw(self._reader, max_output)
                return CallOutcome(True, data.decode("utf-8", errors="replace"))
            reason = "thrown" if head.get("reason") == "thrown" else "crashed"
            return CallOutcome(False, error=str(head.get("error", "")), reason=reason)
        except frames.TooLarge as err:
            return CallOutcome(False, error=str(err.size), reason="too_large")
        except frames.BadFrame as err:
            return CallOutcome(False, error=f"not a protocol frame: {err}", reason="crashed")
        except (asyncio.IncompleteReadError, ConnectionError):
            return CallOutcome(False, error=await self._exit_status(), reason="crashed")

    async def _exit_status(self) -> str:
        await asyncio.wait({self.exited}, timeout=EXIT_GRACE)
        code = self.started.process.returncode
        if code is None:
            return "it closed its channel"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    def end(self) -> None:
        """Kill the process and its group, close the channel, remove its temporary folder."""
        if self._ended:
            return
        self._ended = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.started.process.pid, signal.SIGKILL)
        if self._writer is not None:
            self._writer.close()
        else:
            self.started.channel.close()
        shutil.rmtree(self.started.folder, ignore_errors=True)
        if self.exited.done():
            self._close_output()

    def _on_exit(self) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self.started.process.poll()  # reaps it
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.started.process.pid, signal.SIGKILL)  # what it left running, too
        if not self.exited.done():
            self.exited.set_result(None)
        if self._ended:
            self._close_output()

    def _close_output(self) -> None:
        if self._output is not None:
            asyncio.get_running_loop().remove_reader(self._output)
            os.close(self._output)
            self._output = None

    def _read_output(self) -> None:
        """A module's fd 1 and 2, line by line into the daemon's log, up to ``MODULE_LOG_LIMIT``;
        what passes the limit is read and dropped, so that the module never blocks on it."""
        assert self._output is not None
        try:
            data = os.read(self._output, 65536)
        except BlockingIOError:
            return
        if not data:
            self._close_output()
            return
        if self._logged >= MODULE_LOG_LIMIT:
            return
        data = data[: MODULE_LOG_LIMIT - self._logged]
        self._logged += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        if self._logged >= MODULE_LOG_LIMIT and self._partial:
            lines.append(self._partial)
            self._partial = b""
        for line in lines:
            self._log_line(self.label, line.decode("utf-8", errors="replace"))
