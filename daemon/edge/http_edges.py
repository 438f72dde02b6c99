"""The daemon's HTTP edge: uvicorn's httptools protocol, with bounds on what a request may cost
before the daemon answers it, so that no client without the token can crowd out the harness.

Why not uvicorn's options alone: its httptools protocol has no bound on a request's head (llhttp
has none; a request with 64 MiB of headers is buffered whole before the app sees it); its h11
protocol bounds the head's bytes (``h11_max_incomplete_event_size``) but answers 400, and parses
slower; ``limit_concurrency`` answers 503 to every new request — the harness's too — once
reached, and closes none of the connections that fill it; and nothing times out a request whose
head or body never ends (``timeout_keep_alive`` runs between requests only). So this subclass:

* counts a request's head — its request line and headers — as it arrives, and answers 431 once
  it passes ``MAX_HEAD`` bytes or ``MAX_HEADERS`` headers: before the app, which reads the token
  and the body, sees the request;
* gives each request ``read_timeout`` seconds, from its first byte (a connection's first: from
  its opening) to the end of its body, then answers 408;
* keeps at most ``unproven`` connections that have not presented the daemon's token (a request
  whose ``Authorization`` is the token), and at most ``PER_PROCESS_MAX`` of one process: a
  process past its share loses its own oldest, and one more past the total closes the oldest of
  the process holding the most (``unproven.py``: which process holds a connection is looked up
  only once they crowd). A connection that presented the token is never closed for
  another, so whatever a client without the token sends, it holds at most that many
  connections, each at most a head's bytes, and the harness keeps its way in;
* bounds the requests a connection queues behind the one being answered (HTTP pipelining):
  uvicorn pauses reading when one is queued but resumes at every answer and feeds the parser
  a whole read (up to 256 KiB, thousands of small requests) at once, so a client that sends
  without reading its answers grew the daemon by gigabytes. Here the parser is fed a head
  ``STEP`` bytes at a time, and once ``MAX_PIPELINED`` requests wait, a connection without the
  token is closed; one with the token is read no further — the rest of its read is held, at
  most one read, and fed when an answer has gone out;
* keeps no body of a connection that has not presented the token (the app refuses its requests
  before it reads a body).

A refused connection's answer is written, its sending side shut, and what the client still
sends is read and dropped for ``LINGER`` seconds: closed at once, the unread bytes would make
the kernel reset the connection and the client might never read why. A head that begins in the
read that ended the request before it is counted from the next read on (a read is at most
uvloop's buffer, 256 KiB).
"""

from __future__ import annotations

import asyncio
import http
import json
import resource
import secrets
from collections.abc import Callable
from typing import Any, ClassVar

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..messages import say
from .unproven import Cut, Unproven

MAX_HEAD = 16 * 1024  # bytes of a request's line and headers (h11's default bound)
MAX_HEADERS = 100  # headers of one request
UNPROVEN_MAX = 256  # connections that have not presented the token
MAX_PIPELINED = 8  # requests a connection may queue behind the one being answered
STEP = 512  # bytes of a head fed to the parser at once: at most some 28 requests of 18 bytes
LINGER = 2.0  # seconds a refused connection is read (and dropped) before it is closed
DESCRIPTORS_WANTED = 65536  # the soft limit asked for when the hard one is unlimited


class Edges:
    """What the connections of one daemon share: the token a request may present, the rules'
    texts, the read timeout, and the connections that have not presented the token."""

    def __init__(
        self,
        token: str,
        messages: Callable[[], dict[str, str]],
        read_timeout: float,
        unproven: int,
        cut: Cut | None = None,
    ) -> None:
        self.expected = f"Bearer {token}".encode()
        self.messages = messages
        self.read_timeout = read_timeout
        self.unproven = Unproven(unproven, cut=cut)


class HeldFlow(FlowControl):
    """uvicorn's flow control of one connection, except that reading stays paused while the
    connection holds bytes it has read but not parsed (its pipeline is full)."""

    def __init__(self, transport: asyncio.Transport, connection: BoundedProtocol) -> None:
        super().__init__(transport)
        self.connection = connection

    def resume_reading(self) -> None:
        if not self.connection.held:
            super().resume_reading()


class BoundedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol within the ``edges`` of its daemon (``protocol_for``)."""

    edges: ClassVar[Edges]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.in_head = True  # the bytes arriving belong to a request's head
        self.head_bytes = 0
        self.header_count = 0
        self.refused = False  # answered by the edge: what still arrives is dropped
        self.deadline: asyncio.TimerHandle | None = None
        self.held = b""  # read but not parsed: the requests queued on the connection are enough
        self.body_left: int | None = None  # bytes of the current body still to come (None: chunked)

    # the connection -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = HeldFlow(transport, self)
        self.edges.unproven.admit(self)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.edges.unproven.discard(self)
        self._disarm()
        super().connection_lost(exc)

    def eof_received(self) -> None:
        if self.refused:  # the client read its answer and closed
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.held:  # read while paused (a transport may hand over what it had): held too
            self.held += data
            return
        self._feed(data)

    def _feed(self, received: bytes) -> None:
        """Feed the parser: never more than ``MAX_HEAD`` bytes of one head, a head ``STEP`` bytes
        at a time; what follows once ``MAX_PIPELINED`` requests are queued is held, unread."""
        data = memoryview(received)
        while data and not self.refused and not self.transport.is_closing():
            if self.in_head:
                if self.head_bytes >= MAX_HEAD:
                    self._refuse(431, "headers_too_large", detail=str(MAX_HEADERS), size=str(MAX_HEAD))
                    return
                if len(self.pipeline) >= MAX_PIPELINED:
                    self.held = bytes(data)
                    self.flow.pause_reading()
                    return
                step = min(MAX_HEAD - self.head_bytes, STEP)
                self.head_bytes += min(step, len(data))
            else:  # a body: its declared length at once (the harness's bodies), a chunked one by steps
                step = self.body_left or STEP
            super().data_received(received if len(data) == len(received) <= step else bytes(data[:step]))
            data = data[step:]

    def on_response_complete(self) -> None:
        """An answer went out: the next queued request starts (uvicorn), and what was held is fed."""
        super().on_response_complete()
        if self.held and not self.transport.is_closing():
            data, self.held = self.held, b""
            self._feed(data)
            if not self.held:
                self.flow.resume_reading()

    # the parser's callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.header_count = 0
        self._arm()

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.refused:
            return
        self.header_count += 1
        if self.header_count > MAX_HEADERS:
            self._refuse(431, "headers_too_large", detail=str(MAX_HEADERS), size=str(MAX_HEAD))
            return
        super().on_header(name, value)
        if (
            name.lower() == b"authorization"
            and self in self.edges.unproven
            and secrets.compare_digest(value.strip(b" \t"), self.edges.expected)
        ):
            self.edges.unproven.discard(self)  # proven: never closed for another connection

    def on_headers_complete(self) -> None:
        if self.refused:
            return
        if len(self.pipeline) >= MAX_PIPELINED and self in self.edges.unproven:
            self.refused = True  # no answer can go out before those under way: closed
            self.transport.close()
            return
        self.in_head, self.head_bytes = False, 0
        self.body_left = _declared_length(self.headers)
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        """A body is kept for the app only on a connection that presented the token: without it
        the app answers 401 before it reads a body, so none is kept (uvicorn would keep a read's
        worth, up to 256 KiB, for each such connection until it closes)."""
        if self.body_left is not None:
            self.body_left -= len(body)
        if not self.refused and self not in self.edges.unproven:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self.refused:
            return
        self._disarm()
        self.in_head = True
        super().on_message_complete()

    # deadlines and refusals ---------------------------------------------------------------

    def _arm(self) -> None:
        if self.deadline is None:
            self.deadline = self.loop.call_later(self.edges.read_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _timed_out(self) -> None:
        self.deadline = None
        self._refuse(408, "request_timeout", detail=f"{self.edges.read_timeout:g}")

    def _refuse(self, status: int, key: str, **fields: str) -> None:
        """Answer ``status`` with the rules' text ``key``, unless an answer is already under way on
        this connection (then it is only closed); read and drop what follows, then close."""
        self.refused = True
        self.held = b""  # what follows is read and dropped
        self.flow.resume_reading()
        self._disarm()
        if self.in_head:  # an answer under way is the request's before, on this connection
            answerable = self.cycle is None or self.cycle.response_complete
        else:  # the app waits for this request's body, or has answered without it
            answerable = not self.cycle.response_started and not self.pipeline
        if not answerable:
            self.transport.close()
            return
        body = json.dumps({"error": say(self.edges.messages(), key, **fields)}).encode()
        head = f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        head += f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        self.transport.write(head.encode() + body)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.deadline = self.loop.call_later(LINGER, self.transport.close)


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The body's length a head declares: its Content-Length, 0 without one, None when chunked."""
    length = 0
    for name, value in headers:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length" and value.isdigit():
            length = int(value)
    return length


def protocol_for(edges: Edges) -> type[BoundedProtocol]:
    """The protocol class uvicorn builds each connection with (it takes a class, not an instance)."""

    class DaemonProtocol(BoundedProtocol):
        pass

    DaemonProtocol.edges = edges
    return DaemonProtocol


def unproven_bound() -> int:
    """How many connections without the token may be open: ``UNPROVEN_MAX``, or a quarter of the
    descriptors this process may open when that is fewer — after raising its soft limit to the
    hard one, so that the rest stay for the harness, the module processes and the files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = DESCRIPTORS_WANTED if hard == resource.RLIM_INFINITY else hard
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return max(1, min(UNPROVEN_MAX, soft // 4))
