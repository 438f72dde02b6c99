"""Load-only checks of tool modules: each module is imported in Bun by the module host's
``probe`` operation, nothing is called, and a watchdog gives each module a time limit — an import
that loops blocks Bun itself, so the process is killed and a new one takes the modules that were
not reached yet. The processes are confined like a call's (``sandbox.py``).

``probe_modules`` serves ``beeuni validate --modules`` and ``tools migrate``; ``load_modules`` the
daemon's load report. The result per tool is a fact for the rules: ``{name, loaded, problem,
error, description, parameters, schema_problem}``; ``problem`` is ``null``, ``"error"`` (the
import threw or the export has the wrong shape: ``error`` says how, as the daemon logs it),
``"timed-out"`` or ``"crashed"`` (Bun stopped while loading it; ``error`` holds its exit status).
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

from ..box.sandbox import Confinement, Process, confinement_for, start
from ..serving.secrets import state_dir
from . import host_channel

STARTUP_ALLOWANCE = 10.0  # seconds for Bun itself to start, before the first module's limit runs
EXIT_GRACE = 2.0  # seconds a process that closed its channel has to exit before it is killed


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
        confinement = confinement_for(bun, root, [path for _, path in modules], [state_dir()], work=folder)
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
    """Each module's fact, in the given order, its processes' temporary folders made inside
    ``folder`` (the daemon's load, and ``probe_modules``)."""
    found: dict[str, dict[str, Any]] = {}
    pending = list(modules)
    while pending:
        own = tempfile.mkdtemp(dir=folder)
        try:
            for fact in _probe_run(bun, pending, confinement, limit, own, opencode, probed):
                found[fact["name"]] = fact
        finally:
            shutil.rmtree(own, ignore_errors=True)
        pending = [(name, path) for name, path in pending if name not in found]
    return [found[name] for name, _ in modules]


def _fact(
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


def _probe_run(
    bun: str,
    pending: list[tuple[str, str]],
    confinement: Confinement,
    limit: float,
    folder: str,
    opencode: dict[str, Any] | None,
    probed: Callable[[int], None] | None,
) -> list[dict[str, Any]]:
    """One Bun process over ``pending``: what it reported before it finished, stopped or was
    killed — at least one module's fact, so the caller always progresses (``probed`` is told of
    each module Bun reported on)."""
    started = start(bun, confinement, folder, subprocess.DEVNULL)  # what modules print at import is no diagnostic
    process, channel = started.process, started.channel
    entries = [{"name": name, "module": path} for name, path in pending]
    request = {"op": "probe", "tools": entries, "opencode": opencode}
    results: list[dict[str, Any]] = []
    current: str | None = None
    deadline = time.monotonic() + STARTUP_ALLOWANCE + limit
    selector = selectors.DefaultSelector()
    buffer = b""

    def stopped(problem: str, error: str | None = None) -> list[dict[str, Any]]:
        if current is not None:
            results.append(_fact(current, problem, error))
        elif not results:
            results.append(_fact(pending[0][0], problem, error))
        return results

    try:
        channel.sendall(host_channel.encode(request))
        selector.register(channel, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(timeout=remaining):
                return stopped("timed-out")
            chunk = channel.recv(65536)
            if not chunk:
                return stopped("crashed", f"exit status {_exit_status(process)}")
            buffer += chunk
            try:
                messages, buffer = host_channel.split(buffer)
            except host_channel.BadFrame as err:
                return stopped("crashed", str(err))
            for message in messages:
                if message.get("op") == "probing":
                    current = str(message.get("name"))
                    deadline = time.monotonic() + limit
                elif message.get("op") == "probed" and current is not None and message.get("name") == current:
                    if message.get("ok"):
                        description = str(message.get("description", ""))
                        fact = _fact(
                            current, None, None, description, message.get("parameters"), message.get("exports")
                        )
                    else:
                        fact = _fact(current, "error", str(message.get("error")))
                    results.append(fact)
                    current = None
                    if probed is not None:
                        probed(1)
                elif message.get("op") == "probe_done":
                    return results
    except OSError as err:  # the process closed its channel before reading the request
        return stopped("crashed", str(err))
    finally:
        selector.close()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        channel.close()


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
