"""Who is at the other end of a loopback connection to the daemon, for the log line of a refused
call: ``/proc/net/tcp`` gives the inode of the client's socket, and the process holding it has
``socket:[INODE]`` among its descriptors (another user's process is not readable: unknown).
"""

from __future__ import annotations

import os

TCP_TABLE = "/proc/net/tcp"
LOOPBACK = "0100007F"  # 127.0.0.1 as the table writes it (little-endian hex)


def process_at(client_port: int, daemon_port: int) -> tuple[int, str] | None:
    """The pid and name of a process holding the client's end of the connection from
    ``127.0.0.1:client_port`` to the daemon's port, or None."""
    inode = _socket_inode(f"{LOOPBACK}:{client_port:04X}", f"{LOOPBACK}:{daemon_port:04X}")
    if inode is None:
        return None
    wanted = f"socket:[{inode}]"
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _holds(entry.name, wanted):
            try:
                with open(f"/proc/{entry.name}/comm", encoding="utf-8", errors="replace") as handle:
                    return int(entry.name), handle.read().strip()
            except OSError:  # it has ended meanwhile
                return None
    return None


def _holds(pid: str, wanted: str) -> bool:
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # another user's process, or one that has ended
        return False
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                return True
        except OSError:
            continue
    return False


def _socket_inode(local: str, remote: str) -> str | None:
    try:
        with open(TCP_TABLE, encoding="ascii") as table:
            next(table)  # the header
            for line in table:
                fields = line.split()
                if fields[1] == local and fields[2] == remote:
                    return fields[9]
    except (OSError, StopIteration, IndexError):
        pass
    return None
