"""``beeuni init [PATH]``: a new project's manifest, as the design document's first example.

The text is the rules' (``INIT_MANIFEST`` in commands.rules: the Beeuni tools under ``tools:``
and the session agent), and so are the refusal and the summary. A manifest that is there is
never overwritten: the new one is written beside it under a temporary name and linked into
place, which fails when anything stands at the manifest's name — even one made a moment ago.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from ..engine.lang.values import text
from ..engine.paths import MANIFEST_NAME
from ..engine.printable import printable
from ..engine.project import rules_only
from .shared import EXIT_FAILURE, EXIT_OK, UsageError

#: what the command reads of the rules
READ = ("INIT_MANIFEST",)
CALLED = ("init_refusal", "init_summary")


def init(path: str, rules: str | None) -> int:
    run = rules_only(rules)
    missing = [name for name in READ if name not in run.program["lets"]]
    missing += [name for name in CALLED if name not in run.program["fns"]]
    if missing:
        raise UsageError(f"the rules define no {', '.join(missing)}, which `beeuni init` reads")
    manifest = os.path.normpath(os.path.join(path, MANIFEST_NAME))
    if os.path.lexists(path) and not os.path.isdir(path):
        return _refuse(text(run.call("init_refusal", "not-folder", path)))
    if os.path.lexists(manifest):
        return _refuse(text(run.call("init_refusal", "exists", manifest)))
    os.makedirs(path, exist_ok=True)
    if not _write_new(manifest, text(run.output("INIT_MANIFEST")).encode("utf-8")):
        return _refuse(text(run.call("init_refusal", "exists", manifest)))
    folder = None if os.path.normpath(path) == os.curdir else path
    for line in run.call("init_summary", manifest, folder):
        sys.stdout.write(printable(text(line)) + "\n")
    return EXIT_OK


def _refuse(message: str) -> int:
    sys.stderr.write(f"beeuni: {printable(message)}\n")
    return EXIT_FAILURE


def _write_new(target: str, data: bytes) -> bool:
    """Write ``target`` whole, only where nothing is: False when something is there."""
    handle, scratch = tempfile.mkstemp(prefix=".beeuni-init-", dir=os.path.dirname(os.path.abspath(target)))
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(scratch, 0o666 & ~_umask())
        try:
            os.link(scratch, target, follow_symlinks=False)
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: created exclusively instead
            return _create_exclusively(target, data)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(scratch)


def _create_exclusively(target: str, data: bytes) -> bool:
    try:
        handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        return False
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    return True


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
