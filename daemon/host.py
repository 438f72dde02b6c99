"""The daemon's side of the module host (``host.ts``): one Bun process, many calls at once.

Calls are multiplexed over the process's stdin and stdout by id. When the process dies, every
call it was running fails with ``HostDied``; the next call starts a new process, which loads the
same modules again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("beeuni.daemon")

HOST_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host.ts")
_LINE_LIMIT = 256 * 1024 * 1024  # one protocol line carries a whole tool output


class HostDied(Exception):
    """The module host stopped while a call was running."""


@dataclass
class CallOutcome:
    ok: bool
    output: str = ""
    error: str = ""
    reason: str = ""  # for a failure: "thrown", "timed_out", "cancelled", "not_loaded"


@dataclass
class LoadReport:
    loaded: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {description, parameters}
    failed: dict[str, str] = field(default_factory=dict)  # name -> reason


class ModuleHost:
    def __init__(self, bun: str, modules: dict[str, str]) -> None:
        self.bun = bun
        self.modules = modules  # tool name -> absolute module path
        self.process: asyncio.subprocess.Process | None = None
        self.report = LoadReport()
        self._pending: dict[int, asyncio.Future[CallOutcome]] = {}
        self._loaded: asyncio.Future[LoadReport] | None = None
        self._ids = itertools.count(1)
        self._start_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> LoadReport:
        async with self._start_lock:
            if self.process is not None and self.process.returncode is None:
                return self.report
            self.process = await asyncio.create_subprocess_exec(
                self.bun,
                "--no-install",  # a module's packages come from a node_modules beside or above it, never the network
                HOST_SCRIPT,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=_LINE_LIMIT,
            )
            self._loaded = asyncio.get_running_loop().create_future()
            self._tasks = [
                asyncio.create_task(self._read(self.process)),
                asyncio.create_task(self._forward_stderr(self.process)),
            ]
            entries = [{"name": name, "module": module} for name, module in self.modules.items()]
            await self._send({"op": "load", "tools": entries})
            self.report = await self._loaded
            return self.report

    async def call(self, tool: str, args: Any, env: dict[str, str], cwd: str, timeout: float) -> CallOutcome:
        await self.start()
        call_id = next(self._ids)
        future: asyncio.Future[CallOutcome] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        message = {"op": "call", "id": call_id, "tool": tool, "args": args, "env": env, "cwd": cwd}
        message["timeout_ms"] = int(timeout * 1000)
        try:
            await self._send(message)
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self._send({"op": "cancel", "id": call_id})
            raise
        finally:
            self._pending.pop(call_id, None)

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        for task in self._tasks:
            task.cancel()
        self.process = None

    async def _send(self, message: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None or process.returncode is not None:
            raise HostDied("the module host is not running")
        process.stdin.write(json.dumps(message).encode() + b"\n")
        try:
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as err:
            raise HostDied(f"the module host stopped: {err}") from None

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while True:
            line = await process.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message["op"] == "loaded":
                if self._loaded is not None and not self._loaded.done():
                    self._loaded.set_result(LoadReport(message["tools"], message["failed"]))
            elif message["op"] == "result":
                future = self._pending.get(message["id"])
                if future is not None and not future.done():
                    future.set_result(
                        CallOutcome(
                            message["ok"],
                            message.get("output", ""),
                            message.get("error", ""),
                            message.get("reason", ""),
                        )
                    )
        code = await process.wait()
        died = HostDied(f"exit code {code}")
        if self._loaded is not None and not self._loaded.done():
            self._loaded.set_exception(died)
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(died)
        if self.process is process:
            self.process = None

    async def _forward_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while True:
            line = await process.stderr.readline()
            if not line:
                return
            sys.stderr.write("[host] " + line.decode(errors="replace"))
