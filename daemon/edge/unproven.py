"""The connections that have not presented the daemon's token, bounded in total and per process,
so that a process that opens connections in a loop (a hostile module finds the daemon's port in
``/proc/self/net/tcp``) closes its own and never another's — the harness's new connection,
before its first request's ``Authorization`` arrives, included.

Which process holds a connection costs a reading of ``/proc`` (``peer.py``), so it is asked only
under pressure, and for many connections at once: once ``PER_PROCESS_MAX`` connections are
unproven, one pass every ``PASS_EVERY`` admissions attributes every connection that arrived
since the last pass (one reading of the TCP table, one scan of the processes' descriptors, those
of the processes found before first). A connection's peer never changes: it is attributed once.
Below that no ``/proc`` file is read at all.

* A pass leaves each process at most ``PER_PROCESS_MAX - PASS_EVERY`` connections, closing its
  oldest: with the fewer than ``PASS_EVERY`` that may arrive before the next pass, no process
  holds more than ``PER_PROCESS_MAX``.
* Past the total bound, the oldest connection of the group holding the most is closed (the
  connections not attributed yet count as one group): a crowd of at least ``bound /
  PER_PROCESS_MAX`` processes is needed to reach it, and each loses its own first.
* The connections whose process the daemon cannot find are one group, ``UNKNOWN``: another
  user's processes when the daemon is not root, a socket its process let go of. Together they
  hold at most what one process may, and can close only each other's; a harness the daemon
  cannot read (another user's) would be among them.

What remains: a client spread over more processes holds ``PER_PROCESS_MAX`` in each, up to the
total bound; past it, the connections of processes holding fewer than the others are closed
last. Every closing happens on the event loop's thread (the admission runs there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from .peer import holders

PER_PROCESS_MAX = 32  # connections without the token one process may hold; also the pressure that starts passes
PASS_EVERY = 16  # admissions between two attribution passes
UNKNOWN = 0  # the group of the connections whose process is not found (no process has pid 0)


class Connection(Protocol):
    """What the bound needs of a connection: its transport, to close it, and its two addresses."""

    transport: asyncio.Transport
    client: tuple[str, int] | None
    server: tuple[str, int | None] | None


#: the group (a pid, or ``UNKNOWN``) of each connection, given the pids that held the last ones found
Attribute = Callable[[Sequence[Connection], Iterable[int]], list[int]]


def by_process(connections: Sequence[Connection], known: Iterable[int]) -> list[int]:
    """The pid of the process holding each connection's client socket, or ``UNKNOWN``."""
    known = list(known)
    found: dict[tuple[str, int], int] = {}
    servers = {connection.server for connection in connections}
    for server in servers:
        if server is None or server[1] is None:
            continue
        clients = [c.client for c in connections if c.server == server and c.client is not None]
        found.update(holders(clients, (server[0], server[1]), known))
    return [found.get(c.client, UNKNOWN) if c.client is not None else UNKNOWN for c in connections]


class Unproven:
    """The unproven connections of one daemon, oldest first, and the groups they fall in."""

    def __init__(
        self, bound: int, per_process: int = PER_PROCESS_MAX, every: int = PASS_EVERY, attribute: Attribute = by_process
    ) -> None:
        self.bound = bound
        self.pressure = min(per_process, bound)
        self.keep = max(1, per_process - every)
        self.every = every
        self.attribute = attribute
        self.order: dict[Connection, None] = {}  # every unproven connection; a dict keeps the order of arrival
        self.pending: dict[Connection, None] = {}  # those not attributed yet
        self.groups: dict[int, dict[Connection, None]] = {}
        self.group_of: dict[Connection, int] = {}
        self.since_pass = every  # admissions since the last pass: the first comes with the pressure
        self.passes = 0

    def __contains__(self, connection: object) -> bool:
        return connection in self.order

    def __len__(self) -> int:
        return len(self.order)

    def admit(self, connection: Connection) -> None:
        """Count ``connection`` as unproven; attribute and close as the bounds say."""
        self.order[connection] = None
        self.pending[connection] = None
        self.since_pass += 1
        if self.since_pass >= self.every and len(self.order) >= self.pressure:
            self._attribute()
        while len(self.order) > self.bound:
            self._close(next(iter(self._most_held())))

    def discard(self, connection: Connection) -> None:
        """``connection`` presented the token or closed: it counts no more."""
        if connection not in self.order:
            return
        del self.order[connection]
        self.pending.pop(connection, None)
        group = self.group_of.pop(connection, None)
        if group is not None:
            members = self.groups[group]
            del members[connection]
            if not members:
                del self.groups[group]

    def _close(self, connection: Connection) -> None:
        self.discard(connection)
        connection.transport.close()

    def _attribute(self) -> None:
        """One pass over the connections that arrived since the last, then each group cut down
        to ``keep``, its oldest closed first."""
        arrived = list(self.pending)
        self.pending.clear()
        self.since_pass = 0
        self.passes += 1
        known = [pid for pid in reversed(self.groups) if pid != UNKNOWN]  # the latest found first
        for connection, group in zip(arrived, self.attribute(arrived, known), strict=True):
            self.group_of[connection] = group
            self.groups.setdefault(group, {})[connection] = None
        for members in list(self.groups.values()):
            while len(members) > self.keep:
                self._close(next(iter(members)))

    def _most_held(self) -> dict[Connection, None]:
        """The group holding the most, the pending connections as one (on a tie, a process's)."""
        most = max(self.groups.values(), key=len, default=None)
        return self.pending if most is None or len(self.pending) > len(most) else most
