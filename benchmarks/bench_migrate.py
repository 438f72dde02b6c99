"""`beeuni tools migrate` on a project with 20 opencode custom tools (a new process per run).

    .venv/bin/python benchmarks/bench_migrate.py [--runs 5]

The project: 16 files in `.opencode/tools/` written with opencode's `tool()` (12 with a default
export, 4 with two named exports each: 20 tools), and two copies of Beeuni tools in
`harnesses/opencode/tools/`, all committed in git; `@opencode-ai/plugin` resolves from the
repository's node_modules. `--dry-run` plans (parse, evaluate in Bun, ask git what it can
restore, rules); the real run also writes 20 modules, edits the manifest and deletes 18 files
(git restores them) — each real run on a fresh copy. Prints the fastest and the median of the
runs.
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
DEFAULT_EXPORT = """import {{ tool }} from "@opencode-ai/plugin"

export default tool({{
  description: "Tool number {i}: looks an order up.",
  args: {{
    order: tool.schema.string().describe("The order number"),
    limit: tool.schema.number().int().min(1).max(50).default(10),
    status: tool.schema.enum(["open", "closed"]).optional(),
  }},
  async execute(args, context) {{
    const key = process.env.ORDERS_API_KEY
    return `tool {i}: ${{args.order}} (${{key ? "key" : "no key"}})`
  }},
}})
"""
NAMED_EXPORTS = """import {{ tool }} from "@opencode-ai/plugin"

export const add = tool({{
  description: "Add two numbers ({i})",
  args: {{ a: tool.schema.number(), b: tool.schema.number() }},
  async execute(args) {{
    return args.a + args.b
  }},
}})

export const multiply = tool({{
  description: "Multiply two numbers ({i})",
  args: {{ a: tool.schema.number(), b: tool.schema.number() }},
  async execute(args) {{
    return args.a * args.b
  }},
}})
"""


def twenty_tools(root: Path) -> None:
    tools = root / ".opencode" / "tools"
    tools.mkdir(parents=True)
    for i in range(12):
        (tools / f"lookup_{i}.ts").write_text(DEFAULT_EXPORT.format(i=i))
    for i in range(4):
        (tools / f"math_{i}.ts").write_text(NAMED_EXPORTS.format(i=i))
    copies = root / "harnesses" / "opencode" / "tools"
    copies.mkdir(parents=True)
    for name in ("memory", "show"):
        shutil.copy(ROOT / "rules" / "beeuni_tools" / f"{name}.ts", copies / f"{name}.ts")
    (root / "beeuni.yaml").write_text("tools:\n  memory: beeuni:memory\n  show: beeuni:show\n")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "opencode tools"], check=True)


def run(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    assert done.returncode == 0 and "convert" in done.stdout, done.stdout + done.stderr
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    env = bun_env()
    beeuni = str(BIN / "beeuni")
    work = Path(tempfile.mkdtemp(prefix="beeuni-bench-migrate-"))
    (work / "node_modules").symlink_to(ROOT / "node_modules")  # where `bun install` would have put them
    template = work / "template"
    twenty_tools(template)
    try:
        project = work / "project"
        shutil.copytree(template, project, symlinks=True)
        run([beeuni, "tools", "migrate", "--dry-run", str(project)], env)  # warms the caches
        dry = [run([beeuni, "tools", "migrate", "--dry-run", str(project)], env) for _ in range(options.runs)]
        real = []
        for _ in range(options.runs):
            shutil.rmtree(project)
            shutil.copytree(template, project)
            real.append(run([beeuni, "tools", "migrate", str(project)], env))
        print(f"cold process per run, {options.runs} runs; 20 opencode tools in 16 files, 2 Beeuni copies; ms")
        print(f"{'command':<30} {'min':>7} {'median':>7}")
        for label, times in (("tools migrate --dry-run", dry), ("tools migrate", real)):
            print(f"{label:<30} {min(times):7.0f} {statistics.median(times):7.0f}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
