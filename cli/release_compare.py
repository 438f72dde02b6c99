"""Whether files of the working tree are as a release holds them (``sessions``: opencode's
configuration, which opencode loads from the working tree beside the daemon's token)."""

from __future__ import annotations

import hashlib
import os

#: files looked at below one path, at most: past it, the rest counts as changed
MAX_FILES = 10_000


def differing(workspace: str, release_root: str, paths: list[str]) -> list[str]:
    """The repo-relative files under ``paths`` that the working tree ``workspace`` and the copy of
    the release at ``release_root`` do not hold alike (one holds it, the other not, or other
    bytes; a symbolic link counts by its target), sorted."""
    found: list[str] = []
    for path in paths:
        mine, released = _files(workspace, path), _files(release_root, path)
        found += [name for name in sorted(set(mine) | set(released)) if mine.get(name) != released.get(name)]
    return found


def _files(root: str, path: str) -> dict[str, str]:
    """Each file or link under ``root/path``, by its repo-relative path: a digest of what it holds."""
    top = os.path.join(root, path)
    if os.path.islink(top) or os.path.isfile(top):
        return {path: _digest(top)}
    found: dict[str, str] = {}
    for folder, folders, names in os.walk(top):
        for name in [*names, *(f for f in folders if os.path.islink(os.path.join(folder, f)))]:
            full = os.path.join(folder, name)
            found[os.path.relpath(full, root).replace(os.sep, "/")] = _digest(full)
            if len(found) >= MAX_FILES:
                found["…"] = "more"
                return found
    return found


def _digest(path: str) -> str:
    if os.path.islink(path):
        return "link:" + os.readlink(path)
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError as err:
        return f"unreadable: {err.strerror}"
