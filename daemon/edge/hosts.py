"""The daemon answers only requests addressed to itself: a ``Host`` of 127.0.0.1, localhost or
[::1] with the daemon's port.

A web page the user visits can make the browser send requests to 127.0.0.1 under a name of its
own (DNS rebinding); its ``Host`` header still carries that name, so checking it keeps such
pages out. Starlette's ``TrustedHostMiddleware`` checks the name but not the port, and cuts an
IPv6 address at its first colon; this middleware compares the whole ``host:port``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

#: the names the daemon's address (127.0.0.1) is reached by on this machine
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


class HostAllowList:
    def __init__(self, app: ASGIApp, refusal: Callable[[str], str]) -> None:
        self.app = app
        self.refusal = refusal  # the answer's text for a foreign host (from the rules)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            server = scope.get("server")
            if not server or given.lower() not in {f"{name}:{server[1]}" for name in LOCAL_NAMES}:
                body = json.dumps({"error": self.refusal(given)}).encode()
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
