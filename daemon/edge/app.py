"""The daemon's HTTP API (FastAPI), for both harnesses.

    GET  /beeuni/tools                 the tools the calling agent sees: name, description, parameters
    POST /beeuni/tools/{name}          run a tool; the body is its arguments, a JSON object
    GET  /beeuni/openapi.json          the OpenAPI document of the two, every answer included (``openapi.py``)

A request to a tool carries ``Authorization: Bearer <token>`` — the token the daemon handed its
starter, who handed it to the harness alone (``handoff.py``); without it the answer is 401 and
the log names the process that tried (``peer.py``). ``X-Beeuni-Agent`` names the calling agent,
``X-Beeuni-Parent`` the agent that started it as a subagent. Every answer, FastAPI's own
included, is JSON: ``{"output": ...}`` or ``{"error": "..."}``, its text from the rules
(``DAEMON_MESSAGES``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, NoReturn

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from ..host.output import SpillFolder, limit_output
from ..log import write as log_line
from ..messages import say
from ..serving.session import CallRefused, Session
from .headers import MAX_HEADER, HeaderTooLarge, agent_headers
from .hosts import HostAllowList
from .openapi import openapi_document
from .peer import process_at
from .refusals import Refusals

LOOK_UP_INTERVAL = 1.0  # seconds between two look-ups of a refused caller's process
QUICK_CALL = 0.05  # seconds: calls that end sooner are not worth a disconnect watcher


class TooLarge(Exception):
    pass


def create_app(session: Session, token: str, max_body: int, spill: SpillFolder, refusals: Refusals) -> FastAPI:

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await session.stop()  # its private folder goes, and with it a spill folder inside

    app = FastAPI(title="beeuni daemon", lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)

    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def message(key: str, **fields: str) -> str:
        return say(session.messages(), key, **fields)

    # FastAPI's own answers, in the daemon's shape ------------------------------------------

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        if error.status_code == 405:
            return refuse(405, message("method_not_allowed", detail=f"{request.method} {request.url.path}"))
        if error.status_code == 404:
            return refuse(404, message("no_such_path", detail=request.url.path))
        return refuse(error.status_code, str(error.detail))

    async def invalid_request(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}" for problem in error.errors()
        )
        return refuse(422, message("bad_request", detail=problems))

    async def internal_error(request: Request, error: Exception) -> JSONResponse:
        return refuse(500, message("internal_error", detail=f"{type(error).__name__}: {error}"))

    async def refused(request: Request, error: Exception) -> JSONResponse:
        """A refusal raised by the session or by ``caller``: its status and text."""
        assert isinstance(error, CallRefused)
        return refuse(error.status, error.message)

    app.add_middleware(HostAllowList, refusal=lambda host: message("foreign_host", detail=host))
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(Exception, internal_error)
    app.add_exception_handler(CallRefused, refused)

    async def openapi(request: Request) -> JSONResponse:
        assert session.current is not None
        return JSONResponse(openapi_document(session.current, max_body))

    app.router.add_route("/beeuni/openapi.json", openapi, methods=["GET"])

    expected = f"Bearer {token}".encode()
    last_look_up = -LOOK_UP_INTERVAL

    async def unauthorized(request: Request) -> NoReturn:
        """Refuse (401), with a log line saying who tried: its process, looked up at most once a second
        (a flood of refusals costs one scan of /proc a second, not one each); past the refusals'
        rate limit, counted without a line (``refusals.py``)."""
        nonlocal last_look_up
        if not refusals.admit(message("without_token")):
            raise CallRefused(401, message("unauthorized"))
        claimed = request.headers.get("x-beeuni-agent")
        detail = f"{request.method} {request.url.path}" + (f" as agent {claimed[:MAX_HEADER]}" if claimed else "")
        client, server = request.client, request.scope.get("server")
        found = None
        if client is not None and server is not None and time.monotonic() - last_look_up >= LOOK_UP_INTERVAL:
            last_look_up = time.monotonic()
            found = await asyncio.to_thread(process_at, (client.host, client.port), (server[0], server[1]))
        if found is not None:
            caller = message("caller_known", pid=str(found[0]), command=found[1])
        else:
            caller = message("caller_unknown", port=str(client.port if client else "?"))
        log_line(message("refused_caller", detail=detail, caller=caller) + "\n")
        raise CallRefused(401, message("unauthorized"))

    async def caller(request: Request) -> tuple[str | None, str | None]:
        """The calling agent and its parent, or ``CallRefused``: no token (401), an agent header
        over its limit (431)."""
        if not secrets.compare_digest(request.headers.get("authorization", "").encode(), expected):
            await unauthorized(request)
        try:
            return agent_headers(request.headers)
        except HeaderTooLarge as error:
            raise CallRefused(431, message("header_too_large", detail=error.header, size=str(MAX_HEADER))) from None

    without_zod_said = False

    @app.get("/beeuni/tools")
    async def list_tools(request: Request, all: bool = False, without_zod: bool = False) -> Any:
        nonlocal without_zod_said
        agent, parent = await caller(request)
        tools = session.offered(agent, parent, all)
        if without_zod and not without_zod_said:  # the plugin could not carry the schemas exactly
            without_zod_said = True
            log_line(message("plugin_without_zod") + "\n")
        listing: dict[str, Any] = {"harness": session.harness, "tools": tools}
        if all:  # what the standard harness's plugin hides from each declared agent's model
            listing["hidden"] = session.hidden_by_agent()
            listing["permission"] = session.permission_by_agent()
        return JSONResponse(listing)

    async def call_tool(request: Request) -> JSONResponse:
        name = request.path_params["name"]
        agent, parent = await caller(request)
        try:
            body = await _read_body(request, max_body)
        except TooLarge:
            return refuse(413, message("too_large", tool=name, detail=str(max_body)))
        except ClientDisconnect:  # gone before its body arrived (or cut off by the read timeout)
            return refuse(499, message("client_gone", tool=name))
        args = session.arguments(body, name)
        call: asyncio.Task[Any] = asyncio.create_task(session.call(name, args, agent, parent))
        done, _ = await asyncio.wait({call}, timeout=QUICK_CALL)
        if not done:  # a longer call: also watch for the client going away
            watcher: asyncio.Task[Any] = asyncio.create_task(_wait_for_disconnect(request))
            done, _ = await asyncio.wait({call, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if call not in done:  # the client went away: abort the call (context.signal)
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError, CallRefused):
                    await call
                return refuse(499, message("client_gone", tool=name))
            watcher.cancel()
        outcome = call.result()
        if outcome.ok:
            return JSONResponse(limit_output(outcome.output, name, session.messages()["spilled"], spill))
        return refuse(*session.failure(outcome, name, agent))

    # The hot path: a plain route of the app's router, without FastAPI's parameter machinery
    # (a tenth of a call's time); the body is parsed and answered by hand anyway.
    app.router.add_route("/beeuni/tools/{name}", call_tool, methods=["POST"])
    return app


async def _read_body(request: Request, limit: int) -> bytes:
    """The request's body, or ``TooLarge`` as soon as it is known to pass ``limit`` bytes: from
    its Content-Length before a byte is read, else while it streams in."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


async def _wait_for_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return
