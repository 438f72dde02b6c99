"""How `beeuni sessions converge` reaches a session while one of its turns runs.

The runner is the daemon's starter: it alone holds the daemon's channel (``daemon/control.py``).
While a turn runs it listens on an abstract unix socket whose name and key it keeps in the
session's record (in the private state folder, readable by its owner only; tool modules cannot
read it, Landlock keeps the state folder from them). A request — one JSON line ``{"key",
"release"}`` — is passed on to the daemon, and the daemon's answer (``converged`` or
``convergence_failed``) comes back the same way.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from ..daemon.handoff import read_line

#: bytes of one request or answer
LIMIT = 1024 * 1024
#: seconds a client waits for the runner's answer (a convergence loads modules in Bun)
ANSWER_LIMIT = 300.0
#: seconds the runner waits for a request on a connection: one that sends none (any process
#: may connect to an abstract socket) does not hold up the next
REQUEST_LIMIT = 10.0


class ControlServer:
    """The runner's side: answers each request with ``converge(release)``, in a thread."""

    def __init__(self, converge: Callable[[str | None], dict[str, Any]]) -> None:
        name = f"beeuni-session-{secrets.token_hex(12)}"
        self._key = secrets.token_urlsafe(24)
        self.address = {"socket": name, "key": self._key}  # what the record keeps while the turn runs
        self._converge = converge
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind("\0" + name)
        self._listener.listen(4)
        threading.Thread(target=self._serve, name="beeuni-session-control", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed: the turn ended
                return
            with connection:
                try:
                    request = json.loads(_line(connection, REQUEST_LIMIT))
                except (OSError, ValueError):
                    continue
                if not isinstance(request, dict) or not secrets.compare_digest(str(request.get("key")), self._key):
                    continue  # no answer for who does not hold the key
                release = request.get("release")
                answer = self._converge(release if isinstance(release, str) else None)
                with contextlib.suppress(OSError):
                    connection.sendall(json.dumps(answer).encode() + b"\n")

    def close(self) -> None:
        self._listener.close()


def ask(address: dict[str, Any], release: str | None) -> dict[str, Any] | None:
    """Ask the runner at ``address`` to converge; its answer, or None when no runner listens."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect("\0" + str(address["socket"]))
            client.sendall(json.dumps({"key": address["key"], "release": release}).encode() + b"\n")
            answer = json.loads(_line(client, ANSWER_LIMIT))
    except (OSError, ValueError, KeyError):
        return None
    return answer if isinstance(answer, dict) else None


def _line(connection: socket.socket, limit: float) -> bytes:
    return read_line(connection, b"", LIMIT, time.monotonic() + limit)[0]
