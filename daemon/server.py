"""``beeuni daemon``: resolve, load the modules, write the connection file (and, for the standard
harness, the opencode plugin), then serve on 127.0.0.1 until stopped."""

from __future__ import annotations

import json
import os
import secrets
import socket

import uvicorn

from ..cli.tool_files import Refusal
from ..engine.project import ProjectRun, load_rules
from ..engine.visible import visible
from .app import DEFAULT_MAX_BODY, create_app
from .host import DEFAULT_MAX_OUTPUT
from .log import log
from .log import write as log_line
from .plugin import write_plugin
from .secrets import project_dir, write_private
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
    timeout: float = DEFAULT_TIMEOUT,
    max_body: int = DEFAULT_MAX_BODY,
    spill_dir: str | None = None,
    max_output: int = DEFAULT_MAX_OUTPUT,
    require_confinement: bool = False,
) -> int:
    session = Session(
        path, rules, harness, agent, bun, timeout, max_output=max_output, require_confinement=require_confinement
    )
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer on a kept-alive connection waits ~40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(2048)  # before the connection file exists: a client that reads it can connect at once
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    token = secrets.token_urlsafe(32)
    connection_file = os.path.join(project_dir(session.repo.root), "daemon.json")

    refused: list[Refusal] = []

    def refuse(reason: str, detail: str) -> Refusal:
        run = ProjectRun(session.repo, session.manifest, load_rules(rules))
        return Refusal(run.call("eject_refusal", reason, "", detail))

    async def main() -> int:
        try:
            await session.start()
        except ConfinementRequired as refused_start:
            log_line(str(refused_start) + "\n")
            return 2
        plugin = None
        if harness == "standard":
            folder = opencode_dir or os.path.join(session.repo.root, ".opencode")
            try:
                plugin = write_plugin(session.repo, folder, connection_file, refuse)
            except Refusal as refusal:  # before the connection file: no client finds a daemon
                refused.append(refusal)
                await session.stop()
                return 2
        # the app makes its spill folder (and removes stale ones) before a client can call
        app = create_app(session, token, max_body, spill_dir)
        document = {"url": url, "token": token, "pid": os.getpid(), "harness": harness, "plugin": plugin}
        write_private(connection_file, json.dumps(document).encode())
        log_line(f"beeuni daemon: serving {url} ({harness} harness); connection file {connection_file}\n")
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
