"""A PID namespace per module process: a call's processes end with the call, whatever they do.

A child a module starts with ``setsid`` (``detached: true``), or forks twice, leaves the host's
process group; once the daemon is gone it runs on, holding the call's secrets. In a PID namespace
of its own the host (Bun) is the namespace's init: every process a call starts is in it, an orphan
is adopted by the host (not by the machine's init), and when the host ends the kernel kills every
process of the namespace at once. So:

* after a call, a host with any child — any process of its namespace but itself, a zombie
  included — is ended, not reused (``strays``; ``host.py``);
* the host has ``PR_SET_PDEATHSIG`` ``SIGKILL``: when the daemon ends, by ``SIGKILL`` too, its
  hosts and their namespaces end with it.

How: first in the child between fork and exec (``preexec_fn``), a raw ``clone`` with
``CLONE_NEWPID | CLONE_PARENT`` makes the host init of a new namespace and the daemon's own child
(the daemon reaps it and reads how it ended); the forked child in between writes the host's number
on a pipe and exits. The host runs the rest of the path itself — its capabilities, the syscall
filter, Landlock with its own ``/proc`` entry, fd 3 — and execs Bun. A daemon without
``CAP_SYS_ADMIN`` (an ordinary user) adds ``CLONE_NEWUSER`` and maps its own user and group to
themselves, so that files and ids stay as they were; the host then drops every capability the new
user namespace gave it (``capabilities.planned``). A process of one thread — the daemon's load
process (``host/probe_process.py``), ``validate --modules`` — needs no fork in between: it clones
itself into the new namespace at once (``clone_host``; nothing else runs in it, as in a fork's
child), which halves the copies of its address space a start makes (``sandbox.start``).

Why not util-linux's ``unshare --pid --fork --kill-child bun …``: the process that execs Bun must
be the one that makes Landlock's rule for its own ``/proc`` entry, and a root daemon's child has
dropped ``CAP_SYS_ADMIN`` before any exec; and a forked Python child kept to wait for the host
would keep a copy of the daemon's address space alive. ``CLONE_PARENT`` leaves no process in between.

What a module sees: ``process.pid`` is 1 and ``process.ppid`` 0; ``/proc`` stays the daemon's mount,
where ``/proc/self`` is the host's own entry under its number outside (the one Landlock allows).
Init is spared the signals its own namespace sends it without a handler: a module cannot kill its
own host (``process.kill(process.pid)`` does nothing; the call runs to its timeout).

``PR_SET_PDEATHSIG`` follows the daemon's thread that started the host, not the daemon: hosts
are started from the event loop's default executor, whose threads live as long as the loop.

Where the kernel refuses a namespace (no user namespaces for an ordinary user, a container's
seccomp profile), ``missing`` says why; processes start as before, a call's leftovers are killed
by process group (``sandbox.group_members``), which ``setsid`` escapes, and the daemon says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import select
import signal
import subprocess
from dataclasses import dataclass

from ..edge.ptrace_guard import effective_capabilities

SWITCH = "BEEUNI_PID_NAMESPACE"  # `off` makes namespaces look missing, to test that path
CAP_SYS_ADMIN = 21
_CLONE_NEWPID, _CLONE_NEWUSER, _CLONE_PARENT = 0x20000000, 0x10000000, 0x00008000
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}
_PR_SET_PDEATHSIG = 1
_FAILED = b"!"  # what the forked child writes before the errno when clone failed

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_held = ctypes.PyDLL(None, use_errno=True)  # calls that keep the interpreter's lock
_held.syscall.restype = ctypes.c_long


@dataclass(frozen=True)
class Plan:
    """How a host enters its namespace: made in the daemon, ``enter`` runs in the child."""

    clone: int  # the system call's number
    user: tuple[int, int] | None  # (uid, gid) to map in a user namespace of its own, or None

    @property
    def own_user_namespace(self) -> bool:
        return self.user is not None

    def enter(self, report: int, own_session: bool = True) -> None:
        """In the child between fork and exec, first of all: from the return on, this is the host,
        init of a new namespace; the child forked in between reports the host's number (or why
        there is none) on ``report`` and exits."""
        flags = _CLONE_NEWPID | _CLONE_PARENT | signal.SIGCHLD | (_CLONE_NEWUSER if self.user else 0)
        pid = _libc.syscall(self.clone, flags, 0, 0, 0, 0)
        if pid != 0:
            os.write(report, str(pid).encode() if pid > 0 else _FAILED + str(ctypes.get_errno()).encode())
            os._exit(0)
        self.settle(own_session)

    def clone_host(self) -> int:
        """``fork`` as one clone into a new namespace, for a process of one thread (no fork in
        between, whose copy of the address space costs as much again): the host's number, or 0 in
        the host, which then calls ``settle``. The interpreter's lock is held across the call
        (``PyDLL``), so the host holds it too."""
        flags = _CLONE_NEWPID | signal.SIGCHLD | (_CLONE_NEWUSER if self.user else 0)
        pid = int(_held.syscall(self.clone, flags, 0, 0, 0, 0))
        if pid < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"clone of a PID namespace: {os.strerror(code)}")
        return pid

    def settle(self, own_session: bool = True) -> None:
        """In the host, just made: it ends with the daemon (a daemon gone already closed fd 3: Bun
        reads its end and exits), leads a process group of its own — in a session of its own, or
        (``own_session`` false) in its parent's — and maps its user."""
        end_with_parent()
        if own_session:
            os.setsid()  # a process group of its own, numbered as the host is outside: killed as one
        else:
            os.setpgid(0, 0)
        if self.user is not None:
            uid, gid = self.user
            for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
                descriptor = os.open(f"/proc/self/{name}", os.O_WRONLY)
                try:
                    os.write(descriptor, text.encode())
                finally:
                    os.close(descriptor)

    def adopt(self, forked: subprocess.Popen[bytes], report: int) -> Host:
        """The host, once ``forked`` (the child in between) reported it on ``report`` and ended."""
        forked.wait()
        said = os.read(report, 64)
        if not said:
            raise OSError(errno.ECHILD, f"the child that starts the host ended (status {forked.returncode}) unsaid")
        if said.startswith(_FAILED):
            code = int(said[1:])
            raise OSError(code, f"clone of a PID namespace: {os.strerror(code)}")
        return Host(int(said))

    @staticmethod
    def reap(report: int) -> None:
        """After a start that failed in the host (Popen raised what it reported): reap the host."""
        try:
            said = os.read(report, 64)
        except OSError:
            return
        if said and not said.startswith(_FAILED):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(said), 0)


class Host:
    """A host in its namespace, the daemon's child: what ``subprocess.Popen`` offers of a process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                found, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already
                return self.returncode
            if found:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        if timeout is not None:
            descriptor = os.pidfd_open(self.pid)
            try:
                select.select([descriptor], [], [], timeout)
            finally:
                os.close(descriptor)
            found = self.poll()
            if found is None:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout)
            return found
        _, status = os.waitpid(self.pid, 0)
        self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def end_with_parent() -> None:
    """This process gets ``SIGKILL`` when the thread that started it ends (``PR_SET_PDEATHSIG``)."""
    if _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_PDEATHSIG")


def strays(pid: int) -> bool:
    """Whether the host ``pid`` has a child: a process of its namespace besides itself (every
    such process descends from the host, and an orphan is the host's). A host gone has none."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as children:
                if children.read(1):
                    return True
        except OSError:  # a thread that ended meanwhile
            continue
    return False


def missing() -> str:
    """Why processes get no PID namespace here (the switch, the architecture, the kernel), or ``""``."""
    if os.environ.get(SWITCH) == "off":
        return f"{SWITCH}=off"
    return _kernel_missing()


def planned() -> Plan | None:
    """The plan for the processes this daemon starts, ``None`` where namespaces are ``missing``."""
    return None if missing() else _plan()


@functools.cache
def _plan() -> Plan:
    privileged = bool(effective_capabilities() >> CAP_SYS_ADMIN & 1)
    return Plan(_SYS_CLONE[platform.machine()], None if privileged else (os.geteuid(), os.getegid()))


@functools.cache
def _kernel_missing() -> str:
    machine = platform.machine()
    if machine not in _SYS_CLONE:
        return f"architecture {machine}"
    plan = _plan()
    flags = _CLONE_NEWPID | (_CLONE_NEWUSER if plan.user else 0)

    def attempt() -> None:  # in a child that execs nothing: its exit status is the errno
        if _libc.unshare(flags) != 0:
            os._exit(ctypes.get_errno() or 1)
        if plan.user is not None:
            uid = plan.user[0]
            try:
                descriptor = os.open("/proc/self/uid_map", os.O_WRONLY)
                os.write(descriptor, f"{uid} {uid} 1".encode())
            except OSError as err:
                os._exit(err.errno or 1)
        os._exit(0)

    try:  # `attempt` ends the child before its exec (of nothing: "/")
        code = subprocess.run(["/"], preexec_fn=attempt, check=False).returncode
    except (OSError, subprocess.SubprocessError) as err:
        return f"a PID namespace: {err}"
    return f"a PID namespace: {os.strerror(code)}" if code else ""
