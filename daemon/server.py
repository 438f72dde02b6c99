"""``beeuni daemon``: take the release, resolve it, load the modules (and, for the standard harness,
write the opencode plugin into the daemon's private folder), hand the connection — URL and token —
to the starter on its socket, then serve on 127.0.0.1 until stopped, converging when the starter
says so on that socket (``control.py``)."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import secrets
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine.lang import RulesError
from .control import serve_starter
from .edge.handoff import NotASocket, starters_socket
from .edge.peer import process_name
from .edge.ptrace_guard import memory_unguarded
from .edge.refusals import BURST, RefusalFilter, Refusals
from .edge.unproven import PER_PROCESS_MAX, UNKNOWN
from .host.output import SpillFolder
from .log import log
from .log import write as log_line
from .messages import rules_texts, say
from .plugin import PluginRefused, write_plugin
from .serving.changes import SHORT
from .serving.session import Session, StartRefused

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .host.probe_process import LoadProcess


def serve(
    bun: str,
    path: str,
    rules: str | None,
    harness: str,
    agent: str,
    port: int,
    opencode_dir: str | None,
    connection_fd: int | None,
    timeout: float,
    max_body: int,
    spill_dir: str | None,
    max_output: int,
    require_confinement: bool,
    release: str | None,
    read_timeout: float,
    loader: LoadProcess | None = None,
) -> int:
    """``loader``: the load process, started before the daemon's imports (``commands.daemon``)."""
    session = Session(
        path,
        rules,
        harness,
        agent,
        bun,
        timeout,
        max_output=max_output,
        require_confinement=require_confinement,
        release=release,
        loader=loader,
    )
    try:  # before anything starts: a daemon nobody can call is not started
        if connection_fd is None:
            return _refused(say(rules_texts(rules), "no_connection_fd"))
        starter = starters_socket(connection_fd)
    except NotASocket:
        return _refused(say(rules_texts(rules), "connection_fd_not_socket", detail=str(connection_fd)))
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer on a kept-alive connection waits ~40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(2048)  # before the starter hears of it: a client can connect at once
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    token = secrets.token_urlsafe(32)
    refusals = Refusals(
        log_line,
        lambda kind, count, seconds: say(
            session.messages(),
            "refusals_counted",
            detail=kind,
            count=str(count),
            seconds=f"{seconds:g}",
            lines=str(BURST),
        ),
    )
    http_side = _HttpSide(session, token, max_body, spill_dir, refusals)

    async def main() -> int:
        try:
            await session.start(meanwhile=http_side.build)
        except (StartRefused, RulesError) as refused:  # the starter reads the end of its socket
            starter.close()
            log_line(refused.report() if isinstance(refused, RulesError) else f"{refused}\n")
            return 2
        assert session.current is not None and session.private is not None
        messages = session.messages()
        if session.current.release is not None:
            log_line(say(messages, "serving_release", detail=session.current.release[:SHORT]) + "\n")
        unguarded = memory_unguarded()
        if unguarded:
            if require_confinement:
                log_line(say(messages, "guard_required", detail=unguarded) + "\n")
                return await _stop(session, starter, 2)
            log_line(say(messages, "memory_unguarded", detail=unguarded) + "\n")
        plugin = None
        if harness == "standard":
            folder = opencode_dir or session.private.folder("opencode")
            try:
                plugin = write_plugin(session.repo, folder, messages["plugin_without_connection"])
            except PluginRefused as refusal:  # before the hand-over: no client finds a daemon
                log_line(say(messages, refusal.args[0], detail=refusal.args[1]) + "\n")
                return await _stop(session, starter, 2)
        from .edge.http_edges import Edges, protocol_for, unproven_bound

        app, spill = http_side.built()
        spill.make()  # before a client can call
        document = {
            "url": url,
            "token": token,
            "pid": os.getpid(),
            "harness": harness,
            "release": session.current.release,
            "release_root": session.current.root,
            "plugin": plugin.path if plugin else None,
            "plugin_sha256": plugin.digest if plugin else None,
        }
        log.flush()  # what the start said is in the log before anyone can call
        try:
            starter.sendall(json.dumps(document).encode() + b"\n")
        except OSError:
            log_line(say(messages, "starter_gone") + "\n")
            return await _stop(session, starter, 1)
        log_line(f"beeuni daemon: serving {url} ({harness} harness); its connection went to its starter\n")
        control = asyncio.create_task(serve_starter(starter, session, spill))
        # A command runs without the cyclic collector (cli/main.py); the daemon runs for the session,
        # so it collects — but never walks what the start built (the tool set, the rules), which lives on.
        gc.freeze()
        gc.enable()

        def cut(pid: int, count: int) -> None:  # a process's connections without the token, cut down
            if not refusals.admit(say(session.messages(), "connections_cut_kind")):
                return
            fields = {"count": str(count), "size": str(PER_PROCESS_MAX)}
            name = process_name(pid) if pid != UNKNOWN else None
            if name is None:
                log_line(say(session.messages(), "connections_cut_unknown", **fields) + "\n")
            else:
                log_line(say(session.messages(), "connections_cut", pid=str(pid), command=name, **fields) + "\n")

        import uvicorn

        edges = Edges(token, session.messages, read_timeout, unproven_bound(), cut)
        config = uvicorn.Config(app, log_level="warning", lifespan="on", http=protocol_for(edges), ws="none")
        logging.getLogger("uvicorn.error").addFilter(RefusalFilter(refusals))  # after the Config set logging up
        try:
            await uvicorn.Server(config).serve(sockets=[listener])
        finally:
            control.cancel()
        return 0

    import uvloop  # the daemon's event loop and HTTP parser are the fast ones (uvloop, httptools)

    try:
        return uvloop.run(main())
    finally:
        log.flush()


@dataclass
class _HttpSide:
    """The daemon's HTTP API, imported (FastAPI, uvicorn) and made in a thread while the modules
    load (``Session.start``'s ``meanwhile``): they load in processes of their own, so the two share
    no lock and take a core each. Its spill folder is made only once the start goes on."""

    session: Session
    token: str
    max_body: int
    spill_dir: str | None
    refusals: Refusals
    _built: tuple[FastAPI, SpillFolder] | None = None

    def build(self) -> None:
        from .edge import http_edges  # noqa: F401  (uvicorn's protocol: imported now too)
        from .edge.app import create_app

        assert self.session.private is not None
        spill = SpillFolder(self.spill_dir or os.path.join(self.session.private.path, "spill"), make=False)
        self._built = create_app(self.session, self.token, self.max_body, spill, self.refusals), spill

    def built(self) -> tuple[FastAPI, SpillFolder]:
        """The app and its spill folder (made now, when ``build`` did not run meanwhile)."""
        if self._built is None:
            self.build()
        assert self._built is not None
        return self._built


async def _stop(session: Session, starter: socket.socket, code: int) -> int:
    starter.close()  # closed unsent: the starter reads the end of it
    await session.stop()
    return code


def _refused(message: str) -> int:
    log_line(message + "\n")
    log.flush()
    return 2
