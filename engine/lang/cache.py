"""The compiled-rule cache: rules source → checked program, kept on disk between runs.

Like jinja2's bytecode cache: the key is a hash of everything the program depends on (the
language's version, the grammar, every rules file's name and bytes), the value the checked
program written with ``marshal``. A hit costs reading the sources, one hash and one
``marshal.loads`` — Lark is not imported. A cache folder that cannot be written is no error:
the rules are then compiled on every run.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

#: Bump when the shape of the program (the syntax tree) changes.
FORMAT = 1

_ENV_VAR = "BEEUNI_CACHE_DIR"


def cache_dir() -> Path:
    configured = os.environ.get(_ENV_VAR)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "beeuni"


def cache_key(sources: list[tuple[str, bytes]], grammar: bytes) -> str:
    digest = hashlib.sha256(f"beeuni-rules/{FORMAT}\0".encode())
    digest.update(grammar)
    for name, data in sources:
        digest.update(b"\0" + name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:32]


def read(key: str) -> Any | None:
    try:
        data = (cache_dir() / f"rules-{key}.marshal").read_bytes()
        return marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write(key: str, program: Any) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".rules-", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(marshal.dumps(program))
        os.replace(temporary, folder / f"rules-{key}.marshal")
    except OSError:
        pass
