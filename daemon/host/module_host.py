"""The daemon's side of the module host: a Bun process per agent and call slot, a Worker per call.

Processes are started ahead (``FRESH``), confined (``sandbox.py``), and wait on their channel. A
process is bound to the agent of the first call it serves and serves that agent's calls only,
one at a time, each in a Worker of its own that is terminated once its answer is in (host.ts):
no global, module instance, patched built-in or timer of one call reaches another, and no
process ever holds two agents' secrets. After a call its temporary folder is emptied; a process
whose call left a process running (or a zombie) in its PID namespace is ended, and with it,
by the kernel, everything in the namespace (``pid_namespace.py``) — where there is no namespace,
what the call left in the process group is killed instead (which ``setsid`` escapes). A call that
ends in a way a Worker does not contain — the process died, wrote what is no answer of the call,
timed out, or its client went away — ends the process (its namespace, else its process group)
instead. A refill replaces the fresh process taken.

Each agent runs at most ``SLOTS_PER_AGENT`` calls at once (the others wait, within their
timeout) and keeps as many processes; all idle processes together are at most ``IDLE_MAX``, the
longest unused ended first.

The load report (each tool's description and parameters) comes from the probe at the
generation's start (``probe.load_modules``: each module in a process of its own), confined the same
way, or from the release's report kept by an earlier start (``probe_cache.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..box.pid_namespace import strays
from ..box.sandbox import Confinement, Started, group_members, last_pid, start
from ..log import write as log
from ..messages import say
from . import host_channel
from .probe import EXIT_GRACE, load_modules
from .probe_process import LoadProcess

#: whose calls a process serves: a declared agent's name, or ``None`` for every undeclared one
#: (they are granted alike)
Owner = str | None
FRESH = 2  # processes kept started for an agent's first call
SLOTS_PER_AGENT = max(2, min(4, os.cpu_count() or 2))  # an agent's calls at once, and its processes
IDLE_MAX = 16  # idle processes of all agents together
# seconds a call whose caller is gone (its timeout passed, its client went away) has to finish
# once its context.signal aborted, before its process and what it started are ended: enough to
# see an abort through (a fetch rejects at once, a file is written, a child told to stop), and
# short, as its secrets and processes stay alive meanwhile; the same whatever --timeout is
ABORT_GRACE = 2.0
ABORT_SIGNALS = {"timed_out": signal.SIGALRM, "gone": signal.SIGHUP}  # host.ts reads them so
DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024  # bytes of a tool's output (`beeuni daemon --max-output`)
MODULE_LOG_LIMIT = 64 * 1024  # bytes of a call's fd 1 and 2 that reach the daemon's log
# the HTTP status of each failure: a thrown error is the model's to read, a process that stopped
# (a crash, an exit, a kill, a forged frame) is the host's failure
STATUS_OF_REASON = {
    "thrown": 422,
    "unsendable": 400,
    "too_large": 413,
    "crashed": 502,
    "timed_out": 504,
}
NOT_THE_ANSWER = "a frame that is not the host's answer to this call: the module wrote on the channel"


@dataclass
class CallOutcome:
    ok: bool
    output: str = ""
    error: str = ""
    # for a failure: "thrown", "timed_out", "crashed", "too_large", "unsendable"
    reason: str = ""


class ModuleHost:
    def __init__(
        self,
        bun: str,
        modules: dict[str, str],
        confinement: Confinement,
        max_output: int,
        messages: dict[str, str],
        folder: str,
        fresh: int,
    ) -> None:
        self.bun = bun
        self.fresh = fresh  # 0 for a single call (`beeuni tools call`): nothing to keep started
        self.modules = modules  # tool name -> absolute module path
        self.confinement = confinement
        self.max_output = max_output
        self.messages = messages
        self.loaded: dict[str, dict[str, Any]] = {}  # the load report: name -> {description, parameters}
        self.failed: dict[str, str] = {}  # name -> reason
        self.folder = tempfile.mkdtemp(dir=folder)  # the processes' temporary folders
        self._fresh: deque[_Process] = deque()
        # idle processes by agent; the dict's order is the order they became idle (oldest first)
        self._idle: dict[_Process, Owner] = {}
        # bounded by the manifest's agents
        self._slots: defaultdict[Owner, asyncio.Semaphore] = defaultdict(lambda: asyncio.Semaphore(SLOTS_PER_AGENT))
        self._live: set[_Process] = set()  # started and not yet exited: stop() waits for them
        self._refill: asyncio.Task[None] | None = None
        self._winding: dict[_Process, asyncio.Task[None]] = {}  # aborted calls in their grace period
        # (tool, timeout) -> the texts a call's context.signal aborts with
        self._aborts: dict[tuple[str, float], dict[str, str]] = {}
        self._stopped = False

    def ask(self, limit: float, loader: LoadProcess) -> None:
        """Ask ``loader`` for this host's load now (blocks while the request is written; for a
        thread): the modules load while the daemon goes on, and ``start`` waits for their facts."""
        loader.ask(*self._load_request(limit))

    def _load_request(self, limit: float) -> tuple[str, list[tuple[str, str]], Confinement, float, str]:
        """``probe.load_modules``'s arguments for every module of this host."""
        return self.bun, list(self.modules.items()), self.confinement, limit, self.folder

    async def start(
        self,
        limit: float,
        loader: LoadProcess | None,
        known: list[dict[str, Any]] | None = None,
        meanwhile: Callable[[], object] | None = None,
    ) -> list[dict[str, Any]]:
        """Start the fresh processes (they load no module before a call) and meanwhile load every
        module, each apart (``limit`` seconds per module), in ``loader`` (None: from here; asked
        already when ``ask`` asked it) — or take the facts of the same modules ``known`` from an
        earlier start. The facts, one per module. ``meanwhile`` runs in a thread while the modules
        load."""
        self._keep_fresh()
        alongside = [asyncio.to_thread(meanwhile)] if meanwhile is not None else []
        try:
            if known is not None and sorted(str(fact.get("name")) for fact in known) == sorted(self.modules):
                facts = known
                await asyncio.gather(*alongside)
            else:
                loading = asyncio.to_thread(
                    loader.load if loader is not None else load_modules, *self._load_request(limit)
                )
                facts, *_ = await asyncio.gather(loading, *alongside)
        except BaseException:
            await self.stop()
            raise
        for fact in facts:
            if fact["loaded"]:
                self.loaded[fact["name"]] = {key: fact[key] for key in ("description", "parameters")}
            else:
                self.failed[fact["name"]] = fact["error"] or fact["problem"]
        return facts

    async def call(
        self, tool: str, args: Any, env: dict[str, str], cwd: str, timeout: float, agent: Owner
    ) -> CallOutcome:
        """Run ``tool`` for ``agent``, within ``timeout`` seconds from the call's arrival."""
        call_id = secrets.token_hex(8)  # a module writing frames on fd 3 itself cannot guess it
        module = self.modules[tool]
        aborts = self._aborts.get((tool, timeout)) or self._abort_texts(tool, timeout)
        call = dict(
            op="call", id=call_id, module=module, args=args, env=env, cwd=cwd, max_output=self.max_output, aborts=aborts
        )
        try:
            request = host_channel.encode(call)
        except (ValueError, RecursionError) as err:
            return CallOutcome(False, error=str(err), reason="unsendable")
        process: _Process | None = None
        reusable = False
        slot = self._slots[agent]
        held = False
        try:
            async with asyncio.timeout(timeout) as deadline:
                try:
                    await slot.acquire()
                    held = True
                    process = await self._take(agent)
                    process.begin(tool)
                    mark = 0 if process.started.contained else last_pid()  # what the call starts is numbered above it
                    outcome, reusable = await process.run(request, call_id, self.max_output)
                    reusable = reusable and process.clean(mark)
                    return outcome
                except asyncio.CancelledError:  # its timeout passed, or its client went away
                    if process is not None and process.calling and not self._stopped:
                        self._wind_down(process, "timed_out" if deadline.expired() else "gone", slot)
                        process, held = None, False  # the grace period ends the one and frees the other
                    raise
        except TimeoutError:
            return CallOutcome(False, reason="timed_out")
        finally:
            if held:
                slot.release()
            if process is not None:
                if reusable and not self._stopped:
                    self._park(process, agent)
                else:
                    process.end()

    def _abort_texts(self, tool: str, timeout: float) -> dict[str, str]:
        """What a call of ``tool``'s ``context.signal`` aborts with, by cause (the rules' texts)."""
        texts = {
            "timed_out": say(self.messages, "timed_out", tool=tool, detail=f"{timeout:g}"),
            "gone": say(self.messages, "client_gone", tool=tool),
        }
        self._aborts[(tool, timeout)] = texts
        return texts

    def _wind_down(self, process: _Process, cause: str, slot: asyncio.Semaphore) -> None:
        """The call ``process`` runs is over for its caller (``cause``): abort its
        ``context.signal``, and end the process once it exits or after ``ABORT_GRACE`` seconds —
        the agent's call slot held until then, so that calls that outlive their caller never
        pile up."""
        process.abort(ABORT_SIGNALS[cause])
        task = asyncio.create_task(self._grace(process, slot))
        self._winding[process] = task
        task.add_done_callback(lambda _: self._winding.pop(process, None))

    async def _grace(self, process: _Process, slot: asyncio.Semaphore) -> None:
        try:
            await asyncio.wait({process.exited}, timeout=ABORT_GRACE)
        finally:
            process.end()
            slot.release()

    async def stop(self) -> None:
        self._stopped = True
        if self._winding:  # aborted calls get their grace period (`tools call` too), and no more
            await asyncio.wait(set(self._winding.values()), timeout=ABORT_GRACE)
        for process, task in list(self._winding.items()):
            task.cancel()  # (one cancelled before it ran would never end its process itself)
            process.end()
        if self._refill is not None:
            self._refill.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refill
        for process in [*self._fresh, *self._idle]:
            process.end()
        self._fresh.clear()
        self._idle.clear()
        exits = {process.exited for process in self._live}
        if exits:  # killed above or after their call: reaped before the host is gone
            await asyncio.wait(exits, timeout=EXIT_GRACE)
        shutil.rmtree(self.folder, ignore_errors=True)

    # the processes -------------------------------------------------------------------------

    async def _take(self, agent: Owner) -> _Process:
        """An idle process of ``agent``'s, else a fresh one, else one started now — never one
        whose confinement was made before a folder it depends on changed."""
        stamp = self.confinement.stamp()
        for process, owner in list(self._idle.items()):
            if owner == agent:
                del self._idle[process]
                if process.alive() and process.started.stamp == stamp:
                    return process
                process.end()
        while self._fresh:
            process = self._fresh.popleft()
            if process.alive() and process.started.stamp == stamp:
                self._keep_fresh()
                return process
            process.end()
        self._keep_fresh()
        return await self._spawn()

    def _park(self, process: _Process, agent: Owner) -> None:
        """Keep ``process`` idle for ``agent``'s next call, within the limits."""
        if sum(1 for owner in self._idle.values() if owner == agent) >= SLOTS_PER_AGENT:
            process.end()
            return
        self._idle[process] = agent
        while len(self._idle) > IDLE_MAX:
            oldest = next(iter(self._idle))
            del self._idle[oldest]
            oldest.end()

    def _keep_fresh(self) -> None:
        if self._stopped or not self.fresh or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.create_task(self._fill())

    async def _fill(self) -> None:
        while len(self._fresh) < self.fresh and not self._stopped:
            try:
                process = await self._spawn()
            except OSError as err:
                log(say(self.messages, "host_not_started", detail=str(err)) + "\n")
                return
            if self._stopped:
                process.end()
                return
            self._fresh.append(process)

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
        self.calling = False  # a call was sent to it: its abort is the host's to tell

    async def connect(self, output_fd: int) -> None:
        loop = asyncio.get_running_loop()
        loop.add_reader(self._pidfd, self._on_exit)
        self._reader, self._writer = await asyncio.open_connection(sock=self.started.channel)
        os.set_blocking(output_fd, False)
        self._output = output_fd
        loop.add_reader(output_fd, self._read_output)

    def alive(self) -> bool:
        return not self.exited.done()

    def begin(self, tool: str) -> None:
        """A call of ``tool`` starts: its output is logged under its name, up to its own limit."""
        self.label = tool
        self._logged = 0
        self._partial = b""

    async def run(self, request: bytes, call: str, max_output: int) -> tuple[CallOutcome, bool]:
        """The call's outcome, and whether the process may serve another call: it answered this
        one as the protocol says (with ``call``'s id), and every byte of the answer was read."""
        assert self._reader is not None and self._writer is not None
        self.calling = True
        try:
            self._writer.write(request)
            await self._writer.drain()
            head = await host_channel.read_message(self._reader)
            if head.get("op") != "result" or head.get("id") != call:
                raise host_channel.BadFrame(NOT_THE_ANSWER)
            if head.get("ok") is True:
                data = await host_channel.read_raw(self._reader, max_output)
                return CallOutcome(True, data.decode("utf-8", errors="replace")), True
            reason = head.get("reason")
            reason = reason if reason in ("thrown", "too_large") else "crashed"
            return CallOutcome(False, error=str(head.get("error", "")), reason=reason), True
        except host_channel.TooLarge as err:
            return CallOutcome(False, error=str(err.size), reason="too_large"), False
        except host_channel.BadFrame as err:
            return CallOutcome(False, error=f"not a protocol frame: {err}", reason="crashed"), False
        except (asyncio.IncompleteReadError, ConnectionError):
            return CallOutcome(False, error=await self._exit_status(), reason="crashed"), False

    def clean(self, mark: int) -> bool:
        """After a call: empty the temporary folder, so that the next call finds nothing of it.
        False when the process cannot be reused: in a PID namespace, the call left a process in
        it (ended with the host); else, what it left running in the process group (numbered above
        ``mark``, the last process number when it started) is killed."""
        if self.started.contained and strays(self.started.process.pid):
            return False
        try:
            if not self.started.contained:
                for pid in group_members(self.started.process.pid, mark):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            with os.scandir(self.started.folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
        except OSError:
            return False
        return self.alive()

    async def _exit_status(self) -> str:
        await asyncio.wait({self.exited}, timeout=EXIT_GRACE)
        code = self.started.process.returncode
        if code is None:
            return "it closed its channel"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    def abort(self, signal_number: signal.Signals) -> None:
        """Tell the host that its running call is over for its caller (host.ts aborts the call's
        ``context.signal``); the process itself is never used again."""
        if not self._ended:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.started.process.pid, signal_number)

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
