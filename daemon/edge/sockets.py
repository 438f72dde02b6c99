"""The owner and inode of the client sockets connected to the daemon, asked of the kernel by their
addresses: one netlink message per socket (``NETLINK_SOCK_DIAG``, what ``ss`` uses), all sent at
once, so that the cost is the sockets asked about — not ``/proc/net/tcp``, which the kernel
writes out whole (every socket of the network namespace, the thousands a flood leaves in
TIME_WAIT included: 3.5 MB, some 50 ms, after a few floods). The table is read only where
netlink does not answer (a kernel without ``tcp_diag``).

The daemon listens on 127.0.0.1 only (``server.py``, an IPv4 socket), so its clients are IPv4
sockets, never in ``tcp6``; a client may bind any address of 127.0.0.0/8 and is asked about by
the one it has.
"""

from __future__ import annotations

import errno
import re
import socket
import struct
from collections.abc import Collection

TCP_TABLE = "/proc/net/tcp"
NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
NO_COOKIE = 0xFFFFFFFF
BATCH = 64  # requests sent at once: their answers fit the netlink socket's receive buffer
ANSWER_WAIT = 1.0  # seconds the kernel's answer is waited for (it comes at once), then the table

Address = tuple[str, int]
HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port
REQUEST = struct.Struct("=BBBBI")  # inet_diag_req_v2 before its socket id: family, protocol, ext, pad, states
OWNER = struct.Struct("=II")  # inet_diag_msg's uid and inode, at its byte 64
ANSWER_SIZE = HEADER.size + 64 + OWNER.size


def owners(clients: Collection[Address], server: Address) -> dict[Address, tuple[int, int]]:
    """The uid and inode of each of ``clients``' sockets connected to ``server`` that is found."""
    asked = [client for client in clients if _ipv4(client[0]) and client[1] > 0]
    if not asked or not _ipv4(server[0]):
        return {}
    found = _by_netlink(asked, server)
    return found if found is not None else _by_table(asked, server)


def _ipv4(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET, host)
    except (OSError, ValueError):
        return False
    return True


def _by_netlink(clients: list[Address], server: Address) -> dict[Address, tuple[int, int]] | None:
    """The kernel's answers, or None when it gives none (netlink or its ``tcp_diag`` missing:
    every lookup fails the same way, so a batch where none is found is asked of the table)."""
    found: dict[Address, tuple[int, int]] = {}
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as diag:
            diag.settimeout(ANSWER_WAIT)
            for start in range(0, len(clients), BATCH):
                batch = clients[start : start + BATCH]
                diag.send(b"".join(_request(number, client, server) for number, client in enumerate(batch)))
                answered = 0
                while answered < len(batch):
                    data = diag.recv(65536)
                    offset = 0
                    while offset + HEADER.size <= len(data):
                        length, kind, _, number, _ = HEADER.unpack_from(data, offset)
                        if length < HEADER.size or offset + length > len(data):
                            return None
                        if kind == NLMSG_ERROR:
                            (code,) = struct.unpack_from("=i", data, offset + HEADER.size)
                            if -code not in (errno.ENOENT, 0):
                                return None
                        elif kind == SOCK_DIAG_BY_FAMILY and length >= ANSWER_SIZE and number < len(batch):
                            found[batch[number]] = OWNER.unpack_from(data, offset + HEADER.size + 64)
                        answered += 1
                        offset += (length + 3) & ~3
    except (OSError, struct.error):  # no netlink, no answer in time, or one cut short
        return None
    return found or None


def _request(number: int, client: Address, server: Address) -> bytes:
    """An exact lookup of the socket whose own end is ``client`` and other end ``server``."""
    ids = struct.pack("!HH", client[1], server[1])
    ids += socket.inet_aton(client[0]) + bytes(12) + socket.inet_aton(server[0]) + bytes(12)
    ids += struct.pack("=III", 0, NO_COOKIE, NO_COOKIE)  # any interface, no cookie
    body = REQUEST.pack(socket.AF_INET, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + ids
    return HEADER.pack(HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, number, 0) + body


def _table_address(address: Address) -> bytes:
    """An IPv4 address and port as the table writes them: 127.0.0.1:8080 is 0100007F:1F90."""
    return f"{socket.inet_aton(address[0])[::-1].hex().upper()}:{address[1]:04X}".encode()


def _by_table(clients: list[Address], server: Address) -> dict[Address, tuple[int, int]]:
    by_address = {_table_address(client): client for client in clients}
    row = re.compile(
        rb"^ *\d+: ([0-9A-F]{8}:[0-9A-F]{4}) " + re.escape(_table_address(server)) + rb" [0-9A-F]{2} "
        rb"\S+ \S+ \S+ +(\d+) +\d+ (\d+)",
        re.MULTILINE,
    )
    try:
        with open(TCP_TABLE, "rb") as handle:
            table = handle.read()
    except OSError:
        return {}
    found: dict[Address, tuple[int, int]] = {}
    for local, uid, inode in row.findall(table):
        client = by_address.get(local)
        if client is not None:
            found[client] = (int(uid), int(inode))
    return found
