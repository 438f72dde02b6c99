"""The daemon's HTTP API (FastAPI), for both harnesses.

    GET  /beeuni/tools                 the tools the calling agent sees: name, description, parameters
    POST /beeuni/tools/{name}          run a tool; the body is its arguments

Every request carries ``Authorization: Bearer <token>``; the calling agent is named in
``X-Beeuni-Agent`` (default: the session's agent) and, for a subagent, the agent that started it
in ``X-Beeuni-Parent``. Answers are JSON: ``{"output": ...}`` (with ``truncated``, ``size``,
``lines`` and ``path`` when the output was stored in a file), or ``{"error": "..."}`` with 401,
403, 404, 422 (the tool threw: its message), 499 (cancelled), 502 (the module host died) or 504
(the tool ran out of time).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from .output import limit_output
from .session import CallRefused, Session, say

QUICK_CALL = 0.05  # seconds: calls that end sooner are not worth a disconnect watcher
STATUS_OF_REASON = {"thrown": 422, "cancelled": 499, "host_died": 502, "timed_out": 504}


def create_app(session: Session, token: str, connection_file: str) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await session.stop()

    app = FastAPI(title="beeuni daemon", lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)

    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def authorized(request: Request) -> bool:
        given = request.headers.get("authorization", "")
        return secrets.compare_digest(given.encode(), f"Bearer {token}".encode())

    def unauthorized() -> JSONResponse:
        assert session.current is not None
        return refuse(401, say(session.current.resolved.messages, "unauthorized", detail=connection_file))

    @app.get("/beeuni/tools")
    async def list_tools(request: Request, all: bool = False) -> Any:
        if not authorized(request):
            return unauthorized()
        try:
            tools = session.offered(request.headers.get("x-beeuni-agent"), request.headers.get("x-beeuni-parent"), all)
        except CallRefused as refused:
            return refuse(refused.status, refused.message)
        return JSONResponse({"harness": session.harness, "tools": tools})

    async def call_tool(request: Request) -> JSONResponse:
        name = request.path_params["name"]
        if not authorized(request):
            return unauthorized()
        try:
            args = await request.json() if await request.body() else {}
        except ValueError:
            return refuse(400, "the body must be JSON: the tool's arguments")
        agent, parent = request.headers.get("x-beeuni-agent"), request.headers.get("x-beeuni-parent")
        call: asyncio.Task[Any] = asyncio.create_task(session.call(name, args, agent, parent))
        done, _ = await asyncio.wait({call}, timeout=QUICK_CALL)
        if not done:  # a longer call: also watch for the client going away
            watcher: asyncio.Task[Any] = asyncio.create_task(_wait_for_disconnect(request))
            done, _ = await asyncio.wait({call, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if call not in done:  # the client went away: abort the call (context.signal)
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError, CallRefused):
                    await call
                return refuse(499, "the client went away; the call was aborted")
            watcher.cancel()
        try:
            outcome = call.result()
        except CallRefused as refused:
            return refuse(refused.status, refused.message)
        assert session.current is not None
        messages = session.current.resolved.messages
        if outcome.ok:
            return JSONResponse(limit_output(outcome.output, name, messages["spilled"]))
        if outcome.reason == "timed_out":
            text = say(messages, "timed_out", tool=name, agent=agent or session.agent, detail=f"{session.timeout:g}")
            return refuse(504, text)
        if outcome.reason == "not_loaded":
            return refuse(404, say(messages, "not_loaded", tool=name))
        return refuse(STATUS_OF_REASON.get(outcome.reason, 500), outcome.error)

    # The hot path: a plain route of the app's router, without FastAPI's parameter machinery
    # (a tenth of a call's time); the body is parsed and answered by hand anyway.
    app.router.add_route("/beeuni/tools/{name}", call_tool, methods=["POST"])
    return app


async def _wait_for_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return
