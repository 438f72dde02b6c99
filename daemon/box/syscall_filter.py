"""A seccomp filter for the module host's processes: no raw or packet sockets, no io_uring, no
change of a file's mode, owner or times.

A raw or packet socket reads the loopback's traffic — the harness's token on its way to the
daemon — and io_uring opens sockets past any syscall filter. Capabilities already keep an
ordinary process from the first (``capabilities.py``); this filter keeps every module process
from them whatever the kernel or the user allows, and ``fetch`` (TCP, UDP, unix sockets) works
as before. ``socket`` is refused with ``EPERM`` for the family ``AF_PACKET`` and the types
``SOCK_RAW`` and ``SOCK_PACKET`` — but for ``AF_NETLINK``, whose sockets are all opened as
``SOCK_RAW`` and read no traffic (the C library's ``getaddrinfo`` and ``getifaddrs`` use one);
``io_uring_setup``, ``io_uring_enter`` and ``io_uring_register`` are refused whole. A system
call of another ABI than the process's own (i386 on x86_64, and x32, whose calls carry
``__X32_SYSCALL_BIT``) is refused whole too: its numbers are not the ones checked.

Landlock does not cover a file's attributes: a module that may not open the secrets store could
still ``chmod`` it open to every user by its path, and ``fchmod`` what it may only read (the
release, ``.git/config``, Bun's empty ``bunfig.toml``; a root daemon's module owns the system's
files). A filter sees no path, so the whole families are refused with ``EPERM``: ``chmod``,
``fchmod``, ``fchmodat``, ``fchmodat2``, ``chown``, ``fchown``, ``lchown``, ``fchownat``,
``utime``, ``utimes``, ``futimesat`` and ``utimensat`` with a path (aarch64 has only the ``at``
and ``f`` forms). Undoing a change after the call instead would leave the file open to others while
the call runs. What keeps working: a file or folder made with its mode (``writeFileSync(path,
data, {mode})``, ``mkdirSync(path, {mode})``: the mode of ``open`` and ``mkdir``), Bun's
``copyFile`` (it ignores a refused ``fchmod``), ``touch`` and ``cp -p`` (which go on without the
mode), and ``utimensat`` with a NULL path (``futimens``): the times of a file the module has open,
which Landlock let it open, and on which no decision of beeuni rests. What fails: ``chmod`` itself,
``cpSync`` of a folder (it copies the folder's mode), ``tar -x`` (files extracted, exit status 2).

Why a hand-written program and not a binding: ``pyseccomp`` (ctypes over libseccomp) has not
changed since 2021 and needs libseccomp at run time, and libseccomp's own Python binding is not
on PyPI; the program is some thirty instructions, assembled once in the daemon, and only ``load``
runs in the child between ``fork`` and ``exec`` (after no-new-privileges, which the kernel requires
of a process without ``CAP_SYS_ADMIN``).
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
from dataclasses import dataclass

SWITCH = "BEEUNI_SECCOMP"  # `off` makes the filter look missing, to test that path

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_SECCOMP_GET_ACTION_AVAIL = 2
_RET_ALLOW, _RET_ERRNO, _EPERM = 0x7FFF0000, 0x00050000, 1
_LD_ABS_W, _JEQ, _JGE, _AND, _RET = 0x20, 0x15, 0x35, 0x54, 0x06  # BPF opcodes with their K forms
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (arguments' low halves)
_HIGH = 4  # the offset of an argument's high half from its low half (both architectures are little-endian)
_AF_NETLINK, _AF_PACKET = 16, 17
_SOCK_TYPE_MASK, _SOCK_RAW, _SOCK_PACKET = 0xF, 3, 10
_IO_URING = (425, 426, 427)  # setup, enter, register: the same numbers on every architecture
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Architecture:
    audit: int  # AUDIT_ARCH_… of <linux/audit.h>
    socket: int
    seccomp: int
    x32: bool  # whether the x32 ABI's calls reach the kernel under this architecture
    attributes: tuple[int, ...]  # the calls that change a file's mode, owner or times, refused whole
    utimensat: int  # refused but with a NULL path (`futimens`: the times of a file already open)


ARCHITECTURES = {
    # chmod fchmod chown fchown lchown utime utimes futimesat fchownat fchmodat fchmodat2
    "x86_64": _Architecture(
        0xC000003E, socket=41, seccomp=317, x32=True,
        attributes=(90, 91, 92, 93, 94, 132, 235, 261, 260, 268, 452), utimensat=280,
    ),
    # fchmod fchmodat fchownat fchown fchmodat2 (the generic table has no legacy forms)
    "aarch64": _Architecture(
        0xC00000B7, socket=198, seccomp=277, x32=False, attributes=(52, 53, 54, 55, 452), utimensat=88,
    ),
}  # fmt: skip

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


@dataclass(frozen=True)
class SyscallFilter:
    """An assembled filter; ``load`` installs it in the calling process (the child)."""

    instructions: ctypes.Array[_Instruction]
    program: _Program

    def load(self) -> None:
        """In the child, before ``exec``: no new privileges, then the filter. A failure raises, and
        the child never runs the module unfiltered."""
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
        if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self.program), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def missing() -> str:
    """Why processes cannot be filtered here (the switch, the architecture, the kernel), or ``""``."""
    if os.environ.get(SWITCH) == "off":
        return f"{SWITCH}=off"
    return _kernel_missing()


@functools.cache
def _kernel_missing() -> str:
    machine = platform.machine()
    architecture = ARCHITECTURES.get(machine)
    if architecture is None:
        return f"architecture {machine}"
    action = ctypes.c_uint32(_RET_ERRNO)
    if _libc.syscall(architecture.seccomp, _SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(action)) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return ""


def planned() -> SyscallFilter | None:
    """The filter for the processes this daemon starts, ``None`` where it is ``missing``."""
    return None if missing() else _assembled(platform.machine())


@functools.cache
def _assembled(machine: str) -> SyscallFilter:
    instructions = assemble(program(ARCHITECTURES[machine]))
    return SyscallFilter(instructions, _Program(len(instructions), instructions))


Step = tuple[int, int, str | None, str | None] | str


def program(architecture: _Architecture) -> list[Step]:
    """The filter as instructions ``(opcode, k, label if true, label if false)`` and labels (a
    string: the place of the instruction after it); a jump's labels are ``"allow"``, ``"deny"``,
    a label of the program, or ``None`` (the next instruction)."""
    other_abi = [(_JGE, _X32_SYSCALL_BIT, "deny", None)] if architecture.x32 else []
    return [
        (_LD_ABS_W, _ARCH, None, None),
        (_JEQ, architecture.audit, None, "deny"),
        (_LD_ABS_W, _NR, None, None),
        *other_abi,
        *[(_JEQ, number, "deny", None) for number in (*_IO_URING, *architecture.attributes)],
        (_JEQ, architecture.utimensat, None, "socket"),
        (_LD_ABS_W, _ARG1, None, None),  # the path: NULL (both halves 0) names the open file dirfd
        (_JEQ, 0, None, "deny"),
        (_LD_ABS_W, _ARG1 + _HIGH, None, None),
        (_JEQ, 0, "allow", "deny"),
        "socket",
        (_JEQ, architecture.socket, None, "allow"),
        (_LD_ABS_W, _ARG0, None, None),  # the family
        (_JEQ, _AF_PACKET, "deny", None),
        (_JEQ, _AF_NETLINK, "allow", None),
        (_LD_ABS_W, _ARG1, None, None),  # the type, with SOCK_NONBLOCK and SOCK_CLOEXEC
        (_AND, _SOCK_TYPE_MASK, None, None),
        (_JEQ, _SOCK_RAW, "deny", None),
        (_JEQ, _SOCK_PACKET, "deny", None),
    ]


def assemble(program: list[Step]) -> ctypes.Array[_Instruction]:
    """``program``'s instructions followed by the two returns, its labels resolved to forward
    offsets."""
    body: list[tuple[int, int, str | None, str | None]] = []
    where: dict[str, int] = {}
    for step in program:
        if isinstance(step, str):
            where[step] = len(body)
        else:
            body.append(step)
    where.update(allow=len(body), deny=len(body) + 1)
    instructions = (_Instruction * (len(body) + 2))()
    for index, (code, k, if_true, if_false) in enumerate(body):
        jt = where[if_true] - index - 1 if if_true else 0
        jf = where[if_false] - index - 1 if if_false else 0
        instructions[index] = _Instruction(code, jt, jf, k)
    instructions[len(body)] = _Instruction(_RET, 0, 0, _RET_ALLOW)
    instructions[len(body) + 1] = _Instruction(_RET, 0, 0, _RET_ERRNO | _EPERM)
    return instructions
