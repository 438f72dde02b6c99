"""``beeuni daemon``: resolve, load the modules, write the connection file (and, for the standard
harness, the opencode plugin), then serve on 127.0.0.1 until stopped."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import sys

import uvicorn

from .app import create_app
from .plugin import write_plugin
from .secrets import project_dir, write_private
from .session import Session

DEFAULT_TIMEOUT = 300.0


def find_bun() -> str:
    """Bun from the environment (``BEEUNI_BUN``), beside the package's checkout, or on PATH."""
    configured = os.environ.get("BEEUNI_BUN")
    if configured:
        return configured
    import shutil

    found = shutil.which("bun")
    if found is None:
        raise RuntimeError("Bun is not installed: set BEEUNI_BUN, or put `bun` on PATH (`make setup` installs it)")
    return found


def serve(
    path: str,
    rules: str | None,
    harness: str,
    agent: str,
    port: int,
    opencode_dir: str | None,
    timeout: float = DEFAULT_TIMEOUT,
) -> int:
    session = Session(path, rules, harness, agent, find_bun(), timeout)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    token = secrets.token_urlsafe(32)
    connection_file = os.path.join(project_dir(session.repo.root), "daemon.json")

    async def main() -> None:
        await session.start()
        plugin = None
        if harness == "standard":
            plugin = write_plugin(opencode_dir or os.path.join(session.repo.root, ".opencode"), connection_file)
        document = {"url": url, "token": token, "pid": os.getpid(), "harness": harness, "plugin": plugin}
        write_private(connection_file, json.dumps(document).encode())
        sys.stderr.write(f"beeuni daemon: serving {url} ({harness} harness); connection file {connection_file}\n")
        config = uvicorn.Config(create_app(session, token, connection_file), log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve(sockets=[listener])

    asyncio.run(main())
    return 0
