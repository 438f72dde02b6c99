"""The compiled-rule cache: rules source → checked program, kept on disk between runs.

Like jinja2's bytecode cache: the key is what the program depends on — the cache format, the
interface it was checked against, and the **content** of the grammar, of the compiler's modules
(parser, checker, code generator), of the runtime modules the generated code calls (evaluator,
values, built-ins) and of every rules file (``content_digest``: a copied or touched file with
the same bytes is the same program; an edit within the same second is not missed) — plus the
Python that wrote it (``marshal``'ed code objects are only good for it) and the rules folder (its
interface checks look at the folder's other files). The value is the compiled program, written
with ``marshal``. A hit costs reading the sources once and one ``marshal.loads``: Lark is not
imported. The full key is stored beside the program and compared on reading, so a clash of file
names cannot hand back another rule set. A cache folder that cannot be written is no error: the
rules are then compiled on every run.

The shipped rules need no cache: the wheel carries them compiled (``precompiled.py``), under the
same ``content_digest``.
"""

from __future__ import annotations

import os
import sys
from hashlib import blake2b

#: Bump when the shape of the program (the syntax tree) changes.
FORMAT = 3


def content_digest(paths: list[str], extra: str) -> str:
    """A digest of ``extra`` and of each file's name and bytes, in order."""
    digest = blake2b(f"beeuni-rules/{FORMAT}\n{extra}\n".encode(), digest_size=20)
    for index, path in enumerate(paths):
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(f"{index}:{os.path.basename(path)}:{len(data)}\n".encode())
        digest.update(data)
    return str(digest.hexdigest())


def cache_key(digest: str, folder: str) -> str:
    """The rule cache's key of a program of ``content_digest`` compiled from ``folder``."""
    return f"{sys.implementation.cache_tag}/{sys.version}\n{os.path.abspath(folder)}\n{digest}"
