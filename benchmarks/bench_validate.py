"""Cold `beeuni validate` (a new process per run) beside yamllint on the same files.

    .venv/bin/python benchmarks/bench_validate.py [--runs 20]

Prints one row per project: the fastest and the median of the runs, for both tools, and the
ratio of the medians. The large projects grow in steps, to show how time grows with the manifest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generate import generate

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def timed(command: list[str], runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(command, capture_output=True, env=env)  # warm the disk cache and the rule cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return times


def row(label: str, beeuni: list[str], files: list[Path], runs: int, env: dict[str, str]) -> str:
    ours = timed(beeuni, runs, env)
    theirs = timed([str(BIN / "yamllint"), "-d", "relaxed", *map(str, files)], runs, env)
    ratio = statistics.median(ours) / statistics.median(theirs)
    return (
        f"{label:<34} {min(ours):7.0f} {statistics.median(ours):7.0f}   "
        f"{min(theirs):7.0f} {statistics.median(theirs):7.0f}   {ratio:5.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--command", default="validate", help="beeuni command to time (validate, resolve)")
    options = parser.parse_args()
    env = {**os.environ, "BEEUNI_CACHE_DIR": tempfile.mkdtemp(prefix="beeuni-bench-cache-")}
    beeuni = str(BIN / "beeuni")
    print(f"beeuni {options.command}, cold process per run, {options.runs} runs; times in ms")
    print(f"{'project':<34} {'beeuni min':>10} {'median':>7}   {'yamllint min':>12} {'median':>7}   ratio")
    starter = ROOT / "examples" / "starter"
    files = [starter / "beeuni.yaml", *sorted((starter / "config").glob("*.yaml"))]
    print(row("examples/starter", [beeuni, options.command, str(starter)], files, options.runs, env))
    for tools, agents in ((500, 125), (1000, 250), (2000, 500)):
        folder = Path(tempfile.mkdtemp(prefix="beeuni-bench-"))
        try:
            files = generate(folder, tools, agents, 10)
            label = f"{tools} tools, {agents} agents, 10 imports"
            print(row(label, [beeuni, options.command, str(folder)], files, options.runs, env))
        finally:
            shutil.rmtree(folder)
    shutil.rmtree(env["BEEUNI_CACHE_DIR"])


if __name__ == "__main__":
    main()
