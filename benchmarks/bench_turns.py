"""A served tool's call as the model meets it, on both harnesses, and a turn's start.

    .venv/bin/python benchmarks/bench_turns.py [--calls 50] [--runs 3] [--harness both|standard|experimental]

One `beeuni sessions new --wait` per harness and run, against the scripted model server: the
model calls a trivial project tool (`echo`) ``--calls`` times, one call a step, then answers.
Figures:

* a call's overhead, model to model: from the model's answer asking for the call (its last byte
  sent) to the harness's next request carrying the result — on the experimental harness the turn
  loop reading the answer, the call run in the daemon's process through the module host and the
  next request; on the standard harness opencode reading the answer, the plugin's HTTP call to the
  daemon with its token, the same module host, opencode's next request. p50 and p99 over every
  call of every run.
* a turn's start: from the command's start to the model's first request (the daemon, and on the
  standard harness opencode, started; the model chosen; the tools offered).

Median and worst of the runs for the start. Tests assert no timings; the figures are docs/benchmarks.md's.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bench_sessions import BEEUNI, ECHO  # noqa: E402
from model_server import call, say, scripted_model  # noqa: E402
from opencode_session import opencode_version, sessions_environment  # noqa: E402


def project(root: Path) -> Path:
    folder = root / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "beeuni.yaml").write_text("tools:\n  echo: tools/echo.ts\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "b"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True)
    return folder


def run(harness: str, calls: int, key: str) -> tuple[float, list[float]]:
    """One session: its start (seconds) and each call's overhead (seconds)."""
    script = {key: [*(call("echo", {"text": str(i)}) for i in range(calls)), say("done")]}
    with tempfile.TemporaryDirectory() as temporary, scripted_model(script) as model:
        root = Path(temporary)
        folder = project(root)
        env = {**os.environ, **sessions_environment(root / "home", root / "state", folder, model), "NO_COLOR": "1"}
        extra = ["--harness", "experimental"] if harness == "experimental" else []
        started = time.monotonic()
        done = subprocess.run(
            [BEEUNI, "sessions", "new", "--prompt", f"{key} go", "--wait", *extra],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"{harness}: {done.stderr}")
        requests = model.conversation(key)
        gaps = [later.received - earlier.answered for earlier, later in itertools.pairwise(requests)]
        return requests[0].received - started, gaps[:calls]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--harness", choices=("both", "standard", "experimental"), default="both")
    options = parser.parse_args()
    harnesses = ["experimental", "standard"] if options.harness == "both" else [options.harness]
    if "standard" in harnesses and opencode_version() is None:
        harnesses.remove("standard")
        print("standard: skipped, opencode cannot start here")
    for harness in harnesses:
        starts, gaps = [], []
        for index in range(options.runs):
            start, overheads = run(harness, options.calls, f"bench-{harness}-{index}")
            starts.append(start)
            gaps += overheads
        gaps.sort()
        p50 = statistics.median(gaps) * 1000
        p99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))] * 1000
        print(f"{harness}: a call, model to model: p50 {p50:.2f} ms, p99 {p99:.2f} ms ({len(gaps)} calls)")
        print(f"{harness}: a turn's start: median {statistics.median(starts):.2f} s, worst {max(starts):.2f} s")


if __name__ == "__main__":
    main()
