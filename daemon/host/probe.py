"""Load-only checks of tool modules: each module is imported in Bun by the module host's
``probe`` operation, nothing is called. The processes are confined like a call's (``sandbox.py``).

**Each module is loaded apart**: in a Bun process of its own (a few at once; beeuni's own
modules, shipped with its rules, share one), since a realm is not an address space — a module
that reads and writes its process's address space through ``bun:ffi`` (which no Bun option removes)
would reach another module's report in a shared process. Inside it the host imports each module
in a ShadowRealm (``probe_realm.ts``: its own globals, built-ins and module instances) and takes
its report as a string into its own realm, where no module runs, which parses, checks and
serialises it (``host.ts``): a module that patches ``JSON.stringify`` or ``Object.prototype``
cannot forge the host's frame. The host's frames carry a random token of the probe; a frame
without it (a module writing on fd 3 itself), an error a module throws outside its import, a
process that dies, or one that stops reporting (a loop blocks the host's thread) ends the
process, and what it reported, or a timeout, is taken for its module alone (beeuni's own are then
loaded again, each alone). The daemon keeps a release's facts between its starts, and beeuni's
own modules' facts for every release (``probe_cache.py``).

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
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

from ...engine.cache.folder import cache_dir
from ..box.sandbox import Confinement, Process, confinement_for, start
from ..serving.secrets import state_dir
from . import host_channel, probe_cache

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
        confinement = confinement_for(bun, root, [path for _, path in modules], [state_dir(), cache_dir()], work=folder)
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
) -> list[dict[str, Any]]:
    """Each module's fact, in the given order, each from a Bun process of its own — but beeuni's
    own modules, which share one (``SHIPPED``) — a few at once, their temporary folders made inside
    ``folder`` (the daemon's load, and ``probe_modules``)."""
    found: dict[str, dict[str, Any]] = {}

    def take(facts: list[dict[str, Any]]) -> None:
        for fact in facts:
            found[fact["name"]] = fact
            if probed is not None:
                probed(1)

    def alone(module: tuple[str, str]) -> list[dict[str, Any]]:
        facts, stopped = _probe_run(bun, [module], confinement, limit, folder, opencode)
        return facts or [module_fact(module[0], *stopped)]

    def together(group: list[tuple[str, str]]) -> list[dict[str, Any]]:
        kept = probe_cache.read_shipped(group, bun, limit) if opencode is None else None
        if kept is not None:
            return kept
        facts, _ = _probe_run(bun, group, confinement, limit, folder, opencode)
        reported = {fact["name"] for fact in facts}
        facts += [fact for module in group if module[0] not in reported for fact in alone(module)]
        if opencode is None:
            probe_cache.keep_shipped(group, bun, limit, facts)
        return facts

    shared = [module for module in modules if _shipped(module[1])]
    shared = shared if len(shared) > 1 else []  # one shipped module alone is loaded like any other
    runs: list[Callable[[], list[dict[str, Any]]]] = [partial(together, shared)] if shared else []
    runs += [partial(alone, module) for module in modules if module not in shared]
    if len(runs) == 1:
        take(runs[0]())
    elif runs:
        with ThreadPoolExecutor(min(APART_AT_ONCE, len(runs)), thread_name_prefix="beeuni-probe") as pool:
            for facts in pool.map(lambda run: run(), runs):
                take(facts)
    return [found[name] for name, _ in modules]


#: beeuni's own modules (its rules' Beeuni tools and harness tools, as installed): they share a
#: process, each still in a realm of its own; every other module has a process to itself
SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "rules") + "/"


def _shipped(module: str) -> bool:
    return os.path.realpath(module).startswith(SHIPPED)


#: processes loading a module each, at once: one a core (more only contend; the daemon's own
#: start goes on meanwhile, in ``probe_process.py``'s words)
APART_AT_ONCE = max(2, min(8, os.cpu_count() or 1))


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


def _probe_run(
    bun: str,
    pending: list[tuple[str, str]],
    confinement: Confinement,
    limit: float,
    folder: str,
    opencode: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], tuple[str, str | None]]:
    """One Bun process over ``pending``: the facts it reported as the protocol says, and — when
    it did not report them all — why it stopped (``problem``, ``error``). Only frames with the
    probe's token count, each for a module of ``pending`` not reported yet; anything else on the
    channel ends the process (the modules in it may have written it)."""
    own = tempfile.mkdtemp(dir=folder)
    token = os.urandom(16).hex()  # what secrets.token_hex does, without importing it in the load process
    names = {name for name, _ in pending}
    results: list[dict[str, Any]] = []
    try:
        started = start(bun, confinement, own, subprocess.DEVNULL)  # what modules print at import is no diagnostic
    except OSError as err:
        shutil.rmtree(own, ignore_errors=True)
        return results, ("crashed", str(err))
    process, channel = started.process, started.channel
    entries = [{"name": name, "module": path} for name, path in pending]
    request = {"op": "probe", "token": token, "limit": limit, "tools": entries, "opencode": opencode}
    deadline = time.monotonic() + STARTUP_ALLOWANCE + limit
    selector = selectors.DefaultSelector()
    buffer = b""
    try:
        channel.sendall(host_channel.encode(request))
        selector.register(channel, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(timeout=remaining):
                return results, ("timed-out", None)
            chunk = channel.recv(65536)
            if not chunk:
                return results, ("crashed", f"exit status {_exit_status(process)}")
            buffer += chunk
            try:
                messages, buffer = host_channel.split(buffer)
            except host_channel.BadFrame as err:
                return results, ("crashed", str(err))
            for message in messages:
                if message.get("token") != token:
                    return results, ("crashed", NOT_THE_HOSTS)
                if message.get("op") == "probe_done":
                    return results, ("crashed", NOT_REPORTED)
                if message.get("op") == "probe_failed":  # an error a module threw escaped its realm
                    return results, ("crashed", str(message.get("error")))
                name = message.get("name")
                if message.get("op") not in ("probing", "probed") or name not in names:
                    return results, ("crashed", NOT_THE_HOSTS)
                deadline = time.monotonic() + limit + REPORT_SLACK  # the module's limit runs
                if message.get("op") == "probed":
                    names.discard(name)
                    results.append(_reported(name, message))
    except OSError as err:  # the process closed its channel before reading the request
        return results, ("crashed", str(err))
    finally:
        selector.close()
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        channel.close()
        shutil.rmtree(own, ignore_errors=True)


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
