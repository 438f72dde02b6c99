"""Tool output that is too large for the model: stored whole in a file, its beginning answered.

The daemon keeps these files in a private folder of its own under the temporary folder,
``beeuni-spill-<pid>-<start>-<random>`` (0700; the files 0600), named by its process id and
start time: the folder is removed when the daemon stops, and a folder whose daemon is gone (a
daemon that was killed) is removed when the next daemon starts. A live daemon's folder is never
touched: a process id reused by a later process has another start time. The files of one
daemon total at most ``MAX_SPILL_TOTAL`` bytes; past it, the oldest are removed first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections import defaultdict, deque
from typing import Any

from ..engine.visible import visible

MAX_BYTES = 50 * 1024
MAX_LINES = 2000
MAX_SPILL_TOTAL = 256 * 1024 * 1024  # bytes of spilled output a daemon keeps at once
FOLDER_PREFIX = "beeuni-spill-"


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or ``None`` when
    there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def remove_stale_folders(parent: str) -> None:
    """Remove the spill folders of daemons that no longer run (only folders of this user, never
    through a link)."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(FOLDER_PREFIX):
            continue
        pid, _, rest = entry.name[len(FOLDER_PREFIX) :].partition("-")
        started, _, _ = rest.partition("-")
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or not pid.isdigit():
            continue
        if _start_time(int(pid)) != started:
            shutil.rmtree(entry.path, ignore_errors=True)


class SpillFolder:
    """One daemon's private folder of spilled outputs, bounded in total."""

    def __init__(self, limit: int = MAX_SPILL_TOTAL, parent: str | None = None, kept: str | None = None) -> None:
        """A new private folder under ``parent`` (default: the temporary folder), removed by
        ``remove``; or, with ``kept``, that folder (created 0700), which ``remove`` leaves:
        `beeuni sessions` keeps a session's outputs with its records."""
        self.owned = kept is None
        if kept is None:
            parent = parent or tempfile.gettempdir()
            remove_stale_folders(parent)
            pid = os.getpid()
            self.path = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{pid}-{_start_time(pid) or 0}-", dir=parent)
        else:
            os.makedirs(kept, mode=0o700, exist_ok=True)
            self.path = kept
        self.limit = limit
        self._files: deque[tuple[str, int]] = deque()  # oldest first
        self._total = 0

    def store(self, data: bytes, tool: str) -> str:
        """Write ``data`` to a new private file; first remove the oldest files until the total
        with it is within the limit (an output larger than the limit is kept alone)."""
        while self._files and self._total + len(data) > self.limit:
            path, size = self._files.popleft()
            self._total -= size
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        handle, path = tempfile.mkstemp(prefix=f"{tool}-", suffix=".txt", dir=self.path)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        self._files.append((path, len(data)))
        self._total += len(data)
        return path

    def remove(self) -> None:
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)


def _store_in_temp(data: bytes, tool: str) -> str:
    handle, path = tempfile.mkstemp(prefix=f"beeuni-output-{tool}-", suffix=".txt")
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
    path = folder.store(data, tool) if folder is not None else _store_in_temp(data, tool)
    # The whole answer, note included, stays within both limits: a harness that cuts at the same
    # limits (opencode does) hands the model the note too.
    told = "\n\n" + note.format_map(defaultdict(str, size=len(data), lines=lines, path=visible(path)))
    room = MAX_LINES - told.count("\n")
    head = "\n".join(output.split("\n", room)[:room])
    head = head.encode("utf-8")[: MAX_BYTES - len(told.encode("utf-8"))].decode("utf-8", errors="ignore")
    text = head + told
    return {"output": text, "truncated": True, "size": len(data), "lines": lines, "path": path}
