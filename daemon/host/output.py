"""Tool output that is too large for the model: stored whole in a file, its beginning answered.

The daemon keeps these files in ``spill/`` of its private folder (``private.py``; the files
0600), removed with it when the daemon stops, or in ``--spill-dir``. The files of one daemon total
at most ``MAX_SPILL_TOTAL`` bytes; past it, the oldest are removed first.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import defaultdict, deque
from typing import Any

from ...engine.printable import printable

MAX_BYTES = 50 * 1024
MAX_LINES = 2000
MAX_SPILL_TOTAL = 256 * 1024 * 1024  # bytes of spilled output a daemon keeps at once


class SpillFolder:
    """One daemon's private folder of spilled outputs, bounded in total."""

    def __init__(self, path: str, limit: int = MAX_SPILL_TOTAL, make: bool = True) -> None:
        """The folder ``path``, made 0700 when missing (now, or with ``make`` false by ``make()``)."""
        self.path = path
        self.limit = limit
        if make:
            self.make()
        self._files: deque[tuple[str, int]] = deque()  # oldest first
        self._total = 0

    def make(self) -> None:
        os.makedirs(self.path, mode=0o700, exist_ok=True)

    def store(self, data: bytes, tool: str) -> str:
        """Write ``data`` to a new private file; first remove the oldest files until the total
        with it is within the limit (an output larger than the limit is kept alone)."""
        while self._files and self._total + len(data) > self.limit:
            path, size = self._files.popleft()
            self._total -= size
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        path = _new_file(data, f"{tool}-", self.path)
        self._files.append((path, len(data)))
        self._total += len(data)
        return path


def _new_file(data: bytes, prefix: str, folder: str | None) -> str:
    """A new file holding ``data``, readable by its owner only (as ``mkstemp`` makes it)."""
    handle, path = tempfile.mkstemp(prefix=prefix, suffix=".txt", dir=folder)
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    return path


def limit_output(output: str, tool: str, note: str, folder: SpillFolder | None = None) -> dict[str, Any]:
    """The answer for ``output``. Over 50 KB or 2,000 lines, the whole output goes to a private
    file — in ``folder``, else (a one-off `beeuni tools call`, whose file outlives it) in the
    temporary folder — and the answer holds its beginning (within both limits), its size, its
    number of lines and the file's path; ``note`` (a template with ``{size}``, ``{lines}`` and
    ``{path}``) is appended to the beginning for the model to read."""
    data = output.encode("utf-8")
    lines = output.count("\n") + (0 if output.endswith("\n") or not output else 1)
    if len(data) <= MAX_BYTES and lines <= MAX_LINES:
        return {"output": output, "truncated": False}
    path = folder.store(data, tool) if folder is not None else _new_file(data, f"beeuni-output-{tool}-", None)
    # The whole answer, note included, stays within both limits: a harness that cuts at the same
    # limits (opencode does) hands the model the note too.
    told = "\n\n" + note.format_map(defaultdict(str, size=len(data), lines=lines, path=printable(path)))
    room = MAX_LINES - told.count("\n")
    head = "\n".join(output.split("\n", room)[:room])
    head = head.encode("utf-8")[: MAX_BYTES - len(told.encode("utf-8"))].decode("utf-8", errors="ignore")
    text = head + told
    return {"output": text, "truncated": True, "size": len(data), "lines": lines, "path": path}
