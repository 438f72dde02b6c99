"""Landlock for the module host's processes: a short ctypes binding of the three system calls.

Why not a package: of the Landlock bindings on PyPI, ``landlock`` is a pre-release without scopes,
the others are months old; and the module host needs a split they do not offer — the ruleset is
built in the daemon (where a failure can be reported), only ``restrict`` runs in the child between
``fork`` and ``exec`` (``preexec_fn``), where nothing may fail loudly.

Landlock is an allow-list: a confined process may open only what a rule allows, below the rule's
path. There is no "deny" rule, so a secret folder inside an allowed one (the state folder inside
the repository, in tests) is kept out by allowing its siblings instead (``allowed_around``).

Each process gets its own domain (``landlock_restrict_self`` creates one per call), and with
ABI 6 or later its signals and abstract unix sockets are scoped to it: it cannot signal the daemon
or another call's process, nor connect to their abstract sockets.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# access rights to files, by the ABI that introduced them
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1 = (1 << 13) - 1  # ... remove, make char/dir/reg/sock/fifo/block/sym
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | _TRUNCATE | _IOCTL_DEV  # what a rule on a file may allow
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = ~0  # every right the ABI handles: create, remove, rename, truncate below the path

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]  # fmt: skip


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing."""
    version = _libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def handled(version: int) -> int:
    """Every file right the ABI ``version`` knows (all of them are denied unless a rule allows)."""
    rights = _ABI1
    if version >= 2:
        rights |= _REFER
    if version >= 3:
        rights |= _TRUNCATE
    if version >= 5:
        rights |= _IOCTL_DEV
    return rights


class Ruleset:
    """A ruleset being built in the daemon; ``fd`` goes to ``restrict`` in the child."""

    def __init__(self, version: int) -> None:
        self.rights = handled(version)
        scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= 6 else 0
        attr = _RulesetAttr(self.rights, 0, scoped)
        size = 24 if version >= 6 else 8  # the fields this ABI reads; network rights stay unhandled
        fd = _libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        self.fd = int(fd)
        os.set_inheritable(self.fd, False)  # it reaches the child's preexec by fork, never a program

    def allow(self, path: str, rights: int) -> None:
        """Allow ``rights`` below ``path``; a path that does not exist is skipped."""
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            allowed = rights & self.rights
            if not os.path.isdir(f"/proc/self/fd/{target}"):
                allowed &= _FILE_ONLY
            rule = _PathBeneath(allowed, target)
            if _libc.syscall(_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), f"{path}: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(target)

    def close(self) -> None:
        os.close(self.fd)


def restrict(ruleset_fd: int) -> None:
    """In the child, before ``exec``: no new privileges, this process's own /proc entry, then the
    ruleset. A failure raises, and the child never runs the module unconfined."""
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    own = os.open("/proc/self", os.O_PATH)  # opened here: in the daemon it would be the daemon's
    rule = _PathBeneath(READ_FILE | READ_DIR, own)
    _libc.syscall(_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
    os.close(own)
    if _libc.syscall(_RESTRICT_SELF, ruleset_fd, ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


def allowed_around(root: str, hidden: Iterable[str]) -> list[str]:
    """The paths to allow so that everything below ``root`` is reachable except ``hidden`` folders
    inside it: ``root`` itself when none is inside, else, level by level down to each hidden
    folder, the siblings of the folders on its way (a rule allows a whole tree, never less)."""
    inside = [h for h in (os.path.realpath(h) for h in hidden) if h.startswith(root.rstrip("/") + "/")]
    if not inside:
        return [root]
    allowed: list[str] = []
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return []
    for entry in entries:
        path = os.path.join(root, entry)
        below = [h for h in inside if h == path or h.startswith(path + "/")]
        if not below:
            allowed.append(path)
        elif path not in below and os.path.isdir(path) and not os.path.islink(path):
            allowed += allowed_around(path, below)
    return allowed
