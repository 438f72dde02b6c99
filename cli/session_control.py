"""How `beeuni sessions converge` reaches a session while one of its turns runs.

The runner is the daemon's starter: it alone holds the daemon's channel (``daemon/control.py``).
While a turn runs it listens on a unix socket in a folder of its own that only its user may
enter (``mkdtemp``: mode 0700), and it answers only a peer of its own user (``SO_PEERCRED``),
that holds the key it keeps in the session's record (in the private state folder, readable by
its owner only; tool modules cannot read it, Landlock keeps the state folder from them). A
request — one JSON line ``{"key", "release"}`` — is passed on to the daemon, and the daemon's
answer (``converged`` or ``convergence_failed``) comes back the same way.

Each connection is served in a thread of its own, and at most ``MAX_WAITING`` wait for their
request line at once (a new one ends the oldest such wait), so connections that send nothing
hold up no other; convergences themselves are passed on one at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from ..daemon.handoff import read_line

#: bytes of one request or answer
LIMIT = 1024 * 1024
#: seconds a client waits for the runner's answer (a convergence loads modules in Bun)
ANSWER_LIMIT = 300.0
#: seconds the runner waits for a connection's request line
REQUEST_LIMIT = 10.0
#: connections waiting for their request line at once; one more ends the oldest wait
MAX_WAITING = 16
#: the longest path a unix socket's address holds (``sun_path``, its final NUL excluded)
SOCKET_PATH_MAX = 107
#: ``struct ucred``: pid, uid, gid
_UCRED = struct.Struct("3i")


class ControlServer:
    """The runner's side: answers each request with ``converge(release)``, in a thread."""

    def __init__(self, converge: Callable[[str | None], dict[str, Any]]) -> None:
        self._folder = tempfile.mkdtemp(prefix="beeuni-session-", dir=_private_parent())
        path = os.path.join(self._folder, "control")
        self._key = secrets.token_urlsafe(24)
        self.address = {"path": path, "key": self._key}  # what the record keeps while the turn runs
        self._converge = converge
        self._converging = threading.Lock()  # the daemon's channel carries one convergence at a time
        self._waiting: dict[socket.socket, None] = {}  # oldest first
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o600)
        self._listener.listen(64)
        threading.Thread(target=self._accept, name="beeuni-session-control", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed: the turn ended
                return
            if peer_uid(connection) != os.getuid():  # another user's: no answer (the folder keeps it out too)
                connection.close()
                continue
            with self._lock:
                while len(self._waiting) >= MAX_WAITING:
                    oldest = next(iter(self._waiting))
                    del self._waiting[oldest]
                    with contextlib.suppress(OSError):
                        oldest.shutdown(socket.SHUT_RDWR)  # its read ends: it sent nothing in time
                self._waiting[connection] = None
            threading.Thread(target=self._serve, args=(connection,), name="beeuni-session-request", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                request = json.loads(_line(connection, REQUEST_LIMIT))
            except (OSError, ValueError):
                return
            finally:
                with self._lock:
                    self._waiting.pop(connection, None)
            if not isinstance(request, dict) or not secrets.compare_digest(str(request.get("key")), self._key):
                return  # no answer for who does not hold the key
            release = request.get("release")
            with self._converging:
                answer = self._converge(release if isinstance(release, str) else None)
            with contextlib.suppress(OSError):
                connection.sendall(json.dumps(answer).encode() + b"\n")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (a close alone does not)
        self._listener.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def ask(address: dict[str, Any], release: str | None) -> dict[str, Any] | None:
    """Ask the runner at ``address`` to converge; its answer, or None when no runner listens."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(address["path"]))
            if peer_uid(client) != os.getuid():  # not the runner: it runs as this user
                return None
            client.sendall(json.dumps({"key": address["key"], "release": release}).encode() + b"\n")
            answer = json.loads(_line(client, ANSWER_LIMIT))
    except (OSError, ValueError, KeyError):
        return None
    return answer if isinstance(answer, dict) else None


def peer_uid(connection: socket.socket) -> int:
    """The user of the process at the other end of a unix socket, as the kernel saw it connect."""
    return int(_UCRED.unpack(connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))[1])


def _private_parent() -> str:
    """Where the runner makes its socket's folder: the user's runtime folder (``XDG_RUNTIME_DIR``,
    the user's own) when set, else the temporary folder — where the socket's path still fits a
    unix address; the folder itself is the runner's alone either way (mode 0700)."""
    for parent in (os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(), "/tmp"):
        fits = len(parent) + len("/beeuni-session-XXXXXXXX/control") <= SOCKET_PATH_MAX
        if parent and fits and os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK):
            return parent
    return "/tmp"


def _line(connection: socket.socket, limit: float) -> bytes:
    return read_line(connection, b"", LIMIT, time.monotonic() + limit)[0]
