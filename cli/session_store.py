"""Where a project's sessions are kept: in its private state folder (``daemon/serving/secrets.py``),
never in the repository.

    <state>/projects/<project id>/
        opencode/                  the package opencode installs for the plugin, kept between turns
        opencode-*/                one turn's folders, made fresh for it and removed after it
                                   (``opencode_turn.py``): opencode/, its configuration folder,
                                   with the plugin the daemon writes (checked by its digest before
                                   opencode loads it) and the package linked in; home/, tmp/,
                                   cache/, shell/ (the commands' launcher), commands/ (their home)
        opencode-data/<key>/       a session's opencode data and state folders (its record names
                                   the key): its database, kept from turn to turn
        sessions/<id>.json         beeuni's record: agent, model, prompt, start, status, answer
        sessions/<id>.export.json  opencode's own records of the session ({info, messages}, as
                                   `opencode export` prints them), taken when it ended; on the
                                   experimental harness, the turn loop's in the same shape
        sessions/<id>.history.json the experimental harness's conversation, as the model is sent
                                   it again at the next turn
        sessions/<id>.daemon.log   what the daemon and opencode logged
        sessions/<id>.opencode.log
        outputs/                   the outputs the daemon spilled in sessions (`--spill-dir`):
                                   kept after the session, for `sessions log`

Every file is written whole or not at all, readable by its owner only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from ..daemon.serving.secrets import project_dir, write_private
from .opencode_turn import SessionData, TurnFolders

RECORD_SUFFIX = ".json"
#: what opencode writes into its configuration folder when it installs the plugin's package
PACKAGE_FILES = ("package.json", "package-lock.json", "bun.lock")
EXPORT_SUFFIX = ".export.json"
HISTORY_SUFFIX = ".history.json"
LOG_NAMES = ("daemon", "opencode")


class SessionStore:
    def __init__(self, repo_root: str) -> None:
        self.folder = os.path.join(project_dir(repo_root), "sessions")
        self.opencode_dir = os.path.join(project_dir(repo_root), "opencode")
        self.outputs_dir = os.path.join(project_dir(repo_root), "outputs")
        os.makedirs(self.folder, mode=0o700, exist_ok=True)

    @contextmanager
    def starting(self) -> Iterator[None]:
        """Held while a session starts: from the daemon's start until opencode has loaded the
        project's configuration folder (one per project, where the daemon writes the plugin and
        opencode installs the plugin's package), so that two sessions starting at once do not
        write it together."""
        descriptor = os.open(os.path.join(self.folder, ".start.lock"), os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:  # released here, not at the close: a process started meanwhile may share the file
                fcntl.flock(lock, fcntl.LOCK_UN)

    def open_log(self, name: str, session_id: str, append: bool = False) -> IO[bytes]:
        """A new log file (or, for a later turn, the session's, appended to), readable by its owner
        only."""
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        return os.fdopen(os.open(self.log_path(name, session_id), flags, 0o600), "wb")

    def fresh_turn(self) -> TurnFolders:
        """New folders for one turn's opencode (``opencode_turn.py``), so that nothing an earlier
        turn or session left there loads: its configuration folder empty but for the package
        opencode installs for plugins, linked from where it is kept between turns."""
        turn = TurnFolders(tempfile.mkdtemp(prefix="opencode-", dir=os.path.dirname(self.opencode_dir)))
        turn.make()
        self.link_package(turn.config)
        return turn

    def opencode_data(self, key: str) -> SessionData:
        """opencode's data and state folders of the session whose record names ``key``."""
        if not key.isalnum():
            raise ValueError(f"not a folder's key: {key!r}")
        return SessionData(os.path.join(os.path.dirname(self.opencode_dir), "opencode-data", key))

    def link_package(self, folder: str) -> None:
        """Link the package kept between turns into the configuration folder ``folder``, with the
        files that say it is installed."""
        os.makedirs(os.path.join(self.opencode_dir, "node_modules"), mode=0o700, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.symlink(os.path.join(self.opencode_dir, "node_modules"), os.path.join(folder, "node_modules"))
        for name in PACKAGE_FILES:
            with contextlib.suppress(OSError):
                shutil.copyfile(os.path.join(self.opencode_dir, name), os.path.join(folder, name))

    def log_path(self, name: str, session_id: str) -> str:
        return os.path.join(self.folder, f"{session_id}.{name}.log")

    def ids(self) -> list[str]:
        """The ids of the sessions kept (in no particular order)."""
        return [
            entry[: -len(RECORD_SUFFIX)]
            for entry in os.listdir(self.folder)
            if entry.endswith(RECORD_SUFFIX)
            and not entry.endswith((EXPORT_SUFFIX, HISTORY_SUFFIX))
            and not entry.startswith(".")
        ]

    def write(self, record: dict[str, Any]) -> None:
        path = os.path.join(self.folder, str(record["id"]) + RECORD_SUFFIX)
        write_private(path, json.dumps(record, indent=2, sort_keys=True).encode())

    def read(self, session_id: str, suffix: str = RECORD_SUFFIX) -> dict[str, Any] | None:
        """beeuni's record of a session, or with ``EXPORT_SUFFIX`` opencode's (None for an id it
        does not keep, or a broken file)."""
        if session_id not in self.ids():  # nor a path elsewhere
            return None
        try:
            with open(os.path.join(self.folder, session_id + suffix), encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            return None
        return document if isinstance(document, dict) else None

    def records(self) -> list[dict[str, Any]]:
        found = (self.read(session_id) for session_id in self.ids())
        return [record for record in found if record is not None]

    def write_export(self, session_id: str, export: dict[str, Any]) -> None:
        path = os.path.join(self.folder, session_id + EXPORT_SUFFIX)
        write_private(path, json.dumps(export, indent=1, sort_keys=True).encode())

    def read_export(self, session_id: str) -> dict[str, Any] | None:
        return self.read(session_id, EXPORT_SUFFIX)

    def write_history(self, session_id: str, history: list[Any]) -> None:
        path = os.path.join(self.folder, session_id + HISTORY_SUFFIX)
        write_private(path, json.dumps({"messages": history}).encode())

    def read_history(self, session_id: str) -> list[Any]:
        """The experimental harness's conversation so far (``[]`` before the first turn)."""
        document = self.read(session_id, HISTORY_SUFFIX)
        found = document.get("messages") if document is not None else None
        return found if isinstance(found, list) else []
