"""Where beeuni keeps its caches (the compiled rules): ``$BEEUNI_CACHE_DIR``,
else ``$XDG_CACHE_HOME/beeuni``, else ``~/.cache/beeuni``; and how a record is kept there.

A record is one ``marshal`` file named by its kind and the CRC-32 of its key, holding the key
beside the value: a record whose stored key is not the key asked for (a CRC collision, another
version's file) is a miss, as is one that cannot be read. Records are written to a temporary
file of the writing process, then renamed into place; a folder that cannot be written, or a value
``marshal`` does not take, leaves no record.
"""

from __future__ import annotations

import marshal
import os
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

CACHE_DIR_VARIABLE = "BEEUNI_CACHE_DIR"


def cache_dir() -> str:
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "beeuni")


def record_file(kind: str, key: str) -> str:
    checksum = zlib.crc32(key.encode())
    return os.path.join(cache_dir(), f"{kind}-{checksum:08x}.marshal")


def read_record(kind: str, key: str) -> Any:
    """The value kept under ``key``, or None."""
    try:
        with open(record_file(kind, key), "rb") as handle:
            stored_key, value = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return value if stored_key == key else None


def write_record(kind: str, key: str, value: Any) -> None:
    try:
        data = marshal.dumps((key, value))
        os.makedirs(cache_dir(), exist_ok=True)
        target = record_file(kind, key)
        # a temporary file of this process's own
        temporary = f"{target}.{os.getpid()}.tmp"
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, ValueError):
        pass
