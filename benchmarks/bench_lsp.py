"""Language-server and SARIF figures.

1. `beeuni lsp`, warm: the time from one edit of a manifest (a `didChange` of one character in
   a tool's value) to the diagnostics it publishes, over many edits; p50 and p99, and the
   server's CPU time per edit (from /proc, on Linux). The manifest holds 2,000 tools and 500
   agents in one file.
2. `beeuni validate --format sarif` beside the text output, cold, on the large benchmark project
   (2,000 tools, 500 agents, 10 imports).

Run with `.venv/bin/python benchmarks/bench_lsp.py` (after `make setup`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from generate import generate  # noqa: E402
from lsp_client import LspClient  # noqa: E402

BIN = Path(sys.executable).parent


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process so far (Linux), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lsp_edits(root: Path, edits: int, warmup: int, env: dict[str, str]) -> tuple[list[float], float | None]:
    """The time of each edit's diagnostics, and the server's CPU seconds per edit."""
    manifest = root / "beeuni.yaml"
    text = manifest.read_text()
    lines = text.split("\n")
    target = next(i for i, line in enumerate(lines) if line.startswith("  tool_") and ": tools/" in line)
    column = lines[target].index("tools/") + len("tools/")
    client = LspClient(root, env=env)
    try:
        client.initialize(root)
        uri = client.open(manifest, text)
        client.diagnostics(uri)
        timings = []
        cpu_before = None
        for n in range(warmup + edits):
            if n == warmup:
                cpu_before = cpu_seconds(client.process.pid)
            # type a character into the module path, then take it out again: errors come and go
            insert = n % 2 == 0
            end = column + (0 if insert else 1)
            range_ = {"start": {"line": target, "character": column}, "end": {"line": target, "character": end}}
            started = time.perf_counter()
            client.edit(uri, range_, "x" if insert else "")
            client.diagnostics(uri)
            if n >= warmup:
                timings.append(time.perf_counter() - started)
        cpu_after = cpu_seconds(client.process.pid)
        cpu = None if cpu_before is None or cpu_after is None else (cpu_after - cpu_before) / edits
        return timings, cpu
    finally:
        client.close()


def cold(command: list[str], runs: int, cwd: Path, env: dict[str, str]) -> list[float]:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        timings.append(time.perf_counter() - started)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--lsp-only", action="store_true", help="measure the language server only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "BEEUNI_CACHE_DIR": str(Path(folder) / "cache"), "NO_COLOR": "1"}
        one_file = Path(folder) / "one-file"
        generate(one_file, 2000, 500, 0)
        timings, cpu = lsp_edits(one_file, args.edits, 10, env)
        print(f"lsp: diagnostics after one edit, 2,000 tools and 500 agents in one file, {len(timings)} edits:")
        shown_cpu = "n/a" if cpu is None else f"{cpu * 1000:.1f} ms"
        print(
            f"  p50 {percentile(timings, 0.5) * 1000:.1f} ms   p99 {percentile(timings, 0.99) * 1000:.1f} ms"
            f"   server CPU per edit {shown_cpu}"
        )
        if args.lsp_only:
            return
        large = Path(folder) / "large"
        generate(large, 2000, 500, 10)
        beeuni = str(BIN / "beeuni")
        cold([beeuni, "validate"], 2, large, env)  # compile the rules once
        print(f"validate, 2,000 tools / 500 agents / 10 imports, cold process, median of {args.runs}:")
        for label, extra in (("text", []), ("sarif", ["--format", "sarif"]), ("github", ["--format", "github"])):
            runs = cold([beeuni, "validate", *extra], args.runs, large, env)
            print(f"  --format {label:<6} {statistics.median(runs) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
