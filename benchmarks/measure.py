"""One cold run of a command, measured as every benchmark here measures it: its wall time, its
peak resident set (``wait4``'s ``ru_maxrss``) and its exit status."""

from __future__ import annotations

import os
import subprocess
import time


def run_once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Wall time in ms, peak resident set in KiB and exit status of one run of ``command``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    return (time.perf_counter() - start) * 1000, usage.ru_maxrss, os.waitstatus_to_exitcode(status)
