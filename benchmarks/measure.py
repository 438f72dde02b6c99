"""One cold run of a command, measured as every benchmark here measures it: its wall time, its
peak resident set (``wait4``'s ``ru_maxrss``) and its exit status; and the environment of the
benchmarks that load modules in Bun."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Wall time in ms, peak resident set in KiB and exit status of one run of ``command``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    return (time.perf_counter() - start) * 1000, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def bun_env() -> dict[str, str]:
    """The environment of runs that load modules: a cache folder of their own (not the user's),
    and the project's Bun unless ``BEEUNI_BUN`` names another."""
    return {
        **os.environ,
        "BEEUNI_CACHE_DIR": tempfile.mkdtemp(prefix="beeuni-bench-cache-"),
        "BEEUNI_BUN": os.environ.get("BEEUNI_BUN", str(ROOT / "node_modules" / ".bin" / "bun")),
    }
