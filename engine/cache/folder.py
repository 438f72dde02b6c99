"""Where beeuni keeps its caches (the compiled rules, the results of checks): ``$BEEUNI_CACHE_DIR``,
else ``$XDG_CACHE_HOME/beeuni``, else ``~/.cache/beeuni``; and how a record is kept there.

A record is one ``marshal`` file named by its kind and a checksum of its key, holding the key
beside the value: a record whose stored key is not the key asked for (a CRC collision, another
version's file) is a miss, as is one that cannot be read. Records are written to a temporary
file of the writing process, then renamed into place; a folder that cannot be written, or a value
``marshal`` does not take, leaves no record.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

CACHE_DIR_VARIABLE = "BEEUNI_CACHE_DIR"
#: the largest prime below 2**32: a record's checksum is its key, read as one number, modulo it —
#: as good a file name as a CRC-32 (a clash is a miss), without loading ``binascii`` or ``zlib``,
#: each a shared library, on every run
_CHECKSUM_MODULUS = 0xFFFFFFFB


def blake2b(data: bytes) -> Any:
    """A BLAKE2b hash object of ``data`` (20 bytes), from the C module itself: ``hashlib`` loads
    OpenSSL on import, several times the cost of hashing what a run hashes."""
    try:
        from _blake2 import blake2b as made
    except ImportError:  # a Python built without it
        from hashlib import blake2b as made
    return made(data, digest_size=20)


def cache_dir() -> str:
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "beeuni")


def record_file(kind: str, key: str) -> str:
    checksum = int.from_bytes(key.encode(), "little") % _CHECKSUM_MODULUS
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
        # a temporary file of this process's own (no `tempfile`: its import costs more than a hit)
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
