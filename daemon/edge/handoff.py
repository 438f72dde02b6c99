"""The daemon's credential, passed from process to process on inherited sockets, never in a file.

The daemon writes its connection document (one JSON line: ``url``, ``token``, ``pid``,
``harness``, ``release``, ``plugin``, ``plugin_sha256``) to the socket its starter passed as
``--connection-fd N``, once it serves, and keeps that socket as the starter's channel
(``control.py``); the starter hands the document on the same way to the harness (opencode: the
number in ``BEEUNI_DAEMON_FD``, read to its end by the plugin when it loads). A socket, because
another process of the user can open a file or pipe through ``/proc/PID/fd/N`` and read what
waits in it, and no socket. docs/platform.md, "Who may call the daemon", says why that is enough (Yama).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time

#: the variable that names, in the harness's environment, the descriptor its document waits on
VARIABLE = "BEEUNI_DAEMON_FD"
#: bytes a connection document may have
DOCUMENT_LIMIT = 64 * 1024
#: bytes an event of the daemon may have (a turn's end carries the conversation)
EVENT_LIMIT = 256 * 1024 * 1024


class HandOff:
    """One hand-off between a starter and the process it starts: a socket pair, the far end of
    which (``fd``) the child inherits (``pass_fds``)."""

    def __init__(self) -> None:
        self._kept, self._passed = socket.socketpair()
        self._received = b""

    @property
    def fd(self) -> int:
        return self._passed.fileno()

    def started(self) -> None:
        """The child has started with its end: the starter's copy of it goes, so that the
        child's end closing (or the child's exit) is the end of what it sends."""
        self._passed.close()

    def send(self, document: bytes) -> None:
        """Give the child ``document`` and close: it reads to the end."""
        with self._kept:
            self._kept.sendall(document)

    def receive(self, limit: float, size: int = DOCUMENT_LIMIT) -> bytes:
        """The line the child sent (a daemon: its connection document), or what it sent before it
        closed its end (nothing when it ended without sending); ``TimeoutError`` after ``limit``
        seconds. The socket stays open: a daemon's starter converges the session on it
        (``request``, ``event``)."""
        line, self._received = read_line(self._kept, self._received, size, time.monotonic() + limit)
        return line

    def request(self, message: dict[str, object]) -> None:
        """Send the daemon one request (``control.py``)."""
        self._kept.sendall(json.dumps(message).encode() + b"\n")

    def event(self, limit: float) -> dict[str, object] | None:
        """The daemon's next event; None when it closed its end."""
        line = self.receive(limit, EVENT_LIMIT)
        return json.loads(line) if line else None

    def close(self) -> None:
        self._kept.close()
        self._passed.close()


def read_line(connection: socket.socket, received: bytes, size: int, deadline: float) -> tuple[bytes, bytes]:
    """The next line of ``connection`` after what was ``received`` of it already, and what came
    after the line: at most about ``size`` bytes are read for it (past them, what came is the
    line), ``TimeoutError`` past ``deadline`` (``time.monotonic``). At its end, what it sent."""
    while b"\n" not in received and len(received) <= size:
        connection.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = connection.recv(min(size, 1 << 20))
        if not chunk:
            break
        received += chunk
    line, _, rest = received.partition(b"\n")
    return line, rest


class NotASocket(Exception):
    """``--connection-fd`` names no open socket."""


def starters_socket(fd: int) -> socket.socket:
    """The socket the starter passed at ``fd``, kept from every process the daemon starts; or
    ``NotASocket`` (a file or a pipe would let other processes of the user read the document)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        raise NotASocket() from None
    if not stat.S_ISSOCK(mode):
        raise NotASocket()
    connection = socket.socket(fileno=fd)
    connection.set_inheritable(False)
    return connection
