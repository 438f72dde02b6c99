"""The compiled-rule cache: rules source → checked program, kept on disk between runs.

Like jinja2's bytecode cache, and like CPython's own ``.pyc`` files: the key is what the program
depends on — the cache format, the Python version, and the path, size and modification time of
the grammar, of the compiler's modules (parser, checker, code generator) and of every rules file —
and the value is the compiled program, written with ``marshal``. A hit costs a few ``stat`` calls
and one ``marshal.loads``: Lark is not imported.
The full key is stored beside the program and compared on reading, so a clash of file names
cannot hand back another rule set. A cache folder that cannot be written is no error: the rules
are then compiled on every run.
"""

from __future__ import annotations

import binascii  # its crc32 is zlib's, and PyYAML has loaded it already (through base64): no zlib to load
import marshal
import os
import sys

from ..cache_folder import cache_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

#: Bump when the shape of the program (the syntax tree) changes.
FORMAT = 1


def cache_key(paths: list[str], extra: str) -> str:
    # marshal'ed code objects are only good for the Python that wrote them
    parts = [f"beeuni-rules/{FORMAT}/{sys.implementation.cache_tag}/{sys.version}", extra]
    for path in paths:
        info = os.stat(path)
        parts.append(f"{os.path.abspath(path)}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts)


def _file(key: str) -> str:
    return os.path.join(cache_dir(), f"rules-{binascii.crc32(key.encode()):08x}.marshal")


def read(key: str) -> Any:
    try:
        with open(_file(key), "rb") as handle:
            stored_key, program = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return program if stored_key == key else None


def write(key: str, program: Any) -> None:
    import tempfile

    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".rules-", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(marshal.dumps((key, program)))
        os.replace(temporary, _file(key))
    except (OSError, ValueError):
        pass
