"""Child processes that leave nothing behind: each started as the leader of its own process
group (and session), so that stopping it stops everything it started — the daemon's module host,
opencode's own children — and none of them gets the terminal's Ctrl-C on its own.

On Linux each child is also told to get SIGTERM when the process that started it dies, so that
even a runner killed outright (SIGKILL) does not leave its daemon and opencode running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import IO

#: seconds a group has to end after SIGTERM before it gets SIGKILL
STOP_GRACE = 10.0
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux only; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def start_group(
    command: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    log: IO[bytes],
    pass_fds: tuple[int, ...],
    before_exec: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``command`` as the leader of a new process group; its standard output and error
    go to ``log``; of the other descriptors it inherits ``pass_fds`` alone. ``before_exec`` runs
    in the child last before ``exec`` (a box to put it in: ``daemon/harness_box.py``)."""

    def prepare() -> None:
        _die_with_parent()
        if before_exec is not None:
            before_exec()

    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        preexec_fn=prepare,
        pass_fds=pass_fds,
    )


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the group ``process`` leads: SIGTERM to all of it, then SIGKILL to what is left after
    ``STOP_GRACE`` seconds. The leader is reaped."""
    _signal_group(process.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_GRACE)
    _signal_group(process.pid, signal.SIGKILL)  # the leader's children may outlive it
    process.wait()


def _signal_group(group: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: the command stops what it started, then ends."""


def interruptible() -> AbstractContextManager[None]:
    """Within the block, SIGINT and SIGTERM raise ``Interrupted`` (SIGHUP is ignored: a session
    outlives the terminal that started it only when it was started without ``--wait``)."""

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted()

    return _stops_handled_by(interrupt)


def uninterrupted() -> AbstractContextManager[None]:
    """Within the block, SIGINT and SIGTERM are ignored, so that a cleanup runs to its end (a
    second Ctrl-C does not leave half of what was started running)."""
    return _stops_handled_by(signal.SIG_IGN)


@contextmanager
def _stops_handled_by(handler: Callable[[int, object], None] | signal.Handlers) -> Iterator[None]:
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
