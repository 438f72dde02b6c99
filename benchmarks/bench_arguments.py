"""The cost of checking a call's arguments against its module's schema, and its share of the
daemon's per-call overhead.

    .venv/bin/python benchmarks/bench_arguments.py [--calls 2000]

1. The check alone (``daemon/host/arguments.py``: the validator built at load, then ``is_valid`` per
   call), in µs per call, for a small schema (``git_log``: four properties) and a large real one
   (the schemas of the test zoo's 14 MCP-style tools, side by side as one object, seven of them
   filled in), with valid arguments — the common case. jsonschema's cost grows with the number
   of values checked (some 20 to 40 µs each here), so a call with long nested lists costs more.
2. The daemon's per-call overhead: a trivial tool called through the daemon (HTTP, one keep-alive
   client) minus the same call made directly in Bun (``bench_daemon.py``'s measure), p50; and the
   check's share of it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from bench_daemon import DIRECT, EXPERIMENTAL, TRIVIAL
from daemon_helpers import BUN, start_daemon, stop_daemon

ROOT = Path(__file__).resolve().parent.parent
ZOO: dict[str, dict[str, Any]] = json.loads((ROOT / "tests" / "schema_zoo" / "zoo.json").read_text())

SMALL: dict[str, Any] = json.loads((ROOT / "tests" / "schema_zoo" / "git_log.json").read_text())  # git_log
SMALL_ARGS = {"repo_path": ".", "mode": "quiet", "max_count": 10, "window": {"from": "HEAD~3"}}
LARGE = {
    "type": "object",
    "properties": {name: {k: v for k, v in schema.items() if k != "$schema"} for name, schema in ZOO.items()},
}
LARGE_ARGS = {
    "read_text_file": {"path": "README.md", "head": 10},
    "edit_file": {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}] * 3, "dryRun": True},
    "list_issues": {"owner": "sst", "repo": "opencode", "state": "open", "labels": ["bug", "ui"], "per_page": 50},
    "create_entities": {
        "entities": [{"name": f"e{i}", "entityType": "person", "observations": ["x"] * 2} for i in range(3)]
    },
    "postgres_query": {"sql": "select 1", "params": [1, "a", True, None], "timeout_ms": 1000},
    "slack_post_message": {"channel_id": "C1", "text": "hello", "thread_ts": None, "priority": 2},
    "brave_web_search": {"query": "bees", "count": 5, "freshness": "pw"},
}


def check_cost(schema: dict[str, Any], args: dict[str, Any], calls: int) -> tuple[float, float]:
    """µs per check (p50, p99) of ``args`` against ``schema``, with the validator built once."""
    from beeuni.daemon.host.arguments import argument_problem, validator_of

    validator = validator_of(schema)
    texts = {"root": "", "keywords": {}, "other": ""}
    assert argument_problem(validator, args, texts) is None
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        argument_problem(validator, args, texts)
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def daemon_overhead(calls: int) -> float:
    """p50 ms of a trivial call through the daemon minus the same call made directly in Bun."""
    folder = Path(tempfile.mkdtemp(prefix="beeuni-bench-arguments-"))
    try:
        (folder / "tools").mkdir()
        (folder / "tools" / "trivial.ts").write_text(TRIVIAL)
        (folder / "beeuni.yaml").write_text("tools:\n  trivial: tools/trivial.ts\n")
        (folder / "direct.ts").write_text(DIRECT)
        direct = subprocess.run(
            [str(BUN), str(folder / "direct.ts"), str(folder / "tools" / "trivial.ts"), str(calls)],
            capture_output=True,
            text=True,
            check=True,
        )
        direct_p50 = statistics.median(json.loads(direct.stdout))
        daemon = start_daemon(folder, folder / "state", *EXPERIMENTAL, output=subprocess.DEVNULL)
        try:
            url = f"{daemon.url}/beeuni/tools/trivial"
            with httpx.Client(headers=daemon.headers(), timeout=60) as client:
                for n in range(200):  # warm-up
                    client.post(url, json={"n": n}).raise_for_status()
                times = []
                for n in range(calls):
                    start = time.perf_counter()
                    client.post(url, json={"n": n}).raise_for_status()
                    times.append((time.perf_counter() - start) * 1000)
        finally:
            stop_daemon(daemon)
        return float(statistics.median(times) - direct_p50)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args()
    small = check_cost(SMALL, SMALL_ARGS, options.calls)
    large = check_cost(LARGE, LARGE_ARGS, options.calls)
    trivial = check_cost(
        json.loads('{"type": "object", "properties": {"n": {"type": "integer"}}}'), {"n": 1}, options.calls
    )
    overhead_ms = daemon_overhead(options.calls)
    print("argument check per call (validator built at load), µs p50 / p99:")
    print(f"  trivial schema (1 property)          {trivial[0]:8.1f} / {trivial[1]:8.1f}")
    print(f"  small schema (git_log, 4 properties) {small[0]:8.1f} / {small[1]:8.1f}")
    print(f"  large schema (14 MCP tools, nested)  {large[0]:8.1f} / {large[1]:8.1f}")
    print(f"daemon per-call overhead (p50, through the daemon minus direct in Bun): {overhead_ms * 1000:.0f} µs")
    for label, cost in (("small", small[0]), ("large", large[0])):
        print(f"  share of the {label} schema's check: {cost / (overhead_ms * 1000) * 100:.1f} %")


if __name__ == "__main__":
    main()
