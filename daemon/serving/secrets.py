"""Project secrets: names and values kept outside the repository, readable only by their owner.

    <state>/projects/<project id>/secrets.json      (mode 0600, in a 0700 folder)

``<state>`` is ``$BEEUNI_STATE_DIR``, else ``$XDG_STATE_HOME/beeuni``, else
``~/.local/state/beeuni``; the project id is derived from the repository's real path. No function
here returns a value to print: values go only into a tool call's ``context.env``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable

from ...engine.cache.folder import cache_dir
from ...engine.paths import write_file_atomically


def state_dir() -> str:
    configured = os.environ.get("BEEUNI_STATE_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "beeuni")


def hidden_from_boxes() -> list[str]:
    """What no box may open, even inside the working tree: the state folder (the secrets) and
    beeuni's cache folder (the compiled rules its next run reads)."""
    return [state_dir(), cache_dir()]


def project_dir(repo_root: str, state: str | None = None) -> str:
    """The private folder of one project's state (created 0700), in ``state`` (default:
    ``state_dir()``)."""
    digest = hashlib.sha256(os.path.realpath(repo_root).encode()).hexdigest()[:16]
    folder = os.path.join(state or state_dir(), "projects", digest)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def write_private(path: str, data: bytes) -> None:
    """Write a file only its owner can read, whole or not at all."""
    write_file_atomically(path, data, mode=0o600)


class SecretStore:
    """The project's secrets. Every change is a locked read-modify-write (``update``): writers in
    parallel (`secrets set` in twenty shells) each see the others' changes, none is lost."""

    def __init__(self, repo_root: str) -> None:
        folder = project_dir(repo_root)
        self.path = os.path.join(folder, "secrets.json")
        self._lock_path = os.path.join(folder, "secrets.lock")
        self._cache: tuple[tuple[int, int], dict[str, str]] | None = None

    def _read(self) -> dict[str, str]:
        """The stored secrets, read again only when the file changed (a `secrets set` while the
        daemon runs is seen by the next call)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return {}
        stamp = (info.st_mtime_ns, info.st_size)
        if self._cache is None or self._cache[0] != stamp:
            with open(self.path, encoding="utf-8") as handle:
                self._cache = (stamp, json.load(handle))
        return dict(self._cache[1])

    def update(self, change: Callable[[dict[str, str]], dict[str, str]]) -> dict[str, str]:
        """Replace the secrets by ``change`` of them, holding the store's lock from the read to
        the (atomic) write: a change made meanwhile by another process is never overwritten. The
        secrets as they were before the change."""
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            self._cache = None  # the file as it is now, under the lock
            current = self._read()
            changed = change(dict(current))
            if changed != current:  # an unchanged store is not written (`secrets rm` of no secret)
                write_private(self.path, json.dumps(changed, sort_keys=True).encode())
        finally:
            os.close(descriptor)  # closing releases the lock
        return current

    def set(self, name: str, value: str) -> None:
        self.update(lambda secrets: {**secrets, name: value})

    def remove(self, name: str) -> bool:
        """Remove a secret; whether it was there."""
        return name in self.update(lambda secrets: {key: value for key, value in secrets.items() if key != name})

    def names(self) -> list[str]:
        return sorted(self._read())

    def granted(self, grant: str | list[str]) -> dict[str, str]:
        """The values of the secrets granted: ``"all"`` or a list of names (unset ones skipped)."""
        secrets = self._read()
        if grant == "all":
            return secrets
        return {name: secrets[name] for name in grant if name in secrets}
