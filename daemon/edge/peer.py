"""Who is at the other end of a loopback connection to the daemon: the kernel gives the inode and
owner of the client's socket (``sockets.py``), and the process holding it has ``socket:[INODE]``
among its descriptors. One lookup serves many connections (``holders``): the edge attributes its
connections without the token to processes when they crowd (``unproven.py``), and the log line
of a refused call names the process that tried (``process_at``).

Not found, so unknown: a socket of another user's process when the daemon is not root (its
descriptors cannot be read: the socket's owner says so, and no scan is spent on it), a process
holding more than ``PROCESS_FDS_MAX`` descriptors (not read: a process may open as many as its
limit allows, and the scan runs on the daemon's event loop), a socket its process let go of or
that ended meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator

from .sockets import Address, owners

PROCESS_FDS_MAX = 4096  # descriptors of one process read at most: a process holding more is not read


def process_at(client: Address, server: Address) -> tuple[int, str] | None:
    """The pid and name of a process holding the client's end of the connection from ``client``
    to the daemon's ``server`` address, or None."""
    pid = holders([client], server).get(client)
    if pid is None:
        return None
    name = process_name(pid)
    return None if name is None else (pid, name)


def process_name(pid: int) -> str | None:
    """The name of process ``pid`` (its ``comm``), or None when it has ended."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def holders(clients: Collection[Address], server: Address, first: Iterable[int] = ()) -> dict[Address, int]:
    """For each of ``clients`` connected to ``server`` whose process is found: the pid of a process
    holding its socket. One lookup of the sockets and one scan of the processes' descriptors —
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
        if len(descriptors) > PROCESS_FDS_MAX:
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
    """``socket:[INODE]`` of each client's socket that the daemon may find among a process's
    descriptors: its own user's, or any when it is root."""
    daemon_user = os.geteuid()
    return {
        f"socket:[{inode}]": client
        for client, (uid, inode) in owners(clients, server).items()
        if inode and daemon_user in (0, uid)
    }
