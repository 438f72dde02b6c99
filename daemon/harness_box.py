"""The standard harness's box: opencode, and every command its model runs (its shell tool), reach what a
tool module reaches and no more.

A module's process is confined by the daemon (``sandbox.py``); opencode is started by whoever
starts the session, and its model's commands are its children. ``beeuni sessions`` starts it in a
box made of the same pieces, applied between ``fork`` and ``exec`` and inherited by everything it
starts: no capabilities (``capabilities.py``), the syscall filter (``syscall_filter.py``) and —
where the kernel has Landlock — a ruleset (``confine.py``) that allows

* read and execute: the system's programs and libraries (``sandbox.SYSTEM_READ``, and the few
  files of ``/etc`` a shell and git read, ``ETC_READ``), and the paths the starter names
  (opencode's own install, beeuni's for the plugin's zod, the release's configuration);
* read and write: the workspace — but for what is ``hidden`` (the state folder with the secrets,
  when it lies inside) and what is ``protected``, read only (git's folder) —, and the folders the
  starter names (opencode's data, the turn's own folders), ``/dev/null``;
* nothing else: not the state folder, not the daemon's private folder (its release copy, its
  plugin, its spilled outputs), not the user's home, not another process's ``/proc`` entry; no
  folder is even listed outside what is allowed (unlike a module's process, which Bun's resolver
  makes list every folder).

With Landlock's ABI 6 or later the box also scopes signals and abstract unix sockets: nothing in
it signals the runner or the daemon, or connects to an abstract socket made outside it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import capabilities, confine, syscall_filter
from .sandbox import DEVICES_WRITE, SYSTEM_READ, landlock_missing

#: what a shell, git and opencode read of /etc beyond the module's system files: the users and
#: groups (whoami, opencode's user name) and git's system configuration (git refuses to run when
#: it exists and cannot be read)
ETC_READ = ("/etc/passwd", "/etc/group", "/etc/gitconfig")
DEVICES = ("/dev/tty", "/dev/full")


@dataclass(frozen=True)
class HarnessBox:
    """What the harness may open; ``missing`` says why Landlock is not used (empty when it is)
    or why the syscall filter is not (``filter_missing``)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    abi: int
    missing: str
    filter_missing: str

    def preparer(self) -> Callable[[], None]:
        """A function to run in the child between ``fork`` and ``exec`` (``preexec_fn``) that
        puts the process in the box; the ruleset is built now, in the starter, where a failure
        raises. A failure in the child raises there, and the harness never runs outside it."""
        ruleset = self._ruleset() if self.abi else None
        drop, syscalls = capabilities.planned(), syscall_filter.planned()

        def before_exec() -> None:
            drop.apply()
            if syscalls is not None:
                syscalls.load()
            if ruleset is not None:
                confine.restrict(ruleset.fd)

        return before_exec

    def _ruleset(self) -> confine.Ruleset:
        ruleset = confine.Ruleset(self.abi)
        for path in self.read:
            ruleset.allow(path, confine.READ)
        for path in self.write:
            ruleset.allow(path, confine.WRITE)
        return ruleset


def harness_box(
    workspace: str,
    hidden: Iterable[str],
    protected: Iterable[str],
    read: Iterable[str] = (),
    write: Iterable[str] = (),
) -> HarnessBox:
    """The box for a harness working in ``workspace``: ``hidden`` paths inside it neither read
    nor written, ``protected`` ones only read; ``read`` and ``write`` the other paths it may
    read, or read and write (a path that does not exist is left out)."""
    root = os.path.realpath(workspace)
    hidden = [os.path.realpath(path) for path in hidden]
    protected = [os.path.realpath(path) for path in protected]
    readable = {*SYSTEM_READ, *ETC_READ, *(os.path.realpath(path) for path in read)}
    readable.update(confine.allowed_around(root, hidden))
    writable = {*DEVICES_WRITE, *DEVICES, *(os.path.realpath(path) for path in write)}
    writable.update(confine.allowed_around(root, hidden + protected))
    abi, missing = landlock_missing()
    return HarnessBox(tuple(sorted(readable)), tuple(sorted(writable)), abi, missing, syscall_filter.missing())
