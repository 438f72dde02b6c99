"""Cold runs of `validate`, `tools ls` and `resolve` on the inputs issue 9 found slow.

    .venv/bin/python benchmarks/bench_hostile.py [--runs 3]

Each input is written to a temporary repository; each command runs in a new process. Prints the
fastest and the slowest wall time per input and command, and the peak memory (from ``wait4``).
Before issue 9 these took 6 to 55 s; the promise is that every run ends well within 10 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = (["validate"], ["tools", "ls"], ["resolve"])


def lookalikes(count: int) -> str:
    """``count`` project tools, and an agent listing ``count`` unknown names one letter longer."""
    tools = "".join(f"  tool_{i:04d}: tools/t{i}.ts\n" for i in range(count))
    names = ", ".join(f"tool_{i:04d}x" for i in range(count))
    return f"tools:\n{tools}agents:\n  a:\n    tools: [{names}]\n"


def long_names(length: int) -> str:
    """A tool name and an unknown connector and tool name of ``length`` characters."""
    name, other = "a" * length, "a" * (length - 1) + "b"
    return f"tools:\n  ? {name}\n  : tools/x.ts\nagents:\n  x:\n    connectors: [{other}]\n    tools: [{other}]\n"


INPUTS = {
    "1,000 look-alike unknown names": lookalikes(1000),
    "2,000 look-alike unknown names": lookalikes(2000),
    "two 60,000-character names": long_names(60_000),
    "tools: [1:00:00…] (1.2 MB)": "tools: [1" + ":00" * 400_000 + "]\n",
    "secrets: [0x + 4,000 f]": "agents:\n  a:\n    secrets: [0x" + "f" * 4000 + "]\n",
}


def run_once(command: list[str]) -> tuple[float, int, int]:
    """Wall time in ms, peak resident set in KiB and exit status of one cold run."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    return (time.perf_counter() - start) * 1000, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'input':34} {'command':9} {'fastest':>9} {'slowest':>9} {'peak':>8}  exit")
    with tempfile.TemporaryDirectory() as temporary:
        for label, text in INPUTS.items():
            repo = Path(temporary) / str(abs(hash(label)))
            repo.mkdir()
            (repo / "beeuni.yaml").write_text(text)
            for command in COMMANDS:
                runs = [run_once([str(BIN / "beeuni"), *command, str(repo)]) for _ in range(args.runs)]
                times = [ms for ms, _, _ in runs]
                peak = max(kib for _, kib, _ in runs)
                codes = sorted({code for _, _, code in runs})
                print(
                    f"{label:34} {' '.join(command):9} {min(times):7.0f}ms {max(times):7.0f}ms "
                    f"{peak / 1024:6.0f}MB  {','.join(map(str, codes))}"
                )


if __name__ == "__main__":
    main()
