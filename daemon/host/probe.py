"""Load-only checks of tool modules: each module is imported in Bun by the load report's host
(``probe_host.ts``), nothing is called. The processes are confined like a call's (``sandbox.py``).

**Each module is loaded apart**: in a Bun process of its own (a few at once; beeuni's own
modules, shipped with its rules, share one), since a realm is not an address space — a module
that reads and writes its process's address space through ``bun:ffi`` (which no Bun option removes)
would reach another module's report in a shared process. A module alone in its process is imported
beside the host: it can bend only its own report. In the shared one the host imports each module
in a ShadowRealm (``probe_realm.ts``: its own globals, built-ins and module instances) and takes
its report as a string into its own realm, where no module runs, which parses, checks and
serialises it (``probe_host.ts``): a module that patches ``JSON.stringify`` or ``Object.prototype``
cannot forge the host's frame. The host's frames carry a random token of the probe; a frame
without it (a module writing on fd 3 itself), an error a module throws outside its import, a
process that dies, or one that stops reporting (a loop blocks the host's thread) ends the
process, and what it reported, or a timeout, is taken for its module alone (beeuni's own are then
loaded again, each alone). The daemon keeps a release's facts between its starts
(``probe_cache.py``).

``probe_modules`` serves ``beeuni validate --modules`` and ``tools migrate``; ``load_modules`` the
daemon's load report. The result per tool is a fact for the rules: ``{name, loaded, problem,
error, description, parameters, schema_problem}``; ``problem`` is ``null``, ``"error"`` (the
import threw or the export has the wrong shape: ``error`` says how, as the daemon logs it),
``"timed-out"`` or ``"crashed"`` (Bun stopped while loading it; ``error`` holds its exit status).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

from ..box.sandbox import PROBE_SCRIPT, Confinement, Process, confinement_for, start
from ..serving.secrets import hidden_from_boxes
from . import host_channel

STARTUP_ALLOWANCE = 10.0  # seconds for Bun itself to start, before the first module's limit runs
REPORT_SLACK = 1.0  # seconds past a module's limit for the host's own report that it timed out
EXIT_GRACE = 2.0  # seconds a process that closed its channel has to exit before it is killed
NOT_THE_HOSTS = "a frame that is not the host's report: a module wrote on the channel"
NOT_REPORTED = "the host ended the probe without its report"


def probe_modules(
    bun: str,
    modules: list[tuple[str, str]],
    root: str,
    limit: float,
    opencode: dict[str, Any] | None = None,
    probed: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Probe ``modules`` (tool name, absolute path) with Bun started in ``root``; paths under
    ``root`` in error messages are shown repo-relative. One fact per module, in the given order.

    ``opencode`` (``{"zod": [{"package", "member"}]}``): the modules are opencode custom tool
    files (``beeuni tools migrate``); each fact then has ``exports``, every export described."""
    folder = tempfile.mkdtemp(prefix="beeuni-probe-")
    try:
        confinement = confinement_for(bun, root, [path for _, path in modules], hidden_from_boxes(), work=folder)
        facts = load_modules(bun, modules, confinement, limit, folder, opencode, probed)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for fact in facts:
        if fact["error"] is not None:
            fact["error"] = fact["error"].replace(root + "/", "")
        if fact["loaded"] and opencode is None:
            fact["schema_problem"] = schema_problem(fact["parameters"])
    return facts


def load_modules(
    bun: str,
    modules: list[tuple[str, str]],
    confinement: Confinement,
    limit: float,
    folder: str,
    opencode: dict[str, Any] | None = None,
    probed: Callable[[int], None] | None = None,
    background: bool = False,
) -> list[dict[str, Any]]:
    """Each module's fact, in the given order, each from a Bun process of its own — but beeuni's
    own modules, which share one (``SHIPPED``) — a few at once, their temporary folders made inside
    ``folder`` (the daemon's load, and ``probe_modules``). One thread reads them all: a process
    of one thread starts each one by cloning itself, its cheapest way (``sandbox.start``).
    ``background``: the processes yield to the daemon's own start (``sandbox.BACKGROUND_NICE``)."""
    found: dict[str, dict[str, Any]] = {}

    def take(facts: list[dict[str, Any]]) -> None:
        for fact in facts:
            found[fact["name"]] = fact
            if probed is not None:
                probed(1)

    shared = [module for module in modules if _shipped(module[1])]
    shared = shared if len(shared) > 1 else []  # one shipped module alone is loaded like any other
    waiting: deque[list[tuple[str, str]]] = deque([module] for module in modules if module not in shared)
    if shared:
        waiting.appendleft(shared)

    def finish(run: _Run) -> None:
        run.end()
        take(run.results)
        unreported = [module for module in run.modules if module[0] in run.names]
        if run.modules is shared:  # what it did not report is loaded again, each module alone
            waiting.extend([module] for module in unreported)
        elif unreported:
            assert run.stopped is not None
            take([module_fact(unreported[0][0], *run.stopped)])

    running: list[_Run] = []
    selector = selectors.DefaultSelector()
    try:
        while waiting or running:
            while waiting and len(running) < APART_AT_ONCE:
                run = _Run(bun, waiting.popleft(), confinement, limit, folder, opencode, background)
                if run.done:
                    finish(run)
                else:
                    selector.register(run.channel, selectors.EVENT_READ, run)
                    running.append(run)
            if not running:
                continue
            for key, _ in selector.select(max(0.0, min(run.deadline for run in running) - time.monotonic())):
                key.data.read()
            now = time.monotonic()
            for run in list(running):
                if not run.done and now >= run.deadline:
                    run.stopped = ("timed-out", None)
                if run.done:
                    selector.unregister(run.channel)
                    running.remove(run)
                    finish(run)
    finally:
        for run in running:
            run.end()
        selector.close()
    return [found[name] for name, _ in modules]


#: beeuni's own modules (its rules' Beeuni tools and harness tools, as installed): they share a
#: process, each still in a realm of its own; every other module has a process to itself
SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "rules") + "/"


def _shipped(module: str) -> bool:
    return os.path.realpath(module).startswith(SHIPPED)


#: processes loading a module each, at once: one a core, and one more starting meanwhile (one
#: thread starts them all, one after the other)
APART_AT_ONCE = max(2, min(8, (os.cpu_count() or 1) + 1))


def module_fact(
    name: str,
    problem: str | None,
    error: str | None = None,
    description: str = "",
    parameters: Any = None,
    exports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    fact = {
        "name": name,
        "loaded": problem is None,
        "problem": problem,
        "error": error,
        "description": description,
        "parameters": parameters,
        "schema_problem": None,
    }
    if exports is not None:
        fact["exports"] = exports
    return fact


def _reported(name: str, message: dict[str, Any]) -> dict[str, Any]:
    """The fact of ``name`` from the host's ``probed`` frame."""
    if message.get("ok") is True:
        description = str(message.get("description", ""))
        return module_fact(name, None, None, description, message.get("parameters"), message.get("exports"))
    problem = message.get("problem")
    error = message.get("error")
    return module_fact(
        name, problem if problem in ("timed-out", "crashed") else "error", None if error is None else str(error)
    )


class _Run:
    """One Bun process over ``modules``: its facts as the protocol says, and — when it did not
    report them all — why it stopped (``stopped``: problem, error). Only frames with the probe's
    token count, each for a module not reported yet; anything else on the channel ends the process
    (the modules in it may have written it)."""

    def __init__(
        self,
        bun: str,
        modules: list[tuple[str, str]],
        confinement: Confinement,
        limit: float,
        folder: str,
        opencode: dict[str, Any] | None,
        background: bool,
    ) -> None:
        self.modules, self.limit = modules, limit
        self.names = {name for name, _ in modules}  # not reported yet
        self.results: list[dict[str, Any]] = []
        self.stopped: tuple[str, str | None] | None = None
        self.own = tempfile.mkdtemp(dir=folder)
        self.token = os.urandom(16).hex()  # what secrets.token_hex does, without importing it here
        self.buffer = b""
        self.deadline = time.monotonic() + STARTUP_ALLOWANCE + limit
        try:  # what modules print at import is no diagnostic
            started = start(bun, confinement, self.own, subprocess.DEVNULL, PROBE_SCRIPT, background)
        except OSError as err:
            self.process: Process | None = None
            self.stopped = ("crashed", str(err))
            return
        self.process, self.channel = started.process, started.channel
        entries = [{"name": name, "module": path} for name, path in modules]
        request = {"op": "probe", "token": self.token, "limit": limit, "tools": entries, "opencode": opencode}
        try:
            self.channel.sendall(host_channel.encode(request))
        except OSError as err:  # the process closed its channel before reading the request
            self.stopped = ("crashed", str(err))

    @property
    def done(self) -> bool:
        return self.stopped is not None or not self.names

    def read(self) -> None:
        """Take the frames the channel holds now."""
        assert self.process is not None
        try:
            chunk = self.channel.recv(65536)
        except OSError as err:
            self.stopped = ("crashed", str(err))
            return
        if not chunk:
            self.stopped = ("crashed", f"exit status {_exit_status(self.process)}")
            return
        self.buffer += chunk
        try:
            messages, self.buffer = host_channel.split(self.buffer)
        except host_channel.BadFrame as err:
            self.stopped = ("crashed", str(err))
            return
        for message in messages:
            self.stopped = self._stop_for(message)
            if self.stopped is not None:
                return
            self.deadline = time.monotonic() + self.limit + REPORT_SLACK  # the module's limit runs
            if message.get("op") == "probed":
                self.names.discard(message["name"])
                self.results.append(_reported(message["name"], message))

    def _stop_for(self, message: dict[str, Any]) -> tuple[str, str | None] | None:
        if message.get("token") != self.token:
            return "crashed", NOT_THE_HOSTS
        if message.get("op") == "probe_done":
            return "crashed", NOT_REPORTED
        if message.get("op") == "probe_failed":  # an error a module threw escaped its realm
            return "crashed", str(message.get("error"))
        if message.get("op") not in ("probing", "probed") or message.get("name") not in self.names:
            return "crashed", NOT_THE_HOSTS
        return None

    def end(self) -> None:
        """Kill what is left of the process, reap it, remove its folder."""
        if self.process is not None:
            if self.process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.channel.close()
        shutil.rmtree(self.own, ignore_errors=True)


def _exit_status(process: Process) -> int:
    """How the process ended; one that closed its channel and lives on is killed first."""
    try:
        return process.wait(timeout=EXIT_GRACE)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def schema_problem(parameters: Any) -> str | None:
    """Why ``parameters`` is not a valid JSON Schema (as the daemon's load says it), or None."""
    from .arguments import InvalidSchema, validator_of

    try:
        validator_of(parameters)
    except InvalidSchema as invalid:
        return str(invalid)
    return None
