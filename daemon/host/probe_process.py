"""The daemon's load report, taken in a process of its own while the daemon goes on starting.

Loading each module apart starts a Bun process per module (``probe.py``). Started from the
daemon, every start would fork the daemon's whole address space and wait for its interpreter
lock, which the daemon's own start holds meanwhile (its HTTP side is imported while the modules
load). So the load runs in a small process of its own: ``python -IS`` with beeuni's own package
only, which forks nothing but itself, on another core. It reads the request (the modules, the
confinement, the limit) as one line of JSON on stdin and writes the facts as JSON on stdout; what
the modules print never reaches it (their fd 1 and 2 are ``/dev/null``). It ends with the daemon
(``PR_SET_PDEATHSIG``), and the module processes it started end with it. Those yield to the
daemon's own start (``sandbox.BACKGROUND_NICE``). The process is started first thing
(``commands.daemon``) and asked as soon as the release's modules are known, before the tool set's
pydantic model is made (``Session._made``).

Saves a fifth of a release's first daemon start (5 Beeuni and 20 project tools: 646 ms without it,
541 ms with it, alternating series), together with the HTTP side made meanwhile (``server.py``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from typing import Any

from ..box.command_box import package_root
from ..box.pid_namespace import end_with_parent
from ..box.sandbox import Confinement
from .probe import load_modules, module_fact

RUNNER = "import sys\nsys.path.insert(0, sys.argv[1])\nfrom beeuni.daemon.host.probe_process import main\nmain()\n"


class LoadProcess:
    """The process, started ahead of its request (its Python start and imports overlap the
    daemon's own); ``ask`` sends the request, ``load`` waits for the facts (asking first when
    nothing was asked), ``close`` ends it, used or not."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [os.path.realpath(sys.executable), "-I", "-S", "-c", RUNNER, package_root()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._asked: list[str] | None = None

    def ask(
        self, bun: str, modules: list[tuple[str, str]], confinement: Confinement, limit: float, folder: str
    ) -> None:
        """Send the request (``probe.load_modules``'s arguments): the load starts now, while the
        daemon goes on; ``load`` waits for its facts. Asked once: a later ask is not sent."""
        if self._asked is not None:
            return
        self._asked = [name for name, _ in modules]
        request = {
            "parent": os.getpid(),
            "bun": bun,
            "modules": modules,
            "confinement": dataclasses.asdict(confinement),
            "limit": limit,
            "folder": folder,
        }
        assert self._process.stdin is not None
        try:  # one line: the process reads it and starts, the pipe stays open for `communicate`
            self._process.stdin.write(json.dumps(request).encode() + b"\n")
            self._process.stdin.flush()
        except OSError:  # the process ended: `load` says so for each module
            pass

    def load(
        self, bun: str, modules: list[tuple[str, str]], confinement: Confinement, limit: float, folder: str
    ) -> list[dict[str, Any]]:
        """``probe.load_modules`` with the same arguments, in the process (blocks; for a thread),
        asked now unless ``ask`` asked it before. A process that ends without the facts makes each
        module's fact ``crashed``."""
        self.ask(bun, modules, confinement, limit, folder)
        assert self._asked == [name for name, _ in modules], "asked for other modules than loaded"
        output, errors = self._process.communicate()
        if self._process.returncode == 0:
            try:
                facts: list[dict[str, Any]] = json.loads(output)
                return facts
            except ValueError:
                pass
        said = errors.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit status {self._process.returncode}"
        return [module_fact(name, "crashed", why) for name, _ in modules]

    def close(self) -> None:
        if self._process.returncode is None:  # not asked, or asked and abandoned
            self._process.kill()
            self._process.communicate()


def main() -> None:
    """The process's side: read the request, load, write the facts."""
    end_with_parent()
    asked = sys.stdin.buffer.readline()
    if not asked:  # closed unused
        return
    request = json.loads(asked)
    if os.getppid() != request["parent"]:  # the daemon ended before the signal was set
        sys.exit(1)
    confinement = Confinement(**{key: _field(value) for key, value in request["confinement"].items()})
    modules = [(str(name), str(path)) for name, path in request["modules"]]
    facts = load_modules(
        request["bun"], modules, confinement, float(request["limit"]), request["folder"], background=True
    )
    sys.stdout.write(json.dumps(facts))


def _field(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
