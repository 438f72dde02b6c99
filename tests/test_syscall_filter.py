"""The syscall filter's program, run by a small BPF interpreter for both architectures it knows:
what the kernel would decide for any system call, against the rule docs/platform.md states ("Tool
modules are confined"). (The real filter, loaded in real module processes, is played against in
test_host_isolation.py.)"""

from __future__ import annotations

import ctypes
import struct

import pytest
from beeuni.daemon.box.syscall_filter import ARCHITECTURES, assemble, program
from hypothesis import given
from hypothesis import strategies as st

ALLOW, DENY = "allow", "deny"
AF_INET, AF_NETLINK, AF_PACKET = 2, 16, 17
SOCK_STREAM, SOCK_RAW, SOCK_PACKET, SOCK_NONBLOCK = 1, 3, 10, 0o4000


def run(machine: str, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> str:
    """What the filter of ``machine`` answers a call ``nr`` of the ABI ``arch`` with ``args``."""
    data = struct.pack("<iIQ6Q", ctypes.c_int32(nr).value, arch, 0, *args)
    accumulator, index = 0, 0
    instructions = assemble(program(ARCHITECTURES[machine]))
    while True:
        step = instructions[index]
        code, jt, jf, k = step.code, step.jt, step.jf, step.k
        index += 1
        if code == 0x20:  # ld [k]
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:  # and #k
            accumulator &= k
        elif code in (0x15, 0x35):  # jeq #k, jge #k
            taken = accumulator == k if code == 0x15 else accumulator >= k
            index += jt if taken else jf
        elif code == 0x06:  # ret #k
            return {0x7FFF0000: ALLOW, 0x00050001: DENY}[k]
        else:
            raise AssertionError(f"an opcode the filter does not use: {code:#x}")


# the calls that change a file's mode, owner or times, by name (<asm/unistd.h>); aarch64 has no legacy forms
ATTRIBUTES = {
    "x86_64": {"chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132, "utimes": 235,
               "futimesat": 261, "fchownat": 260, "fchmodat": 268, "fchmodat2": 452},
    "aarch64": {"fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "fchmodat2": 452},
}  # fmt: skip
UTIMENSAT = {"x86_64": 280, "aarch64": 88}


def expected(machine: str, nr: int, arch: int, family: int, kind: int, path: int = 0) -> str:
    """The rule, as docs/platform.md states it (``path`` is the second argument, utimensat's)."""
    native = ARCHITECTURES[machine]
    if arch != native.audit or (native.x32 and nr & 0x40000000) or nr in (425, 426, 427):
        return DENY
    if nr in ATTRIBUTES[machine].values():
        return DENY
    if nr == UTIMENSAT[machine]:
        return ALLOW if path == 0 else DENY
    family &= 0xFFFFFFFF  # the kernel reads an int
    packet = family == AF_PACKET or (kind & 0xF) in (SOCK_RAW, SOCK_PACKET)
    return DENY if nr == native.socket and family != AF_NETLINK and packet else ALLOW


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_the_calls_the_readme_names(machine: str) -> None:
    native = ARCHITECTURES[machine]
    socket = native.socket

    def call(nr: int, *args: int) -> str:
        return run(machine, nr, native.audit, (*args, *(0,) * (6 - len(args))))

    assert call(socket, AF_PACKET, SOCK_RAW) == DENY
    assert call(socket, AF_PACKET, 2) == DENY  # SOCK_DGRAM: a packet socket all the same
    assert call(socket, AF_INET, SOCK_RAW | SOCK_NONBLOCK) == DENY
    assert call(socket, AF_INET, SOCK_PACKET) == DENY
    assert call(socket, 0x1_0000_0000 | AF_PACKET, SOCK_STREAM) == DENY  # the kernel reads an int
    assert call(socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK) == ALLOW
    assert call(socket, AF_NETLINK, SOCK_RAW) == ALLOW
    assert [call(nr) for nr in (425, 426, 427)] == [DENY] * 3
    assert call(0) == ALLOW
    other = next(a.audit for name, a in ARCHITECTURES.items() if name != machine)
    assert run(machine, socket, other, (AF_INET, SOCK_STREAM, 0, 0, 0, 0)) == DENY
    assert run(machine, 0, 0x40000003) == DENY  # i386
    if native.x32:
        assert call(0x40000000 | socket, AF_INET, SOCK_STREAM) == DENY
    for name, nr in ATTRIBUTES[machine].items():
        assert call(nr, 3, 0o777) == DENY, name
    assert call(UTIMENSAT[machine], 3, 0, 0, 0) == ALLOW  # futimens: the times of a file already open
    assert call(UTIMENSAT[machine], 0xFFFFFF9C, 0x7FFC_0000_1000, 0, 0) == DENY  # AT_FDCWD, a path
    assert call(UTIMENSAT[machine], 3, 0x1_0000_0000, 0, 0) == DENY  # a path above 4 GiB: its low half 0


@given(
    st.sampled_from(sorted(ARCHITECTURES)),
    st.one_of(st.integers(0, 500), st.sampled_from([41, 198, 425, 0x40000029]), st.integers(0, 2**32 - 1)),
    st.sampled_from([a.audit for a in ARCHITECTURES.values()] + [0x40000003]),
    st.one_of(st.sampled_from([AF_INET, AF_NETLINK, AF_PACKET, 1, 10]), st.integers(0, 2**64 - 1)),
    st.one_of(st.sampled_from([SOCK_STREAM, SOCK_RAW, SOCK_PACKET, 2 | SOCK_NONBLOCK]), st.integers(0, 2**64 - 1)),
)
def test_the_filter_decides_every_call_as_the_rule_says(
    machine: str, nr: int, arch: int, family: int, kind: int
) -> None:
    assert run(machine, nr, arch, (family, kind, 0, 0, 0, 0)) == expected(machine, nr, arch, family, kind, kind)


@given(
    st.sampled_from(sorted(ARCHITECTURES)),
    st.sampled_from(sorted({nr for table in ATTRIBUTES.values() for nr in table.values()} | {*UTIMENSAT.values(), 0})),
    st.integers(0, 2**64 - 1),
    st.one_of(st.just(0), st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1), st.sampled_from([1 << 32, 1 << 63])),
)
def test_mode_owner_and_time_changes_are_refused_but_futimens(machine: str, nr: int, fd: int, path: int) -> None:
    native = ARCHITECTURES[machine]
    assert run(machine, nr, native.audit, (fd, path, 0, 0, 0, 0)) == expected(machine, nr, native.audit, 0, 0, path)
