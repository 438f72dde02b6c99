"""One tool call without a server (``beeuni tools call``): the daemon's session and module host,
loading only the called tool's module, then the same lookups, environment, timeout, abort and
output spill as a call the daemon serves."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from ..serving.session import CallRefused, Session
from .output import limit_output


@dataclass
class CallReport:
    """What happened: an answer (``output``, spilled or not), or an ``error`` with the HTTP
    status the daemon would have answered with (404 and 403 refuse; 422, 504, 502 fail)."""

    status: int
    output: str | None = None
    error: str | None = None
    spilled: str | None = None  # the file holding the whole output, when it was too large
    duration_ms: float = 0.0
    refused: bool = False  # refused before the tool ran (bad arguments, 404, 403, ...)


def call_once(session: Session, tool: str, arguments: str) -> CallReport:
    return asyncio.run(_once(session, tool, arguments))


def describe_once(session: Session, tool: str) -> CallReport:
    """The tool as the daemon's listing shows it (``tools call --schema``), as indented JSON; its
    module is loaded, never run."""
    return asyncio.run(_once(session, tool, None))


async def _once(session: Session, tool: str, arguments: str | None) -> CallReport:
    """Start the session, call ``tool`` (``arguments`` None: describe it), stop the session."""
    await session.start()
    try:
        agent = session.agent
        started = time.perf_counter()
        try:
            if arguments is None:
                described = session.described(tool, agent)
                return CallReport(200, output=json.dumps(described, indent=2, ensure_ascii=False))
            body = arguments.encode("utf-8", "surrogateescape") if arguments.strip() else b""
            outcome = await session.call(tool, session.arguments(body, tool), agent, None)
        except CallRefused as refused:  # a module that did not load was logged like the daemon logs it
            return CallReport(refused.status, error=refused.message, refused=True)
        duration = (time.perf_counter() - started) * 1000
        if outcome.ok:
            answer = limit_output(outcome.output, tool, session.messages()["spilled"])
            return CallReport(200, output=answer["output"], spilled=answer.get("path"), duration_ms=duration)
        status, text = session.failure(outcome, tool, agent)
        return CallReport(status, error=text, duration_ms=duration)
    finally:
        await session.stop()
