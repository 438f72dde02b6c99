"""How a module's process starts: Bun running ``host.ts``, its channel on fd 3 (a socket pair),
a scrubbed environment, a private temporary folder as its home, a process group of its own, and
— where the kernel has Landlock — a ruleset of its own (``confine.py``).

What a confined process may open:

* read and execute: the system's programs, libraries and certificates (``SYSTEM_READ``), Bun's own
  files, ``host.ts``, the folders of the modules it may load and every ``node_modules`` folder
  beside or above them (where Bun resolves packages), its own ``/proc/self``;
* read and write: the repository (tools keep their files below it), its temporary folder and
  ``/dev/null``;
* list (names only, never contents): every folder — Bun's resolver lists each folder from a
  module's up to ``/`` in search of ``node_modules``, and a Landlock rule on ``/`` is the only
  rule that covers every such folder;
* nothing else: not the state folder (``secrets.json``, the sessions' records) even when it lies inside
  the repository, not the user's home, not another process's ``/proc`` entry, not another call's
  temporary folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from fcntl import F_GETFD, FD_CLOEXEC, fcntl

from ..engine.paths import upward
from . import confine

HOST_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host.ts")
CHANNEL_FD = 3
SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_READ = (
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/opt",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts", "/etc/host.conf",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/localtime", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/dev/urandom", "/dev/random", "/dev/zero",
)  # fmt: skip
DEVICES_WRITE = ("/dev/null",)
LISTED = ("/",)  # directory listings only (see above)


@dataclass(frozen=True)
class Confinement:
    """What every module process of a session may open; ``abi`` 0 means Landlock is missing
    (``missing`` says why) and processes run with the scrubbed environment only."""

    abi: int
    missing: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    cwd: str


def landlock_missing() -> tuple[int, str]:
    """The Landlock ABI and, when it is 0, why."""
    if os.environ.get("BEEUNI_LANDLOCK") == "off":
        return 0, "BEEUNI_LANDLOCK=off"
    version = confine.abi()
    return version, "" if version else "the kernel has no Landlock"


def confinement_for(bun: str, repo_root: str, modules: Iterable[str], hidden: Iterable[str]) -> Confinement:
    """The session's confinement: ``modules`` are the absolute module paths it may load, ``hidden``
    the folders a module must never open even inside the repository."""
    version, missing = landlock_missing()
    root = os.path.realpath(repo_root)
    hidden = [os.path.realpath(h) for h in hidden]
    read = set(SYSTEM_READ)
    read.add(os.path.dirname(os.path.realpath(bun)))
    read.add(os.path.dirname(os.path.realpath(HOST_SCRIPT)))
    for module in modules:
        folder = os.path.dirname(os.path.realpath(module))
        read.add(folder)
        read.update(_node_modules_above(folder))
    read.update(_node_modules_above(root))
    write = confine.allowed_around(root, hidden)
    return Confinement(version, missing, tuple(sorted(read)), tuple(write), repo_root)


def _node_modules_above(folder: str) -> list[str]:
    found = (os.path.join(above, "node_modules") for above in upward(folder))
    return [candidate for candidate in found if os.path.isdir(candidate)]


def environment(folder: str) -> dict[str, str]:
    """All a module's process gets of an environment: a search path, its temporary folder as home
    and temp, a UTF-8 locale. (``context.env`` carries the agent's secrets; never ``process.env``.)"""
    return {
        "PATH": SEARCH_PATH,
        "HOME": folder,
        "TMPDIR": folder,
        "LANG": "C.UTF-8",
        "BUN_RUNTIME_TRANSPILER_CACHE_PATH": "0",  # no cache to write: each process starts fresh
    }


@dataclass
class Started:
    process: subprocess.Popen[bytes]
    channel: socket.socket  # the daemon's end of the socket pair
    folder: str


def start(bun: str, confinement: Confinement, folder: str, log: int) -> Started:
    """Start a module process with ``folder`` as its private temporary folder; its fd 1 and 2 go
    to ``log`` (a pipe's write end, or ``subprocess.DEVNULL``)."""
    ruleset = _ruleset(confinement, folder) if confinement.abi else None
    ours, theirs = socket.socketpair()

    def before_exec() -> None:  # in the child, between fork and exec
        if ruleset is not None:  # first: the ruleset's descriptor may be the number fd 3 takes
            confine.restrict(ruleset.fd)
        if theirs.fileno() == CHANNEL_FD:
            os.set_inheritable(CHANNEL_FD, True)
        else:
            os.dup2(theirs.fileno(), CHANNEL_FD)
        _close_inherited()

    try:
        process = subprocess.Popen(
            [bun, "--no-install", HOST_SCRIPT],  # packages come from node_modules, never the network
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=confinement.cwd,
            env=environment(folder),
            close_fds=False,  # fd 3 must survive; _close_inherited closes the rest
            start_new_session=True,  # its own process group: killed as one
            preexec_fn=before_exec,
        )
    finally:
        theirs.close()
        if ruleset is not None:
            ruleset.close()
    return Started(process, ours, folder)


def _ruleset(confinement: Confinement, folder: str) -> confine.Ruleset:
    ruleset = confine.Ruleset(confinement.abi)
    for path in confinement.read:
        ruleset.allow(path, confine.READ)
    for path in (*confinement.write, *DEVICES_WRITE, folder):
        ruleset.allow(path, confine.WRITE)
    for path in LISTED:
        ruleset.allow(path, confine.READ_DIR)
    return ruleset


def _close_inherited() -> None:
    """Close every descriptor above fd 3 that would survive exec (Python opens its own with
    close-on-exec; a library's might not be)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > CHANNEL_FD:
            try:
                if not fcntl(fd, F_GETFD) & FD_CLOEXEC:
                    os.close(fd)
            except OSError:
                pass


def last_pid() -> int:
    """The number the kernel gave the newest process (of this process's pid namespace)."""
    with open("/proc/sys/kernel/ns_last_pid") as last:
        return int(last.read())


def group_members(leader: int, since: int) -> list[int]:
    """The processes in ``leader``'s process group, other than itself, started after ``since``
    was the last process number (``last_pid``): what a call left running. Only entries of
    ``/proc`` numbered above ``since`` are read, unless the numbers wrapped around meanwhile;
    what earlier calls started was killed after them."""
    wrapped = last_pid() < since
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or (int(name) <= since and not wrapped):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == leader and int(name) != leader:
            members.append(int(name))
    return members
