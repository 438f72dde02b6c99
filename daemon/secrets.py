"""Project secrets: names and values kept outside the repository, readable only by their owner.

    <state>/projects/<project id>/secrets.json      (mode 0600, in a 0700 folder)

``<state>`` is ``$BEEUNI_STATE_DIR``, else ``$XDG_STATE_HOME/beeuni``, else
``~/.local/state/beeuni``; the project id is derived from the repository's real path. No function
here returns a value to print: values go only into a tool call's ``context.env``.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..engine.paths import write_file_atomically


def state_dir() -> str:
    configured = os.environ.get("BEEUNI_STATE_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "beeuni")


def project_dir(repo_root: str) -> str:
    """The private folder of one project's state (created 0700)."""
    digest = hashlib.sha256(os.path.realpath(repo_root).encode()).hexdigest()[:16]
    folder = os.path.join(state_dir(), "projects", digest)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def write_private(path: str, data: bytes) -> None:
    """Write a file only its owner can read, whole or not at all."""
    write_file_atomically(path, data, mode=0o600)


class SecretStore:
    def __init__(self, repo_root: str) -> None:
        self.path = os.path.join(project_dir(repo_root), "secrets.json")
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

    def set(self, name: str, value: str) -> None:
        secrets = self._read()
        secrets[name] = value
        write_private(self.path, json.dumps(secrets, sort_keys=True).encode())

    def names(self) -> list[str]:
        return sorted(self._read())

    def granted(self, grant: str | list[str]) -> dict[str, str]:
        """The values of the secrets granted: ``"all"`` or a list of names (unset ones skipped)."""
        secrets = self._read()
        if grant == "all":
            return secrets
        return {name: secrets[name] for name in grant if name in secrets}
