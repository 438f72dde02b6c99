"""The module host's channel: frames of a 4-byte big-endian length and that many bytes. A reader
checks a frame's length against its cap before it reads a byte of it, so nothing a module sends
makes the daemon read or hold more than the cap."""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the load process imports this module, and no event loop
    import asyncio

HEADER = struct.Struct(">I")
MAX_MESSAGE = 16 * 1024 * 1024  # a JSON frame: a load report, an error; an output is a raw frame


class BadFrame(Exception):
    """The other side sent something that is no frame of the protocol."""


class TooLarge(Exception):
    """A frame longer than the reader's cap; ``size`` is its announced length."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def encode(message: Any) -> bytes:
    """One JSON frame. Raises ``ValueError`` for what strict JSON cannot carry (NaN, Infinity) and
    ``RecursionError`` for nesting deeper than Python can walk."""
    data = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    return HEADER.pack(len(data)) + data


def decode(data: bytes) -> dict[str, Any]:
    """A JSON frame's message: an object, or ``BadFrame``."""
    try:
        message = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise BadFrame(str(err)) from None
    if not isinstance(message, dict):
        raise BadFrame("not an object")
    return message


async def read_raw(reader: asyncio.StreamReader, cap: int) -> bytes:
    """The next frame's bytes; ``TooLarge`` past ``cap``, ``asyncio.IncompleteReadError`` at the end."""
    (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    if size > cap:
        raise TooLarge(size)
    return await reader.readexactly(size)


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    try:
        return decode(await read_raw(reader, MAX_MESSAGE))
    except TooLarge as err:
        raise BadFrame(f"a frame of {err.size} bytes") from None


def split(buffer: bytes) -> tuple[list[dict[str, Any]], bytes]:
    """The whole JSON frames at the start of ``buffer`` and what follows them (for a reader that
    collects bytes itself, like the probe's watchdog)."""
    messages = []
    while len(buffer) >= HEADER.size:
        (size,) = HEADER.unpack_from(buffer)
        if size > MAX_MESSAGE:
            raise BadFrame(f"a frame of {size} bytes")
        if len(buffer) < HEADER.size + size:
            break
        messages.append(decode(buffer[HEADER.size : HEADER.size + size]))
        buffer = buffer[HEADER.size + size :]
    return messages, buffer
