"""Refusals are logged, but not a line each without end: a client without the token can send
thousands of refused requests a second, and a line each grew the log by gigabytes an hour.

Of each kind of refusal (a 401 for want of the token, a request uvicorn cannot parse, ...) at
most ``BURST`` lines are logged in a ``WINDOW``; the rest are counted, and when the window
ends one line says how many more there were (the rules' ``refusals_counted``). So the log grows
by at most ``BURST + 1`` lines a window for each kind, whatever arrives.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

BURST = 10  # lines of one kind logged in a window
WINDOW = 10.0  # seconds
MAX_KINDS = 64  # kinds counted at once (uvicorn's warnings are a kind each); past them, one kind


@dataclass
class _Window:
    start: float
    logged: int = 0
    counted: int = 0  # refusals not logged
    closing: asyncio.TimerHandle | None = None


class Refusals:
    """The rate limit of the refusals' log lines of one daemon. ``write`` logs a line; ``summary``
    is the line for ``count`` refusals of a kind not logged in ``seconds`` seconds."""

    def __init__(self, write: Callable[[str], None], summary: Callable[[str, int, float], str]) -> None:
        self.write = write
        self.summary = summary
        self.windows: dict[str, _Window] = {}

    def admit(self, kind: str) -> bool:
        """Whether a refusal of ``kind`` (its description in the summary) is logged now; when not,
        it is counted for the summary that ends its window."""
        if kind not in self.windows and len(self.windows) >= MAX_KINDS:
            kind = next(iter(self.windows))  # counted with the oldest kind: the count stays right
        now = time.monotonic()
        window = self.windows.get(kind)
        if window is None or now - window.start >= WINDOW:
            if window is not None:
                self._close(kind)
            window = self.windows[kind] = _Window(now)
        if window.logged < BURST:
            window.logged += 1
            return True
        window.counted += 1
        if window.closing is None:  # said when the window ends, even when no refusal follows
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a test): said at the next refusal of the kind
                return False
            window.closing = loop.call_at(loop.time() + WINDOW - (now - window.start), self._close, kind)
        return False

    def _close(self, kind: str) -> None:
        window = self.windows.pop(kind, None)
        if window is None:
            return
        if window.closing is not None:
            window.closing.cancel()
        if window.counted:
            self.write(self.summary(kind, window.counted, WINDOW) + "\n")


class RefusalFilter(logging.Filter):
    """uvicorn's own warnings (a request it cannot parse, an upgrade it does not make) under the
    same limit: each message a kind."""

    def __init__(self, refusals: Refusals) -> None:
        super().__init__()
        self.refusals = refusals

    def filter(self, record: logging.LogRecord) -> bool:
        return self.refusals.admit(str(record.msg))
