"""Tool output that is too large for the model: stored whole in a file, its beginning answered."""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from typing import Any

from ..engine.visible import visible

MAX_BYTES = 50 * 1024
MAX_LINES = 2000


def limit_output(output: str, tool: str, note: str) -> dict[str, Any]:
    """The answer for ``output``. Over 50 KB or 2,000 lines, the whole output goes to a private
    file in the temporary folder, and the answer holds its beginning (within both limits), its
    size, its number of lines and the file's path; ``note`` (a template with ``{size}``,
    ``{lines}`` and ``{path}``) is appended to the beginning for the model to read."""
    data = output.encode("utf-8")
    lines = output.count("\n") + (0 if output.endswith("\n") or not output else 1)
    if len(data) <= MAX_BYTES and lines <= MAX_LINES:
        return {"output": output, "truncated": False}
    handle, path = tempfile.mkstemp(prefix=f"beeuni-output-{tool}-", suffix=".txt")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    # The whole answer, note included, stays within both limits: a harness that cuts at the same
    # limits (opencode does) hands the model the note too.
    told = "\n\n" + note.format_map(defaultdict(str, size=len(data), lines=lines, path=visible(path)))
    room = MAX_LINES - told.count("\n")
    head = "\n".join(output.split("\n", room)[:room])
    head = head.encode("utf-8")[: MAX_BYTES - len(told.encode("utf-8"))].decode("utf-8", errors="ignore")
    text = head + told
    return {"output": text, "truncated": True, "size": len(data), "lines": lines, "path": path}
