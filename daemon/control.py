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

On the experimental harness, whose turn loop runs in the daemon (``turns/``), the starter also
drives the turns, one at a time (a convergence may be asked meanwhile):

    → {"op": "turn", "agent": A, "prompt": TEXT, "model": {provider, model, api, base_url,
       api_key, key_variable}, "history": [...]}  history: the last turn_end's, or [] for the first
    ← {"event": "tool", "agent", "tool", "ok"}     each call, as it ends
    ← {"event": "turn_end", "status": "completed" | "error", "answer", "error", "history", "messages"}

A request that is not one of these gets ``{"event": "error", "error"}``. When the starter closes
its end, nothing can converge the session any more; it goes on serving what it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from dataclasses import asdict
from typing import Any

from ..engine.lang import RulesError
from ..engine.release.snapshot import ReleaseError
from .log import write as log_line
from .messages import say
from .output import SpillFolder
from .session import Session, StartRefused

#: bytes of one request line from the starter (a turn's carries the conversation so far)
MAX_REQUEST = 256 * 1024 * 1024


async def serve_starter(connection: socket.socket, session: Session, spill: SpillFolder) -> None:
    """Answer the starter's requests until it closes its end."""
    reader, writer = await asyncio.open_connection(sock=connection, limit=MAX_REQUEST)
    restarts: set[asyncio.Task[None]] = set()
    turn: asyncio.Task[None] | None = None
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
            if isinstance(request, dict) and request.get("op") == "turn":
                if turn is not None and not turn.done():
                    _send(writer, {"event": "error", "error": "a turn is running: one turn at a time"})
                    continue
                turn = asyncio.create_task(_turn(session, spill, writer, request))
                continue
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
        if turn is not None:
            turn.cancel()
        writer.close()


async def _turn(session: Session, spill: SpillFolder, writer: asyncio.StreamWriter, request: dict[str, Any]) -> None:
    """Run one turn the starter asked for; its events, then its end, on the channel."""
    from .turns.loop import TurnLoop
    from .turns.model import ModelChoice, UnknownApi

    assert session.current is not None
    agent, prompt = request.get("agent") or session.agent, request.get("prompt")
    if not session.current.harness_modules:
        _send(
            writer,
            {"event": "error", "error": f"the {session.harness} harness runs its turns itself, not in the daemon"},
        )
        return
    if not isinstance(agent, str) or not isinstance(prompt, str):
        _send(writer, {"event": "error", "error": "a turn needs an agent and a prompt, both strings"})
        return
    try:
        choice = ModelChoice.of(request.get("model"))
        loop = TurnLoop(session, spill, choice, lambda event: _send(writer, event))
        end = await loop.turn(agent, prompt, request.get("history"))
    except (ValueError, UnknownApi) as err:
        _send(writer, {"event": "error", "error": f"model: {err}"})
        return
    _send(writer, {"event": "turn_end", **asdict(end)})


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
