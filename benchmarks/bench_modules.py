"""`beeuni validate --modules` beside plain `beeuni validate` (a new process per run).

    .venv/bin/python benchmarks/bench_modules.py [--runs 10]

Projects: the starter example (one project module) and a generated one with 50 modules, each a
small plain-object module with a JSON Schema. Prints the fastest and the median of the runs.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import bun_env

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
MODULE = """export default {{
  description: 'Tool number {i}: looks something up.',
  parameters: {{
    type: 'object',
    properties: {{ id: {{ type: 'string', description: 'What to look up' }}, limit: {{ type: 'integer' }} }},
    required: ['id'],
  }},
  async execute(args: {{ id: string }}) {{
    return `tool {i}: ${{args.id}}`
  }},
}}
"""


def fifty_modules(root: Path, count: int = 50) -> None:
    (root / "tools").mkdir(parents=True)
    lines = ["tools:", "  memory: beeuni:memory", "  show: beeuni:show"]
    for i in range(count):
        (root / "tools" / f"tool_{i}.ts").write_text(MODULE.format(i=i))
        lines.append(f"  tool_{i}: tools/tool_{i}.ts")
    (root / "beeuni.yaml").write_text("\n".join(lines) + "\n")


def timed(command: list[str], runs: int, env: dict[str, str]) -> list[float]:
    first = subprocess.run(command, capture_output=True, env=env, text=True)  # warms the caches
    assert first.returncode == 0, first.stdout + first.stderr
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    options = parser.parse_args()
    env = bun_env()
    beeuni = str(BIN / "beeuni")
    generated = Path(tempfile.mkdtemp(prefix="beeuni-bench-modules-"))
    fifty_modules(generated)
    print(f"cold process per run, {options.runs} runs; times in ms")
    print(f"{'project':<22} {'command':<26} {'min':>7} {'median':>7}")
    try:
        for label, project in (("examples/starter", ROOT / "examples" / "starter"), ("50 modules", generated)):
            for command in (["validate"], ["validate", "--modules"]):
                times = timed([beeuni, *command, str(project)], options.runs, env)
                shown = " ".join(command)
                print(f"{label:<22} {shown:<26} {min(times):7.0f} {statistics.median(times):7.0f}")
    finally:
        shutil.rmtree(generated)


if __name__ == "__main__":
    main()
