"""The starter's channel: how whoever started the daemon asks a running session to converge.

The socket the starter passed as ``--connection-fd`` carries the daemon's connection document
(one JSON line) and then stays open: it is the one way into a running session that no agent and
no tool module holds (the daemon keeps it from every process it starts). The starter writes one
JSON object a line, the daemon answers with events, one JSON object a line:

    → {"op": "converge", "release": "REV"}       REV: a commit, a branch, a tag; null: HEAD now
    ← {"event": "converged", "release", "was", "release_root", "changes": {added, removed, changed, agents}}
    ← {"event": "convergence_failed", "release", "serving", "error"}
    ← {"event": "restart_runtime", "release"}     a tool changed: restart the harness (the
                                                   experimental runtime, the standard harness's
                                                   opencode), sent once no call is running

A request that is not one of these gets ``{"event": "error", "error"}``. When the starter closes
its end, nothing can converge the session any more; it goes on serving what it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

from ..engine.lang import RulesError
from ..engine.release.snapshot import ReleaseError
from .log import write as log_line
from .messages import say
from .session import Session, StartRefused

#: bytes of one request line from the starter
MAX_REQUEST = 64 * 1024


async def serve_starter(connection: socket.socket, session: Session) -> None:
    """Answer the starter's requests until it closes its end."""
    reader, writer = await asyncio.open_connection(sock=connection, limit=MAX_REQUEST)
    restarts: set[asyncio.Task[None]] = set()
    try:
        while True:
            try:
                line = await reader.readline()
            except (ValueError, ConnectionError):  # a line past the limit, or the starter went away
                return
            if not line:
                return
            try:
                request = json.loads(line)
            except ValueError:
                request = None
            if not isinstance(request, dict) or request.get("op") != "converge":
                _send(writer, {"event": "error", "error": 'expected {"op": "converge", "release": REV}'})
                continue
            release = request.get("release")
            if release is not None and not isinstance(release, str):
                _send(writer, {"event": "error", "error": "release must be a string or null"})
                continue
            event = await converge(session, release)
            _send(writer, event)
            if event["event"] == "converged" and event["changes"]["restart"]:
                task = asyncio.create_task(_restart_when_idle(session, writer, event["release"]))
                restarts.add(task)
                task.add_done_callback(restarts.discard)
    finally:
        for task in restarts:
            task.cancel()
        writer.close()


async def converge(session: Session, release: str | None) -> dict[str, Any]:
    """Converge ``session`` on ``release``; the event that says how it went (and the log line)."""
    assert session.current is not None
    messages = session.messages()
    try:
        changes = await session.converge(release)
    except Exception as err:  # any reason at all: the generation served stays
        reason = _reason(session, err)
        log_line(say(messages, "convergence_failed", detail=reason) + "\n")
        serving = session.current.release
        return {"event": "convergence_failed", "release": release, "serving": serving, "error": reason}
    document = changes.document()
    summary = session.current.run.call("release_changes", document)
    log_line(say(session.messages(), "converged", detail=summary) + "\n")
    return {
        "event": "converged",
        "release": changes.release,
        "was": changes.was,
        "release_root": session.current.root,
        "changes": {**document, "restart": changes.tools_changed},
    }


def _reason(session: Session, err: Exception) -> str:
    if isinstance(err, ReleaseError):
        return say(session.messages(), err.key, detail=err.detail)
    if isinstance(err, RulesError):
        return err.report().strip().replace("\n", "; ")
    if isinstance(err, StartRefused):
        return str(err)
    return f"{type(err).__name__}: {err}"


async def _restart_when_idle(session: Session, writer: asyncio.StreamWriter, release: str | None) -> None:
    await session.idle()
    _send(writer, {"event": "restart_runtime", "release": release})


def _send(writer: asyncio.StreamWriter, event: dict[str, Any]) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):  # the starter went away
        writer.write(json.dumps(event).encode() + b"\n")
