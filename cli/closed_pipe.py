"""A closed pipe ends the command quietly, as other Unix tools do: once the reader of standard
output (or error) has gone — ``beeuni validate --format github | head -1`` — what is written there
is dropped, and the command ends with the exit status of its check, not with a broken pipe."""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from _typeshed import ReadableBuffer


class _DroppingPipe(io.RawIOBase):
    """A file descriptor written as is until the reader has gone; from then on, written to
    nowhere."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._gone = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: ReadableBuffer) -> int:
        if not self._gone:
            try:
                return os.write(self._fd, data)
            except BrokenPipeError:
                self._gone = True
        return memoryview(data).nbytes


def _dropping(stream: TextIO) -> TextIO:
    """``stream``, written through a ``_DroppingPipe``; a terminal, or a stream without a file
    descriptor (a test's capture), as it is."""
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return stream
    except (AttributeError, OSError, ValueError):
        return stream
    stream.flush()
    raw = _DroppingPipe(fd)
    line_buffering = bool(stream.line_buffering)
    write_through = getattr(stream, "write_through", False)
    if isinstance(getattr(stream, "buffer", None), io.BufferedIOBase):
        buffered = io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, stream.encoding, stream.errors, None, line_buffering, write_through)
    # unbuffered, as the stream was (PYTHONUNBUFFERED: a log is read as it is written); a text
    # layer straight over a raw file, as Python's own unbuffered stdio is (typeshed wants a buffer)
    return io.TextIOWrapper(raw, stream.encoding, stream.errors, None, line_buffering, write_through)  # type: ignore[type-var]


def drop_output_once_the_reader_leaves() -> None:
    """Standard output and error from now on: written until their reader has gone."""
    sys.stdout = _dropping(sys.stdout)
    sys.stderr = _dropping(sys.stderr)
