"""The daemon's private folder: everything it makes for one session, outside the repository.

``beeuni-daemon-<pid>-<start>-<random>`` under the temporary folder (0700), named by the daemon's
process id and start time, holds

* ``release-N/`` — the releases the session served (``engine/release/snapshot.py``), read-only;
* ``work/`` — the module host's working folder: Bun starts there, so it reads no ``bunfig.toml``
  and no ``.env`` of the repository (``sandbox.py``);
* ``host/`` — each module process's temporary folder (its HOME and TMPDIR);
* ``spill/`` — outputs too large for the model (``output.py``), unless ``--spill-dir`` says where;
* ``opencode/plugin/`` — the standard harness's plugin (``plugin.py``), unless ``--opencode-dir``.

No tool module may write any of it (Landlock allows the module processes to read the release and
their own temporary folder only). The folder is removed when the daemon stops; the folder of a
daemon that no longer runs (one that was killed) is removed when the next daemon starts, a live
daemon's never — a process id reused by a later process has another start time.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile

PREFIX = "beeuni-daemon-"


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or ``None`` when
    there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def remove_stale_folders(parent: str) -> None:
    """Remove the private folders of daemons that no longer run (only folders of this user, never
    through a link)."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        pid, _, rest = entry.name[len(PREFIX) :].partition("-")
        started, _, _ = rest.partition("-")
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or not pid.isdigit():
            continue
        if start_time(int(pid)) != started:
            _remove(entry.path)


class PrivateFolder:
    """One daemon's private folder (or one ``beeuni tools call``'s)."""

    def __init__(self) -> None:
        parent = tempfile.gettempdir()
        remove_stale_folders(parent)
        pid = os.getpid()
        self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{pid}-{start_time(pid) or 0}-", dir=parent)
        self._releases = 0

    def folder(self, name: str) -> str:
        """The sub-folder ``name``, made (0700) when missing."""
        path = os.path.join(self.path, name)
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def next_release(self) -> str:
        """The path for the next release taken (not made yet)."""
        self._releases += 1
        return os.path.join(self.path, f"release-{self._releases}")

    def remove(self) -> None:
        _remove(self.path)


def _remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)  # a release's files are read-only, its folders are not
