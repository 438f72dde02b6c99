"""The connections that have not presented the daemon's token, bounded in total and per process,
so that a process that opens connections in a loop (a hostile module finds the daemon's port in
``/proc/self/net/tcp``) closes its own and never another's — the harness's new connection,
before its first request's ``Authorization`` arrives, included.

Which process holds a connection costs a look at the kernel's sockets and the processes'
descriptors (``peer.py``), so it is asked only under pressure, for many connections at once:
once ``PER_PROCESS_MAX`` connections are unproven, one pass every ``PASS_EVERY`` admissions
attributes every connection that arrived since the last (one netlink lookup of their sockets,
one scan of the descriptors, those of the processes found before first). A connection's peer
never changes: it is attributed once. Below that pressure nothing is looked up at all.

* A pass leaves each process at most ``PER_PROCESS_MAX - PASS_EVERY`` connections, closing its
  oldest: with the fewer than ``PASS_EVERY`` that may arrive before the next pass, no process
  holds more than ``PER_PROCESS_MAX``.
* Past the total bound, the oldest connection of the group holding the most is closed (the
  connections not attributed yet count as one group): a crowd of at least ``bound /
  PER_PROCESS_MAX`` processes is needed to reach it, and each loses its own first.
* The connections whose process is not found are one group, ``UNKNOWN``: another user's
  processes when the daemon is not root, a process holding more than ``peer.PROCESS_FDS_MAX``
  descriptors, a socket its process let go of. Together they hold at most what one process may,
  and close only each other's; a harness the daemon cannot read (another user's) would be among
  them.
* A pass runs on the event loop (every closing happens there). One that is not cheap (over
  ``PASS_CHEAP``: many processes, or a process with thousands of descriptors, to scan) makes the
  next wait until passes have taken no more than ``PASS_SHARE`` of the loop's time; the
  connections arriving meanwhile wait for it, and may pass the per-process bound until it runs.

What remains: a client spread over more processes holds ``PER_PROCESS_MAX`` in each, up to the
total bound; past it, and while passes wait for their share, the connections not attributed
yet are closed oldest first, whoever holds them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from .peer import holders

PER_PROCESS_MAX = 32  # connections without the token one process may hold; also the pressure that starts passes
PASS_EVERY = 16  # admissions between two attribution passes
PASS_SHARE = 0.1  # of the event loop's time, what passes may take once one is not cheap
PASS_CHEAP = 0.002  # seconds a pass may take without counting against that share
UNKNOWN = 0  # the group of the connections whose process is not found (no process has pid 0)


class Connection(Protocol):
    """What the bound needs of a connection: its transport, to close it, and its two addresses."""

    transport: asyncio.Transport
    client: tuple[str, int] | None
    server: tuple[str, int | None] | None


#: the group (a pid, or ``UNKNOWN``) of each connection, given the pids that held the last ones found
Attribute = Callable[[Sequence[Connection], Iterable[int]], list[int]]
#: told of each group a pass cut down: its pid (or ``UNKNOWN``) and how many of its connections it closed
Cut = Callable[[int, int], None]


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
        self,
        bound: int,
        per_process: int = PER_PROCESS_MAX,
        every: int = PASS_EVERY,
        attribute: Attribute = by_process,
        cheap: float = PASS_CHEAP,
        cut: Cut | None = None,
    ) -> None:
        self.bound = bound
        self.pressure = min(per_process, bound)
        self.keep = max(1, per_process - every)
        self.every = every
        self.attribute = attribute
        self.cut = cut
        self.order: dict[Connection, None] = {}  # every unproven connection; a dict keeps the order of arrival
        self.pending: dict[Connection, None] = {}  # those not attributed yet
        self.groups: dict[int, dict[Connection, None]] = {}
        self.group_of: dict[Connection, int] = {}
        self.since_pass = every  # admissions since the last pass: the first comes with the pressure
        self.cheap = cheap
        self.quiet_until = 0.0  # no pass before this time (time.monotonic()): the passes' share
        self.later: asyncio.TimerHandle | None = None  # the pass that waits for it

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
            self._pass_or_later()
        while len(self.order) > self.bound:
            self._close(next(iter(self._most_held())))

    def _pass_or_later(self) -> None:
        """A pass now, or — while the passes have taken more than their share of the loop's time —
        once that share allows (one pass waits for all that arrive meanwhile)."""
        now = time.monotonic()
        if now >= self.quiet_until:
            self._attribute()
            took = time.monotonic() - now
            if took > self.cheap:
                self.quiet_until = now + took / PASS_SHARE
        elif self.later is None:
            self.later = asyncio.get_running_loop().call_later(self.quiet_until - now, self._later)

    def _later(self) -> None:
        self.later = None
        if self.pending and len(self.order) >= self.pressure:
            self._pass_or_later()

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
        known = [pid for pid in reversed(self.groups) if pid != UNKNOWN]  # the latest found first
        found = self.attribute(arrived, known)
        self.pending.clear()
        self.since_pass = 0
        for connection, group in zip(arrived, found, strict=True):
            self.group_of[connection] = group
            self.groups.setdefault(group, {})[connection] = None
        for group, members in list(self.groups.items()):
            closed = 0
            while len(members) > self.keep:
                self._close(next(iter(members)))
                closed += 1
            if closed and self.cut is not None:
                self.cut(group, closed)

    def _most_held(self) -> dict[Connection, None]:
        """The group holding the most, the pending connections as one (on a tie, a process's)."""
        most = max(self.groups.values(), key=len, default=None)
        return self.pending if most is None or len(self.pending) > len(most) else most
