"""The daemon: start-up, per-call overhead, throughput, memory.

    .venv/bin/python benchmarks/bench_daemon.py [--calls 2000] [--clients 32]

1. Process start to ready (the connection handed to its starter, the first call answered) with the five
   Beeuni tools and 20 project tools, served from their release (a git repository: the daemon
   copies the commit's files into its private folder first), on the experimental harness (whose
   daemon loads its 9 own tools' modules too) and on the standard one; the same for a release of 20,000
   tracked files (`--release-files`), and a convergence on the next commit (one tool added), from
   the starter's request to the daemon's answer.
2. Per-call overhead: the same trivial tool called through the daemon (HTTP, one keep-alive
   client) and directly in one Bun process; p50 and p99 of each, and their difference.
3. Throughput of the trivial tool with 32 concurrent clients (Bun's fetch, keep-alive).
4. Memory: the resident size of the daemon and of every process it started (the module host),
   idle after the calls, and the peak seen while the clients ran.

    .venv/bin/python benchmarks/bench_daemon.py --against OTHER/.venv/bin/beeuni [--rounds 13]

compares this install with another one (a worktree of the revision before a change, set up by
its own `make setup`): in each of ``--rounds`` rounds, each install in turn — the order
alternating from round to round — starts a release for the first time and again on the same
state, on each harness, and answers 300 calls of the trivial tool from one keep-alive client. It
prints the medians of both, and this install's difference in per cent. On a machine whose speed
moves from minute to minute a comparison is only fair so: one series of each after the other
differs by more than a change does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import BEEUNI  # noqa: E402
from daemon_helpers import BUN, Daemon, start_daemon, stop_daemon  # noqa: E402

EXPERIMENTAL = ("--harness", "experimental")
TRIVIAL = """export default {
  description: 'Returns its argument.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } } },
  async execute(args) { return String(args.n) },
}
"""
DIRECT = """
const tool = (await import(process.argv[2])).default
const runs = Number(process.argv[3])
const times = []
for (let i = 0; i < runs; i++) {
  const start = performance.now()
  await tool.execute({ n: i }, { env: {}, signal: new AbortController().signal })
  times.push(performance.now() - start)
}
console.log(JSON.stringify(times))
"""


# The load generator is Bun's fetch (keep-alive), so that the client's own cost stays small.
CLIENT = """
const [url, token] = [process.argv[2], process.argv[3]]
const [count, clients] = [Number(process.argv[4]), Number(process.argv[5])]
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const call = async (n) => {
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ n }) })
  if (!response.ok) throw new Error(`answered ${response.status}: ${await response.text()}`)
  await response.json()
}
for (let i = 0; i < 200; i++) await call(i)
const latencies = []
for (let i = 0; i < count; i++) {
  const start = performance.now()
  await call(i)
  latencies.push(performance.now() - start)
}
let done = 0
const began = performance.now()
await Promise.all(Array.from({ length: clients }, async () => {
  for (let i = 0; i < count / clients; i++) { await call(i); done++ }
}))
console.log(JSON.stringify({ latencies, throughput: done / ((performance.now() - began) / 1000) }))
"""


def project(folder: Path) -> None:
    (folder / "tools").mkdir(parents=True)
    lines = ["tools:"] + [
        f"  {name}: beeuni:{name}" for name in ("web_search", "image_search", "scrape_webpage", "memory", "show")
    ]
    for i in range(20):
        (folder / "tools" / f"tool_{i:02d}.ts").write_text(TRIVIAL)
        lines.append(f"  tool_{i:02d}: tools/tool_{i:02d}.ts")
    (folder / "beeuni.yaml").write_text("\n".join(lines) + "\n")
    git(folder, "init", "-q")
    commit(folder)


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def commit(folder: Path) -> None:
    git(folder, "add", "-A")
    git(folder, "-c", "user.email=bench@example.com", "-c", "user.name=bench", "commit", "-q", "-m", "release")


def data_files(folder: Path, count: int) -> None:
    """``count`` tracked files of 100 to 3,000 bytes beside the tools, in 200 folders."""
    for i in range(count):
        path = folder / "data" / f"part{i % 200}" / f"file{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{i}\n" + "x" * (100 + (i * 7919) % 2900) + "\n")
    commit(folder)


def timed_starts(
    folder: Path, work: Path, runs: int, label: str, again: bool = False, harness: tuple[str, ...] = EXPERIMENTAL
) -> Any:
    """Start the daemon ``runs`` times; print the median start to ready; the last one, running.
    Each start has a state folder of its own (the release is loaded as the first time), or with
    ``again`` one they share, used by a start before (as each turn of a session starts a daemon on
    the release the last one served). ``harness``: the daemon's arguments naming it; the
    experimental harness's daemon also loads the modules of its own tools (``HARNESS_MODULES``)."""
    starts, daemon = [], None
    if again:
        stop_daemon(start_daemon(folder, work / f"state-{label}", *harness, output=subprocess.DEVNULL))
    for run in range(runs):
        if daemon is not None:
            stop_daemon(daemon)
        state = work / (f"state-{label}" if again else f"state-{label}-{run}")
        took, daemon = timed_start(folder, state, harness)
        starts.append(took)
    print(f"start to ready ({label}): min {min(starts):.0f} ms, median {statistics.median(starts):.0f} ms")
    return daemon


def timed_start(folder: Path, state: Path, harness: tuple[str, ...], program: str = BEEUNI) -> tuple[float, Daemon]:
    """Start ``program``'s daemon on ``folder`` with ``state``: the ms to its first call's answer,
    and the daemon, running."""
    began = time.perf_counter()
    daemon = start_daemon(folder, state, *harness, output=subprocess.DEVNULL, program=program)
    daemon.call("tool_00", {"n": 1}).raise_for_status()
    return (time.perf_counter() - began) * 1000, daemon


def client_run(work: Path, daemon: Daemon, count: int, clients: int) -> dict[str, Any]:
    """``CLIENT`` against ``daemon``'s ``tool_00``: the latencies of ``count`` calls one after the
    other (after its warm-up) and the throughput of ``clients`` at once."""
    (work / "client.ts").write_text(CLIENT)
    url = f"{daemon.url}/beeuni/tools/tool_00"
    arguments = [url, daemon.token, str(count), str(clients)]
    client = subprocess.run([str(BUN), str(work / "client.ts"), *arguments], capture_output=True, text=True)
    if client.returncode:
        raise SystemExit(f"the load generator failed:\n{client.stderr}")
    measured: dict[str, Any] = json.loads(client.stdout)
    return measured


def resident_kib(root: int) -> int:
    """The resident size of ``root`` and of every process below it, in KiB."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            children = [
                c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()
            ]
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        pending += [int(child) for child in children]
    return total


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def compared(work: Path, other: str, rounds: int) -> None:
    """This install against ``other`` (another install's ``beeuni``), in interleaved rounds."""
    programs = {"this": BEEUNI, "other": other}
    figures: dict[str, dict[str, list[float]]] = {}  # in ms, by figure and install
    for round_ in range(rounds):
        order = list(programs) if round_ % 2 == 0 else list(reversed(programs))
        for name in order:
            for harness, arguments in (("experimental", EXPERIMENTAL), ("standard", ())):
                state = work / f"state-{name}-{harness}-{round_}"
                for start in ("first start", "later start"):
                    took, daemon = timed_start(work / "project", state, arguments, programs[name])
                    try:
                        figures.setdefault(f"{start}, {harness} harness", {}).setdefault(name, []).append(took)
                        if start == "later start" and harness == "experimental":
                            latencies = client_run(work, daemon, 300, 1)["latencies"]
                            row = figures.setdefault("a call through the daemon, p50, one keep-alive client", {})
                            row.setdefault(name, []).append(percentile(latencies, 0.5))
                    finally:
                        stop_daemon(daemon)
    print(f"this install against {other}, {rounds} interleaved rounds (medians)")
    for label, by in figures.items():
        this, that = statistics.median(by["this"]), statistics.median(by["other"])
        print(f"{label}: {this:.2f} ms against {that:.2f} ms ({100 * (this / that - 1):+.1f} %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--release-files", type=int, default=20_000)
    parser.add_argument("--against", metavar="BEEUNI", help="another install's beeuni, to compare with")
    parser.add_argument("--rounds", type=int, default=13, help="interleaved rounds of --against")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="beeuni-bench-daemon-"))
    if options.against:
        try:
            project(work / "project")
            compared(work, options.against, options.rounds)
        finally:
            shutil.rmtree(work)
        return
    try:
        project(work / "project")
        label = "5 Beeuni + 20 project tools + the experimental harness's 9"
        stop_daemon(timed_starts(work / "project", work, options.starts, label))
        label = "5 Beeuni + 20 project tools, the standard harness"
        stop_daemon(timed_starts(work / "project", work, options.starts, label, harness=()))
        label = "5 Beeuni + 20 project tools, a release started before"
        daemon = timed_starts(work / "project", work, options.starts, label, again=True)
        if options.release_files:
            shutil.copytree(work / "project", work / "large", symlinks=True)
            data_files(work / "large", options.release_files)
            label = f"the same in a release of {options.release_files:,} more files"
            large = timed_starts(work / "large", work, options.starts, label)
            converging = []
            for run in range(options.starts):
                tools = work / "large" / "tools"
                (tools / f"added_{run}.ts").write_text(TRIVIAL)
                manifest = work / "large" / "beeuni.yaml"
                manifest.write_text(manifest.read_text() + f"  added_{run}: tools/added_{run}.ts\n")
                commit(work / "large")
                began = time.perf_counter()
                answer = large.converge()
                converging.append((time.perf_counter() - began) * 1000)
                assert answer["event"] == "converged", answer
                large.event()  # restart_runtime, once no call runs
            print(f"convergence on the next commit (one tool added): median {statistics.median(converging):.0f} ms")
            stop_daemon(large)

        process = daemon.process
        (work / "direct.ts").write_text(DIRECT)
        module = work / "project" / "tools" / "tool_00.ts"
        peak = [0]
        running = threading.Event()

        def watch() -> None:
            while not running.wait(0.05):
                peak[0] = max(peak[0], resident_kib(process.pid))

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            measured = client_run(work, daemon, options.calls, options.clients)
        except SystemExit:
            stop_daemon(daemon)
            raise
        finally:
            running.set()
            watcher.join()
        idle = resident_kib(process.pid)
        direct = json.loads(
            subprocess.run(
                [str(BUN), str(work / "direct.ts"), str(module), str(options.calls)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        through = measured["latencies"]
        for label, fraction in (("p50", 0.5), ("p99", 0.99)):
            overhead = percentile(through, fraction) - percentile(direct, fraction)
            daemon_ms, direct_ms = percentile(through, fraction), percentile(direct, fraction)
            print(
                f"per-call overhead {label}: {overhead:.2f} ms "
                f"(through the daemon {daemon_ms:.2f} ms, direct in Bun {direct_ms:.3f} ms)"
            )
        print(f"throughput, {options.clients} concurrent clients: {measured['throughput']:.0f} calls/s")
        print(f"memory (daemon and its processes): idle {idle / 1024:.0f} MiB, peak {peak[0] / 1024:.0f} MiB")
        stop_daemon(daemon)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
