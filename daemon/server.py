"""``beeuni daemon``: resolve, load the modules (and, for the standard harness, write the opencode
plugin), hand the connection — URL and token — to the starter on its socket, then serve on
127.0.0.1 until stopped."""

from __future__ import annotations

import gc
import json
import os
import secrets
import socket

import uvicorn

from ..cli.tool_files import Refusal
from ..engine.project import ProjectRun, load_rules
from ..engine.visible import visible
from .app import DEFAULT_MAX_BODY, create_app
from .handoff import NotASocket, starters_socket
from .host import DEFAULT_MAX_OUTPUT
from .log import log
from .log import write as log_line
from .messages import say
from .plugin import write_plugin
from .ptrace_guard import memory_unguarded
from .session import ConfinementRequired, Session

DEFAULT_TIMEOUT = 300.0


def serve(
    bun: str,
    path: str,
    rules: str | None,
    harness: str,
    agent: str,
    port: int,
    opencode_dir: str | None,
    connection_fd: int | None,
    timeout: float = DEFAULT_TIMEOUT,
    max_body: int = DEFAULT_MAX_BODY,
    spill_dir: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    require_confinement: bool = False,
) -> int:
    session = Session(
        path, rules, harness, agent, bun, timeout, max_output=max_output, require_confinement=require_confinement
    )

    def run() -> ProjectRun:
        """The rules over the project, for a text before the session has its own (a refusal)."""
        return ProjectRun(session.repo, session.manifest, load_rules(rules))

    try:  # before anything starts: a daemon nobody can call is not started
        if connection_fd is None:
            return _refused(say(run().output("DAEMON_MESSAGES"), "no_connection_fd"))
        starter = starters_socket(connection_fd)
    except NotASocket:
        texts = run().output("DAEMON_MESSAGES")
        return _refused(say(texts, "connection_fd_not_socket", detail=str(connection_fd)))
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer on a kept-alive connection waits ~40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(2048)  # before the starter hears of it: a client can connect at once
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    token = secrets.token_urlsafe(32)

    refused: list[Refusal] = []

    def refuse(reason: str, detail: str) -> Refusal:
        return Refusal(run().call("eject_refusal", reason, "", detail))

    async def main() -> int:
        with starter:  # closed unsent when the start fails: the starter reads the end of it
            try:
                await session.start()
            except ConfinementRequired as refused_start:
                log_line(str(refused_start) + "\n")
                return 2
            messages = session.messages()
            unguarded = memory_unguarded()
            if unguarded:
                if require_confinement:
                    log_line(say(messages, "guard_required", detail=unguarded) + "\n")
                    await session.stop()
                    return 2
                log_line(say(messages, "memory_unguarded", detail=unguarded) + "\n")
            plugin = None
            if harness == "standard":
                folder = opencode_dir or os.path.join(session.repo.root, ".opencode")
                try:
                    plugin = write_plugin(session.repo, folder, messages["plugin_without_connection"], refuse)
                except Refusal as refusal:  # before the hand-over: no client finds a daemon
                    refused.append(refusal)
                    await session.stop()
                    return 2
            # the app makes its spill folder (and removes stale ones) before a client can call
            app = create_app(session, token, max_body, spill_dir)
            document = {"url": url, "token": token, "pid": os.getpid(), "harness": harness, "plugin": plugin}
            try:
                starter.sendall(json.dumps(document).encode())
            except OSError:  # its spill folder goes when the next daemon starts, as a killed one's
                log_line(say(messages, "starter_gone") + "\n")
                await session.stop()
                return 1
        log_line(f"beeuni daemon: serving {url} ({harness} harness); its connection went to its starter\n")
        # A command runs without the cyclic collector (cli/main.py); the daemon runs for the session,
        # so it collects — but never walks what the start built (the tool set, the rules), which lives on.
        gc.freeze()
        gc.enable()
        config = uvicorn.Config(app, log_level="warning", lifespan="on", http="httptools")
        await uvicorn.Server(config).serve(sockets=[listener])
        return 0

    import uvloop  # the daemon's event loop and HTTP parser are the fast ones (uvloop, httptools)

    try:
        code = uvloop.run(main())
    finally:
        log.flush()
    if refused:
        log_line(f"beeuni daemon: {visible(str(refused[0]))}\n")
        log.flush()
        return 2
    return code


def _refused(message: str) -> int:
    log_line(message + "\n")
    log.flush()
    return 2
