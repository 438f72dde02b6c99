"""The compiled-rule cache: rules source → checked program, kept on disk between runs.

Like jinja2's bytecode cache, and like CPython's own ``.pyc`` files: the key is what the program
depends on — the cache format, the Python version, and the path, size and modification time of
the grammar, of the compiler's modules (parser, checker, code generator), of the runtime modules
the generated code calls (evaluator, values, built-ins) and of every rules file —
and the value is the compiled program, written with ``marshal``. A hit costs a few ``stat`` calls
and one ``marshal.loads``: Lark is not imported.
The full key is stored beside the program and compared on reading, so a clash of file names
cannot hand back another rule set. A cache folder that cannot be written is no error: the rules
are then compiled on every run.
"""

from __future__ import annotations

import os
import sys

from ..cache_folder import read_record, write_record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

#: Bump when the shape of the program (the syntax tree) changes.
FORMAT = 2


def cache_key(paths: list[str], extra: str) -> str:
    # marshal'ed code objects are only good for the Python that wrote them
    parts = [f"beeuni-rules/{FORMAT}/{sys.implementation.cache_tag}/{sys.version}", extra]
    for path in paths:
        info = os.stat(path)
        parts.append(f"{os.path.abspath(path)}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts)


def read(key: str) -> Any:
    return read_record("rules", key)


def write(key: str, program: Any) -> None:
    write_record("rules", key, program)
