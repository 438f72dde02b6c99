"""Cold `beeuni validate` (a new process per run) beside yamllint on the same files.

    .venv/bin/python benchmarks/bench_validate.py [--runs 20] [--command resolve] [--sizes 2000] [--variants fresh]
                                                  [--format sarif]

Prints rows per project: the fastest and the median of the runs, for both tools, the ratio of
the medians and beeuni's peak memory (the largest resident set of its runs, from ``wait4``). The
large projects grow in steps, to show how time grows with the manifest. The two tools are run in
turns, so that load from other processes on the machine falls on both alike.

``validate`` and ``resolve`` get two rows per project: a fresh CI runner's run (every cache
folder empty: the shipped rules loaded as installed) and the first run on a project (the YAML
read, the rules evaluated; the cache folder as the run before left it). The load average is
printed before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from generate import generate
from measure import run_once

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SIZES = {500: 125, 1000: 250, 2000: 500}  # tools: agents


def timed(
    ours: list[str], theirs: list[str], runs: int, env: dict[str, str], before: Callable[[], None]
) -> tuple[list[float], list[float], int]:
    """Both commands, alternately ``runs`` times (after one warm-up each: the disk cache and the
    cache folder), ``before`` called before each of beeuni's runs; beeuni's times, yamllint's
    times and beeuni's peak memory."""
    before()
    run_once(ours, env)
    run_once(theirs, env)
    our_times, their_times, peak = [], [], 0
    for _ in range(runs):
        before()
        elapsed, rss, _ = run_once(ours, env)
        our_times.append(elapsed)
        peak = max(peak, rss)
        their_times.append(run_once(theirs, env)[0])
    return our_times, their_times, peak


def _unchanged() -> None:
    pass


class EmptyCache:
    """Before each run, an empty cache folder, as on a fresh CI runner."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __call__(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(self.folder)


def rows(label: str, beeuni: list[str], files: list[Path], runs: int, env: dict[str, str], only: str) -> str:
    """Two rows for ``validate`` and ``resolve``: a fresh runner's run (empty cache folders) and
    the first run of a project (the cache folder kept); one for any other command."""
    if beeuni[1] not in ("validate", "resolve"):
        return row(label, beeuni, files, runs, env, _unchanged)
    variants = [
        ("fresh", "fresh runner (empty cache folders)", [], EmptyCache(env["BEEUNI_CACHE_DIR"])),
        ("first", "first run", [], _unchanged),
    ]
    return "\n".join(
        row(f"{label}, {variant}", [*beeuni, *extra], files, runs, env, before)
        for name, variant, extra, before in variants
        if name in only.split(",")
    )


def row(
    label: str, beeuni: list[str], files: list[Path], runs: int, env: dict[str, str], before: Callable[[], None]
) -> str:
    yamllint = [str(BIN / "yamllint"), "-d", "relaxed", *map(str, files)]
    ours, theirs, peak = timed(beeuni, yamllint, runs, env, before)
    ratio = statistics.median(ours) / statistics.median(theirs)
    best_ratio = min(ours) / min(theirs)
    return (
        f"{label:<72} {min(ours):10.1f} {statistics.median(ours):7.1f}   "
        f"{min(theirs):12.1f} {statistics.median(theirs):7.1f}   {ratio:6.3f}x {best_ratio:6.3f}x   {peak / 1024:5.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--command", default="validate", help="beeuni command to time (validate, resolve)")
    parser.add_argument(
        "--sizes", default="starter,500,1000,2000", help="projects to time: starter and/or tool counts (500,1000,2000)"
    )
    parser.add_argument("--variants", default="fresh,first", help="rows of validate and resolve to time (default: all)")
    parser.add_argument("--format", help="validate's output format (sarif, github, gitlab, json); default text")
    options = parser.parse_args()
    sizes = options.sizes.split(",")
    shown = ["--format", options.format] if options.format else []
    env = {**os.environ, "BEEUNI_CACHE_DIR": tempfile.mkdtemp(prefix="beeuni-bench-cache-")}
    beeuni = str(BIN / "beeuni")
    print(
        f"beeuni {' '.join([options.command, *shown])}, cold process per run, {options.runs} runs; "
        f"times in ms, peak memory in MB; load average {_load()}"
    )
    print(
        f"{'project':<72} {'beeuni min':>10} {'median':>7}   {'yamllint min':>12} {'median':>7}   "
        f"{'ratio':>7} {'(mins)':>7}   {'peak':>5}"
    )
    if "starter" in sizes:
        starter = Path(tempfile.mkdtemp(prefix="beeuni-bench-")) / "starter"  # a copy, outside git
        shutil.copytree(ROOT / "examples" / "starter", starter)
        files = [starter / "beeuni.yaml", *sorted((starter / "config").glob("*.yaml"))]
        command = [beeuni, options.command, *shown, str(starter)]
        print(rows("examples/starter", command, files, options.runs, env, options.variants), flush=True)
        shutil.rmtree(starter.parent)
    for tools in (int(size) for size in sizes if size != "starter"):
        agents = SIZES.get(tools, tools // 4)
        folder = Path(tempfile.mkdtemp(prefix="beeuni-bench-"))
        try:
            files = generate(folder, tools, agents, 10)
            label = f"{tools} tools, {agents} agents, 10 imports"
            print(
                rows(label, [beeuni, options.command, *shown, str(folder)], files, options.runs, env, options.variants),
                flush=True,
            )
        finally:
            shutil.rmtree(folder)
    shutil.rmtree(env["BEEUNI_CACHE_DIR"])
    print(f"load average after: {_load()}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
