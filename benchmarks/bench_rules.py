"""`beeuni rules check` and `beeuni rules test` on the shipped rules, cold and warm.

    .venv/bin/python benchmarks/bench_rules.py [--runs 10]

Each run is a new process. Cold: an empty rule cache, so the rules are parsed, checked and
compiled (Lark imported); warm: the cache a first run left. `rules test` runs every test case
beside the rules; it is timed cold a fifth as often. Prints the
fastest and the median wall time, the peak memory (from ``wait4``), and the load average
before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from measure import run_once

BIN = Path(sys.executable).parent
COMMANDS = {"rules check": ["rules", "check"], "rules test": ["rules", "test"]}


def timed(command: list[str], runs: int, cold: bool) -> tuple[list[float], int, set[int]]:
    times, peak, codes = [], 0, set()
    cache = tempfile.mkdtemp(prefix="beeuni-bench-rules-")
    env = {**os.environ, "BEEUNI_CACHE_DIR": cache}
    try:
        if not cold:
            run_once(command, env)  # fills the cache
        for _ in range(runs):
            if cold:
                shutil.rmtree(cache)
                os.mkdir(cache)
            elapsed, rss, code = run_once(command, env)
            times.append(elapsed)
            peak = max(peak, rss)
            codes.add(code)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return times, peak, codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; times in ms, peak memory in MB")
    print(f"{'command':12} {'cache':6} {'fastest':>8} {'median':>8} {'peak':>6}  exit")
    for label, words in COMMANDS.items():
        for cold in (True, False):
            runs = args.runs if label == "rules check" or not cold else max(1, args.runs // 5)
            times, peak, codes = timed([str(BIN / "beeuni"), *words], runs, cold)
            print(
                f"{label:12} {'cold' if cold else 'warm':6} {min(times):8.0f} {statistics.median(times):8.0f} "
                f"{peak / 1024:6.0f}  {','.join(map(str, sorted(codes)))}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
