"""Load-only checks of tool modules (``beeuni validate --modules``): each module is imported in
Bun by the module host's ``probe`` operation, nothing is called, and a watchdog gives each
module a time limit — an import that loops blocks Bun itself, so the process is killed and a new
one takes the modules that were not reached yet.

The result per tool is a fact for the rules: ``{name, loaded, problem, error, description,
parameters, schema_problem}``; ``problem`` is ``null``, ``"error"`` (the import threw or the
export has the wrong shape: ``error`` says how, as the daemon logs it), ``"timed-out"`` or
``"crashed"`` (Bun stopped while loading it; ``error`` holds its exit status).
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

HOST_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host.ts")  # not from host.py: no asyncio here

STARTUP_ALLOWANCE = 10.0  # seconds for Bun itself to start, before the first module's limit runs


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
    found: dict[str, dict[str, Any]] = {}
    pending = list(modules)
    # jsonschema takes long to import: import it while Bun loads the modules
    warming = threading.Thread(target=importlib.import_module, args=("jsonschema.validators",), daemon=True)
    if opencode is None:
        warming.start()
    while pending:
        for name, fact in _probe_run(bun, pending, root, limit, opencode, probed):
            found[name] = fact
        pending = [(name, path) for name, path in pending if name not in found]
    facts = [found[name] for name, _ in modules]
    if opencode is None:
        warming.join()
    for fact in facts:
        if fact["error"] is not None:
            fact["error"] = fact["error"].replace(root + "/", "")
        if fact["loaded"] and opencode is None:
            fact["schema_problem"] = schema_problem(fact["parameters"])
    return facts


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
    root: str,
    limit: float,
    opencode: dict[str, Any] | None,
    probed: Callable[[int], None] | None,
) -> list[tuple[str, dict[str, Any]]]:
    """One Bun process over ``pending``: what it reported before it finished, stopped or was
    killed — at least one module's fact, so the caller always progresses (``probed`` is told of
    each module Bun reported on)."""
    process = subprocess.Popen(
        [bun, "--no-install", HOST_SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # what modules print at import is no diagnostic
        cwd=root,
    )
    assert process.stdin is not None and process.stdout is not None
    entries = [{"name": name, "module": path} for name, path in pending]
    request: dict[str, Any] = {"op": "probe", "tools": entries}
    if opencode is not None:
        request["opencode"] = opencode
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    results: list[tuple[str, dict[str, Any]]] = []
    current: str | None = None
    deadline = time.monotonic() + STARTUP_ALLOWANCE + limit
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    buffer = b""
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(timeout=remaining):
                if current is not None:
                    results.append((current, _fact(current, "timed-out")))
                elif not results:
                    results.append((pending[0][0], _fact(pending[0][0], "timed-out")))
                return results
            chunk = process.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                code = process.wait()
                if current is not None:
                    results.append((current, _fact(current, "crashed", f"exit status {code}")))
                elif not results:
                    results.append((pending[0][0], _fact(pending[0][0], "crashed", f"exit status {code}")))
                return results
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                message = json.loads(line)
                if message["op"] == "probing":
                    current = message["name"]
                    deadline = time.monotonic() + limit
                elif message["op"] == "probed":
                    name = message["name"]
                    if message["ok"]:
                        fact = _fact(
                            name,
                            None,
                            None,
                            message.get("description", ""),
                            message.get("parameters"),
                            message.get("exports"),
                        )
                    else:
                        fact = _fact(name, "error", message["error"])
                    results.append((name, fact))
                    current = None
                    if probed is not None:
                        probed(1)
                elif message["op"] == "probe_done":
                    return results
    finally:
        selector.close()
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()


def schema_problem(parameters: Any) -> str | None:
    """Why ``parameters`` is not a valid JSON Schema (checked against the metaschema its
    ``$schema`` names, draft 2020-12 by default), or None."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator_for(parameters, default=Draft202012Validator).check_schema(parameters)
    except SchemaError as err:
        where = "/".join(str(part) for part in err.absolute_path)
        return f"{err.message}" + (f" (at `{where}`)" if where else "")
    return None
