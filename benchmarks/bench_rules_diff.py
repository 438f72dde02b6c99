"""`beeuni rules diff` over a generated corpus: projects per second with one worker, with every
local core, and on a Dask LocalCluster.

    .venv/bin/python benchmarks/bench_rules_diff.py [--projects 1000] [--runs 3]

The change compared is a real one: the base rules are the shipped ones without the `show` Beeuni
tool, so that most projects are affected. Two corpora: the generated mix (generate_corpus.py) and
as many starter-like small projects.

Each mode is timed warm — the rules compiled and the files in the disk cache by a first run; a
Dask cluster's workers stay up between runs, a local pool is started by each run (its start is
in the figure). The best and the median of the runs are printed, in projects per second of
wall-clock time, and (not for Dask, whose workers' CPU time this process cannot see) per second
of CPU time, which another load on a shared machine does not disturb. The load average is
printed before and after.
One cold end-to-end run of the command (a new process, a new pool) is timed too.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from beeuni.engine.corpus.run import PackedRules, local_workers, pack, run_dask, run_local
from beeuni.engine.project import load_rules, shipped_rules
from generate_corpus import generate_corpus, starter_like

BIN = Path(sys.executable).parent
Runner = Callable[[list[tuple[str, str]], PackedRules, PackedRules], list[dict[str, object]]]


def base_rules(folder: Path) -> Path:
    """The shipped rules before `show` was a Beeuni tool."""
    shutil.copytree(shipped_rules(), folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    source = (folder / "tools.rules").read_text()
    (folder / "tools.rules").write_text(source.replace('"memory", "show"]', '"memory"]', 1))
    return folder


def small_corpus(folder: Path, projects: int) -> None:
    rng = random.Random(1)
    folder.mkdir()
    for index in range(projects):
        (folder / f"s{index:04d}").mkdir()
        starter_like(folder / f"s{index:04d}", rng)
    (folder / "corpus").write_text("".join(f"s{index:04d}\n" for index in range(projects)))


def listed(folder: Path) -> list[tuple[str, str]]:
    return [(name, str(folder / name)) for name in (folder / "corpus").read_text().split()]


def cpu_seconds() -> float:
    """CPU time of this process and of its ended children (a local pool's, once shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def rate(run: Callable[[], list[dict[str, object]]], projects: int, runs: int, cpu: bool) -> str:
    """Best and median projects per wall-clock second; with ``cpu``, per CPU second too (the
    figure the machine's other load does not disturb)."""
    run()  # warm: the rules compiled and loaded, the files in the disk cache
    rates, cpu_rates = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        results = run()
        rates.append(projects / (time.perf_counter() - start))
        cpu_rates.append(projects / (cpu_seconds() - start_cpu))
        assert len(results) == projects
    per_cpu = f"{statistics.median(cpu_rates):8.0f}" if cpu else f"{'-':>8}"
    return f"{max(rates):8.0f} {statistics.median(rates):8.0f} {per_cpu}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="beeuni-bench-diff-"))
    os.environ.setdefault("BEEUNI_CACHE_DIR", str(scratch / "cache"))
    try:
        mixed, small = scratch / "mixed", scratch / "small"
        shapes = generate_corpus(mixed, options.projects, seed=12)
        small_corpus(small, options.projects)
        base, new = pack(load_rules(base_rules(scratch / "base-rules"))), pack(load_rules())
        cores = local_workers()
        print(f"corpus of {options.projects}: {shapes}")
        print(f"{cores} local cores; load average before: {os.getloadavg()[0]:.2f}")
        print(f"rules diff, warm, projects per second: wall clock (best, median of {options.runs} runs), CPU")
        header = f"{'best':>8} {'median':>8} {'per CPU':>8}"
        print(f"{'':<28} {'mixed corpus':^26}   {'small projects':^26}")
        print(f"{'mode':<28} {header}   {header}")
        corpora = [(len(listed(mixed)), listed(mixed)), (len(listed(small)), listed(small))]

        def row(label: str, runner: Runner, cpu: bool = True) -> None:
            cells = [rate(lambda items=items: runner(items, base, new), n, options.runs, cpu) for n, items in corpora]
            print(f"{label:<28} {cells[0]}   {cells[1]}", flush=True)

        row("1 worker (this process)", lambda items, b, n: run_local(items, b, n, 1))
        for workers in sorted({2, cores} - {1}):
            row(f"{workers} local processes", lambda items, b, n, w=workers: run_local(items, b, n, w))
        from distributed import LocalCluster

        for workers in sorted({1, cores}):
            with LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            ) as cluster:
                address = cluster.scheduler_address
                # the cluster's workers outlive each run: their CPU time is not counted here
                row(f"Dask LocalCluster, {workers} wkr", lambda items, b, n, a=address: run_dask(items, b, n, a), False)
        command = [str(BIN / "beeuni"), "rules", "diff", "--base", str(scratch / "base-rules")]
        start = time.perf_counter()
        done = subprocess.run([*command, "--corpus", str(mixed / "corpus")], capture_output=True)
        elapsed = time.perf_counter() - start
        print(f"cold command, mixed corpus, {cores} workers: {elapsed:.2f} s (exit {done.returncode})")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
