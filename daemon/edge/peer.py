"""Who is at the other end of a loopback connection to the daemon: ``/proc/net/tcp`` gives the
inode and owner of the client's socket, and the process holding it has ``socket:[INODE]`` among
its descriptors. One reading serves many connections (``holders``): the edge attributes its
connections without the token to processes when they crowd (``unproven.py``), and the log line
of a refused call names the process that tried (``process_at``).

Not found, so unknown: a socket of another user's process when the daemon is not root (its
descriptors cannot be read: the table's owner says so, and no scan is spent on it), a socket its
process let go of or that ended meanwhile. The daemon listens on 127.0.0.1 only (``server.py``,
an IPv4 socket), so its clients are in ``/proc/net/tcp``, never in ``tcp6``; a client may bind
any address of 127.0.0.0/8, and is looked up by the one it has.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Collection, Iterable, Iterator

TCP_TABLE = "/proc/net/tcp"

Address = tuple[str, int]


def table_address(address: Address) -> str:
    """An IPv4 address and port as the table writes them: 127.0.0.1:8080 is 0100007F:1F90."""
    return f"{socket.inet_aton(address[0])[::-1].hex().upper()}:{address[1]:04X}"


def process_at(client: Address, server: Address) -> tuple[int, str] | None:
    """The pid and name of a process holding the client's end of the connection from ``client``
    to the daemon's ``server`` address, or None."""
    pid = holders([client], server).get(client)
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return pid, handle.read().strip()
    except OSError:  # it has ended meanwhile
        return None


def holders(clients: Collection[Address], server: Address, first: Iterable[int] = ()) -> dict[Address, int]:
    """For each of ``clients`` connected to ``server`` whose process is found: the pid of a process
    holding its socket. One reading of the table and one scan of the processes' descriptors —
    the pids of ``first`` before the others (those that held the last ones found) — that ends
    once every socket the daemon may look for is found."""
    wanted = _client_sockets(clients, server)
    found: dict[Address, int] = {}
    for pid in _pids(first):
        if not wanted:
            break
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # another user's process, or one that has ended
            continue
        for fd in descriptors:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            client = wanted.pop(link, None)
            if client is not None:
                found[client] = pid
    return found


def _pids(first: Iterable[int]) -> Iterator[int]:
    """``first``, then every other process (``/proc`` lists the processes, not their threads)."""
    seen = set()
    for pid in first:
        seen.add(pid)
        yield pid
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for name in entries:
        if name.isdigit() and int(name) not in seen:
            yield int(name)


def _client_sockets(clients: Collection[Address], server: Address) -> dict[str, Address]:
    """``socket:[INODE]`` of each client's socket in the table that the daemon may find among a
    process's descriptors: its own user's, or any when it is root."""
    by_address = {table_address(client).encode(): client for client in clients}
    row = re.compile(
        rb"^ *\d+: ([0-9A-F]{8}:[0-9A-F]{4}) " + re.escape(table_address(server).encode()) + rb" [0-9A-F]{2} "
        rb"\S+ \S+ \S+ +(\d+) +\d+ (\d+)",
        re.MULTILINE,
    )
    try:
        with open(TCP_TABLE, "rb") as handle:
            table = handle.read()
    except OSError:
        return {}
    readable = os.geteuid()
    wanted: dict[str, Address] = {}
    for local, uid, inode in row.findall(table):
        client = by_address.get(local)
        if client is not None and inode != b"0" and readable in (0, int(uid)):
            wanted[f"socket:[{inode.decode()}]"] = client
    return wanted
