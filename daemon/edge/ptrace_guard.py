"""Whether the harness's address space — where the daemon's token lives — is out of reach of the
session's other processes: Yama's ``ptrace_scope`` 1 lets a process trace (and read the pages
of) its descendants only, and the model's commands are the harness's descendants; 2 and 1 do not
hold back a holder of ``CAP_SYS_PTRACE`` (root), 3 holds back everybody.
"""

from __future__ import annotations

SCOPE_FILE = "/proc/sys/kernel/yama/ptrace_scope"
CAP_SYS_PTRACE = 19  # <linux/capability.h>


def memory_unguarded() -> str:
    """Why a process of the daemon's user could read another's address space on this host, or ``""``."""
    try:
        with open(SCOPE_FILE, encoding="ascii") as handle:
            scope: str | None = handle.read().strip()
    except OSError:
        scope = None
    return unguarded_because(scope, effective_capabilities())


def unguarded_because(scope: str | None, capabilities: int) -> str:
    """``memory_unguarded`` for a given ``ptrace_scope`` (None: no Yama) and set of effective
    capabilities (a bit mask)."""
    if scope is None:
        return f"the kernel has no Yama ({SCOPE_FILE} is missing)"
    if not scope.isdigit() or int(scope) == 0:
        return f"Yama's ptrace_scope is {scope}"
    if int(scope) < 3 and capabilities >> CAP_SYS_PTRACE & 1:
        return f"the daemon's user holds CAP_SYS_PTRACE, which Yama's ptrace_scope {scope} does not hold back"
    return ""


def effective_capabilities() -> int:
    """This process's effective capabilities, a bit mask (0 when they cannot be read)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0
