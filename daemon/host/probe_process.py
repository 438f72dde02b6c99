"""The daemon's load report, taken in a process of its own while the daemon goes on starting.

Loading each module apart starts a Bun process per module (``probe.py``). Started from the
daemon, every start would fork the daemon's whole address space and wait for its interpreter
lock, which the daemon's own start holds meanwhile (its HTTP side is imported while the modules
load). So the load runs in a small process of its own: ``python -IS`` with beeuni's own package
only, which forks nothing but itself, on another core. It reads the request (the modules, the
confinement, the limit) as one line of JSON on stdin and writes each module's fact as a line of
JSON on stdout as soon as it is known, so that the daemon checks each module's schema while the
others load, and has the last fact without waiting for the process's exit; what the modules print
never reaches it (their fd 1 and 2 are ``/dev/null``). It ends with the daemon
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
import tempfile
from collections.abc import Callable
from typing import Any

from ..box.command_box import package_root
from ..box.pid_namespace import end_with_parent
from ..box.sandbox import Confinement
from .probe import EXIT_GRACE, load_modules, module_fact

RUNNER = "import sys\nsys.path.insert(0, sys.argv[1])\nfrom beeuni.daemon.host.probe_process import main\nmain()\n"


class LoadProcess:
    """The process, started ahead of its request (its Python start and imports overlap the
    daemon's own); ``ask`` sends the request, ``load`` takes the facts (asking first when
    nothing was asked), ``close`` ends it, used or not."""

    def __init__(self) -> None:
        # what it says on stderr is read only when it ends without every fact: a file, which
        # never fills as a pipe would while the facts are read
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by `close`)
        self._process = subprocess.Popen(
            [os.path.realpath(sys.executable), "-I", "-S", "-c", RUNNER, package_root()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
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
        try:  # one line: the process reads it and starts
            self._process.stdin.write(json.dumps(request).encode() + b"\n")
            self._process.stdin.flush()
        except OSError:  # the process ended: `load` says so for each module
            pass

    def load(
        self,
        bun: str,
        modules: list[tuple[str, str]],
        confinement: Confinement,
        limit: float,
        folder: str,
        probed: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """``probe.load_modules`` with the same arguments, in the process (blocks; for a thread),
        asked now unless ``ask`` asked it before; ``probed`` is called with each fact as it comes.
        A module whose fact does not come (the process ended without it) is ``crashed``."""
        self.ask(bun, modules, confinement, limit, folder)
        names = [name for name, _ in modules]
        assert self._asked == names, "asked for other modules than loaded"
        facts: dict[str, dict[str, Any]] = {}
        assert self._process.stdout is not None
        while len(facts) < len(names):
            line = self._process.stdout.readline()
            try:
                fact = json.loads(line)
            except ValueError:  # the end of its output, or what no fact is
                break
            if not isinstance(fact, dict) or fact.get("name") not in names or fact["name"] in facts:
                break
            facts[fact["name"]] = fact
            if probed is not None:
                probed(fact)
        if len(facts) < len(names):
            why = self._why_ended()
            return [facts.get(name) or module_fact(name, "crashed", why) for name in names]
        return [facts[name] for name in names]

    def _why_ended(self) -> str:
        """The last line the process said on stderr, else its exit status (a process that said
        what is no fact, or lives on without its output, is ended first)."""
        try:
            self._process.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._errors.seek(0)
        said = self._errors.read().decode(errors="replace").strip().splitlines()
        return said[-1] if said else f"exit status {self._process.returncode}"

    def close(self) -> None:
        """End the process, used or not: once its last fact is out nothing is left for it to do."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.communicate()
        self._errors.close()


def main() -> None:
    """The process's side: read the request, load, write each fact as it is known."""
    end_with_parent()
    asked = sys.stdin.buffer.readline()
    if not asked:  # closed unused
        return
    request = json.loads(asked)
    if os.getppid() != request["parent"]:  # the daemon ended before the signal was set
        sys.exit(1)
    confinement = Confinement(**{key: _field(value) for key, value in request["confinement"].items()})
    modules = [(str(name), str(path)) for name, path in request["modules"]]
    load_modules(
        request["bun"], modules, confinement, float(request["limit"]), request["folder"], probed=_say, background=True
    )


def _say(fact: dict[str, Any]) -> None:
    """One fact, a line, out at once."""
    line = (json.dumps(fact) + "\n").encode()
    while line:
        line = line[os.write(1, line) :]


def _field(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
