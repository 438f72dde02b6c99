"""The load reports of a release, kept between the daemon's starts.

Each module is loaded in a Bun process of its own (``probe.py``): a realm is not an address space,
and a module that reads and writes its process's address space (``bun:ffi``) would reach another module's
report in a shared one. A process costs some 12 ms of CPU per module, at every start — and a
session starts a daemon at each turn, on the same release. A release's files are fixed by its
commit, so the facts its modules gave are kept in the project's state folder (out of every box's
reach), under a key that names everything they depend on: each file of the release copy with its
git object and mode, the tools' modules and their paths, the harness modules' bytes, Bun's program,
the host's own scripts and the time limit. A start on a release already loaded takes its facts
without starting Bun for them.

Only a load where every module loaded is kept: one that timed out or whose process crashed (a
busy machine, a signal) is loaded again next time, and an error names the copy's folder of its
start. A copy of a folder outside git (no objects) is
never kept. At most ``KEPT`` reports are kept, the oldest removed first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from ..serving.secrets import project_dir, write_private

if TYPE_CHECKING:
    from ...engine.release.snapshot import Snapshot

KEPT = 16  # reports kept per project
FOLDER = "load-reports"
HOST_FILES = ("probe_host.ts", "probe_realm.ts")  # what loads a module for its report


def release_key(snapshot: Snapshot | None, modules: dict[str, str], bun: str, limit: float) -> str | None:
    """The key of these modules' load report in this release, or None when it is not kept (the
    working tree, or a copy without git objects)."""
    if snapshot is None or not snapshot.objects:
        return None
    digest = hashlib.sha256()
    for path, (mode, obj) in sorted(snapshot.objects.items()):
        digest.update(f"{path}\0".encode() + mode + b"\0" + obj + b"\n")
    copy = snapshot.folder.rstrip("/") + "/"
    for name, module in sorted(modules.items()):
        if module.startswith(copy):  # the copy's folder is made anew at each start
            digest.update(f"module\0{name}\0{module[len(copy) :]}\n".encode())
        else:  # a harness module, beside the rules
            digest.update(f"module\0{name}\0{module}\n".encode() + _file_digest(module))
    here = os.path.dirname(os.path.abspath(__file__))
    for name in HOST_FILES:
        digest.update(_file_digest(os.path.join(here, name)))
    digest.update(_program(bun).encode())
    digest.update(f"limit\0{limit!r}".encode())
    return digest.hexdigest()


def read(repo_root: str, key: str) -> list[dict[str, Any]] | None:
    """The facts kept under ``key``, or None."""
    try:
        with open(os.path.join(project_dir(repo_root), FOLDER, key + ".json"), encoding="utf-8") as handle:
            facts = json.load(handle)
    except (OSError, ValueError):
        return None
    return facts if isinstance(facts, list) and all(isinstance(fact, dict) for fact in facts) else None


def keep(repo_root: str, key: str, facts: list[dict[str, Any]]) -> None:
    """Keep ``facts`` under ``key`` when every module loaded (and remove the oldest past ``KEPT``);
    a failure to write is no failure of the start."""
    if not all(fact.get("loaded") for fact in facts):
        return
    folder = os.path.join(project_dir(repo_root), FOLDER)
    with contextlib.suppress(OSError):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        write_private(os.path.join(folder, key + ".json"), json.dumps(facts, sort_keys=True).encode())
        kept = sorted((entry.stat().st_mtime, entry.path) for entry in os.scandir(folder) if entry.is_file())
        for _, path in kept[:-KEPT]:
            os.unlink(path)


def _file_digest(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).digest()
    except OSError:
        return b"missing"


def _program(bun: str) -> str:
    """Bun's program as a start would run it: its real path, size and time of change."""
    real = os.path.realpath(bun)
    try:
        status = os.stat(real)
    except OSError:
        return real
    return f"{real}\0{status.st_size}\0{status.st_mtime_ns}"
