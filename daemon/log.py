"""The daemon's log: lines go to stderr from a thread, through a bounded buffer, so that the
daemon never blocks on a full stderr pipe (nor on a module that prints without end). When the
buffer is full, lines are dropped and counted; the count is logged once there is room again,
in the rules' words (``dropped_note``, set when the session's rules are read)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

MAX_BUFFERED = 4 * 1024 * 1024  # bytes waiting for stderr; beyond, lines are dropped
FLUSH_LIMIT = 2.0  # seconds the daemon waits at exit for its log to be written


class Log:
    def __init__(self) -> None:
        self._lines: deque[bytes] = deque()
        self._size = 0  # bytes taken in and not yet written
        self._dropped = 0
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self.dropped_note: Callable[[int], str] = lambda count: f"[log] {count}\n"

    def write(self, text: str) -> None:
        """Log ``text`` (whole lines, newline included) without waiting for stderr."""
        data = text.encode("utf-8", errors="replace")
        with self._ready:
            if self._size + len(data) > MAX_BUFFERED:
                self._dropped += 1
                return
            self._lines.append(data)
            self._size += len(data)
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="beeuni-log", daemon=True)
                self._thread.start()
            self._ready.notify_all()

    def flush(self) -> None:
        """Wait until everything taken in is written, or ``FLUSH_LIMIT`` seconds (at exit: a
        stderr nobody reads must not keep the daemon from ending)."""
        deadline = time.monotonic() + FLUSH_LIMIT
        with self._ready:
            while self._size and (left := deadline - time.monotonic()) > 0:
                self._ready.wait(left)

    def _drain(self) -> None:
        fd = sys.stderr.fileno()
        while True:
            with self._ready:
                while not self._lines:
                    self._ready.wait()
                taken = list(self._lines)
                self._lines.clear()
                dropped, self._dropped = self._dropped, 0
            data = b"".join(taken)
            if dropped:
                data += self.dropped_note(dropped).encode()
            with contextlib.suppress(OSError):  # stderr is gone: the lines are lost, the daemon goes on
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            with self._ready:
                self._size -= sum(len(line) for line in taken)
                self._ready.notify_all()


log = Log()
write = log.write
