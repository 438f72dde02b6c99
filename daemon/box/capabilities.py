"""The module host's processes hold no capabilities, whatever user the daemon runs as.

A daemon started as root (a container's usual user) would hand its capabilities to every Bun
process it starts: ``CAP_NET_RAW`` alone lets a module read the loopback's traffic, the harness's
token included. So each process, between ``fork`` and ``exec``, drops them all:

* the bounding set, capability by capability up to ``/proc/sys/kernel/cap_last_cap``, so that no
  later ``exec`` (of a set-user-ID program, or by root) can give one back;
* the securebits that make root an ordinary user at ``exec`` (``SECBIT_NOROOT``) and forbid raising
  ambient capabilities, each locked;
* the ambient set, then the effective, permitted and inheritable sets (``capset``).

The bounding set and the securebits can only be changed while ``CAP_SETPCAP`` is held: a daemon
of an ordinary user holds none of either, its processes hold no capabilities already, and
no-new-privileges (set before Landlock and the syscall filter) keeps an ``exec`` from granting any.
Its processes in a user namespace of their own (``pid_namespace.py``) hold every capability there,
``CAP_SETPCAP`` included, and drop them all like a root daemon's.

Why ctypes and not a package: the few bindings of ``prctl``/``capset`` on PyPI (``python-prctl``,
``pyprctl``) are unmaintained for years, and these are five system calls of fixed numbers whose
plan is made in the daemon, where a failure can be reported; only ``apply`` runs in the child.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass

from ..edge.ptrace_guard import effective_capabilities

CAP_SETPCAP = 8  # <linux/capability.h>
LAST_CAP_FILE = "/proc/sys/kernel/cap_last_cap"
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_PR_CAPBSET_READ, _PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 23, 24, 28, 47, 4
# SECBIT_NOROOT and its lock, the locks of NO_SETUID_FIXUP and KEEP_CAPS (both kept off),
# NO_CAP_AMBIENT_RAISE and its lock (<linux/securebits.h>)
_SECUREBITS = 1 << 0 | 1 << 1 | 1 << 3 | 1 << 5 | 1 << 6 | 1 << 7

_libc = ctypes.CDLL(None, use_errno=True)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@dataclass(frozen=True)
class Drop:
    """What a process started by this one drops: ``bounding`` the capabilities of the bounding set
    (none without ``CAP_SETPCAP``), ``securebits`` whether they are set."""

    bounding: range
    securebits: bool

    def apply(self) -> None:
        """In the child, before ``exec``: drop every capability. A failure raises, and the child
        never runs the module with one."""
        if self.securebits:
            _checked(_libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0), "PR_SET_SECUREBITS")
        for capability in self.bounding:
            _checked(_libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "PR_CAPBSET_DROP")
        if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            _checked(-1, "PR_CAP_AMBIENT")  # EINVAL: a kernel before ambient capabilities has none to clear
        header, data = _Header(_LINUX_CAPABILITY_VERSION_3, 0), (_Data * 2)()
        _checked(_libc.capset(ctypes.byref(header), data), "capset")


def _checked(result: int, call: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{call}: {os.strerror(ctypes.get_errno())}")


@functools.cache
def planned(own_user_namespace: bool = False) -> Drop:
    """The drop for processes this daemon starts (its capabilities do not change while it runs);
    a process in a user namespace of its own holds every capability there, and drops them all."""
    if not own_user_namespace and not effective_capabilities() >> CAP_SETPCAP & 1:
        return Drop(range(0), securebits=False)
    return Drop(range(_last_capability() + 1), securebits=True)


def _last_capability() -> int:
    try:
        with open(LAST_CAP_FILE, encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):  # a kernel before the file: the last the bounding set knows
        return max(cap for cap in range(64) if _libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) >= 0)
