"""`beeuni sessions`: how long a local session takes, against the scripted model server.

    .venv/bin/python benchmarks/bench_sessions.py [--runs 3]

For each run, one `beeuni sessions new --wait` of a project with one project tool, whose scripted
model calls the tool once and answers: the time from the command's start to the session's id
(the daemon and opencode's server started, the agent and the model checked, the session made),
to its end (the prompt, the call through the plugin and the daemon, the records kept, both
process groups stopped), and the time of `beeuni sessions log` and `sessions ls` afterwards.
The first run also installs nothing: opencode's plugin package is linked beforehand, as the
tests do. Median and worst of the runs are printed.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from model_server import call, say, scripted_model  # noqa: E402
from opencode_session import sessions_environment  # noqa: E402

BEEUNI = str(Path(sys.executable).parent / "beeuni")
ECHO = """export default {
  description: 'Echo the text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  async execute(args) { return `echo: ${args.text}` },
}
"""
PROMPT = "bench: call echo once"


def project(root: Path) -> Path:
    folder = root / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "beeuni.yaml").write_text("tools:\n  echo: tools/echo.ts\nagents:\n  beeuni:\n    tools: all\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with (
        tempfile.TemporaryDirectory() as temporary,
        scripted_model({PROMPT: [call("echo", {"text": "hi"}), say("done")]}) as model,
    ):
        root = Path(temporary)
        folder = project(root)
        home = root / "home"
        env = {**os.environ, **sessions_environment(home, root / "state", folder, model)}
        to_id, to_end, log, listing = [], [], [], []
        for _ in range(runs):
            started = time.perf_counter()
            process = subprocess.Popen(
                [BEEUNI, "sessions", "new", "--wait", "--prompt", PROMPT],
                cwd=folder,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert process.stdout is not None
            session_id = process.stdout.readline().strip()
            to_id.append(time.perf_counter() - started)
            process.communicate()
            to_end.append(time.perf_counter() - started)
            assert process.returncode == 0, process.returncode
            for command, times in ((["sessions", "log", session_id], log), (["sessions", "ls"], listing)):
                started = time.perf_counter()
                subprocess.run([BEEUNI, *command], cwd=folder, env=env, check=True, capture_output=True)
                times.append(time.perf_counter() - started)
    for name, times in (
        ("start to id", to_id),
        ("start to end", to_end),
        ("sessions log", log),
        ("sessions ls", listing),
    ):
        print(f"{name:14} median {statistics.median(times):7.2f} s   worst {max(times):7.2f} s   ({runs} runs)")


if __name__ == "__main__":
    main()
