"""`beeuni sessions new|log|ls` for real: the daemon, Bun and the pinned opencode, against the
scripted OpenAI-compatible model server (model_server.py) and the weather API's stand-in.

One session, started once for the module, calls the design document's weather_now (with its
secret) and a tool that throws; the tests read its log. Others start sessions of their own: no
model configured, interrupted with --wait (SIGINT), and a runner without --wait that is stopped
(SIGTERM). After each, no process of the session is left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BEEUNI, ROOT, Result, run_beeuni
from daemon_helpers import wait_until
from model_server import MODEL_ID, ScriptedModel, call, say, scripted_model
from opencode_session import sessions_environment
from platform_standin import WEATHER_KEY, PlatformStandIn

SESSION_LIMIT = 600  # seconds one `sessions new --wait` may take (a failure, not a measurement)
WEATHER_NOW = (ROOT / "tests" / "modules" / "weather_now.ts").read_text()
PROMPT = "Call the weather_now tool once with city Berlin and print its output."
THROWS = """export default {
  description: 'Look up an order.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  async execute(args) { throw new Error(`the orders API is down (order ${args.id})`) },
}
"""
BIG = """export default {
  description: 'A long report.',
  parameters: { type: 'object', properties: {} },
  async execute() { return Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\\n') },
}
"""
HIDDEN = """export default {
  description: 'A tool the session agent does not see.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'hidden' },
}
"""
# fetches the stand-in once (so the test knows the call has started), then waits for its abort
BLOCKS = """export default {
  description: 'Wait until the call is aborted.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) {
    await fetch('STANDIN/v1/current?city=blocking').catch(() => null)
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve))
    return 'aborted'
  },
}
"""
MANIFEST = """tools:
  weather_now: tools/weather_now.ts
  lookup_order: tools/lookup_order.ts
  internal: tools/internal.ts
  wait_forever: tools/wait_forever.ts
  big_report: tools/big_report.ts
  broken: tools/broken.ts
agents:
  beeuni:
    tools: {exclude: [internal]}
    secrets: [WEATHER_API_KEY]
"""


class Sessions:
    """A project whose sessions run in ``root``: opencode's home and beeuni's state folder there."""

    def __init__(self, root: Path, standin: PlatformStandIn) -> None:
        self.root = root
        self.project = root / "project"
        self.state = root / "state"
        (self.project / "tools").mkdir(parents=True)
        tools = self.project / "tools"
        (tools / "weather_now.ts").write_text(WEATHER_NOW.replace("https://api.weather.example.com", standin.url))
        (tools / "lookup_order.ts").write_text(THROWS)
        (tools / "internal.ts").write_text(HIDDEN)
        (tools / "big_report.ts").write_text(BIG)
        (tools / "broken.ts").write_text("throw new Error('this module does not load')\n")
        (tools / "wait_forever.ts").write_text(BLOCKS.replace("STANDIN", standin.url))
        (self.project / "beeuni.yaml").write_text(MANIFEST)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)

    def env(self, model: ScriptedModel | None, base_url: str | None = None) -> dict[str, str]:
        """``model`` as the user's opencode configuration."""
        return sessions_environment(self.root / "home", self.state, self.project, model, base_url)

    def beeuni(self, *args: str, model: ScriptedModel | None = None, stdin: str | None = None) -> Result:
        return run_beeuni(list(args), cwd=self.project, stdin=stdin, env=self.env(model))

    def new(
        self, model: ScriptedModel | None, *args: str, base_url: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [BEEUNI, "sessions", "new", *args],
            cwd=self.project,
            env={**os.environ, "NO_COLOR": "1", **self.env(model, base_url)},
            capture_output=True,
            text=True,
            timeout=SESSION_LIMIT,
        )

    def log(self, session_id: str) -> dict[str, Any]:
        shown = self.beeuni("sessions", "log", session_id, "--json")
        assert shown.code == 0, shown.stderr
        document: dict[str, Any] = json.loads(shown.stdout)
        return document

    def strays(self) -> list[str]:
        """The processes still running that belong to these sessions (they carry the state
        folder in their environment, or the project on their command line)."""
        return processes_mentioning(str(self.state), str(self.project))


def processes_mentioning(*marks: str) -> list[str]:
    """The other processes whose environment or command line holds one of ``marks``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environment, command = (entry / "environ").read_bytes(), (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if any(mark.encode() in environment or mark.encode() in command for mark in marks):
            shown = command.replace(b"\0", b" ").decode("utf-8", "replace")
            found.append(f"{entry.name}: {shown}")
    return found


@pytest.fixture(scope="module")
def standin() -> Iterator[PlatformStandIn]:
    with PlatformStandIn() as server:
        yield server


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, standin: PlatformStandIn) -> Sessions:
    found = Sessions(tmp_path_factory.mktemp("sessions"), standin)
    stored = found.beeuni("secrets", "set", "WEATHER_API_KEY=-", stdin=WEATHER_KEY)
    assert stored.code == 0, stored.stderr
    return found


@pytest.fixture(scope="module")
def weather(sessions: Sessions) -> Iterator[tuple[ScriptedModel, subprocess.CompletedProcess[str]]]:
    """The design document's test of a tool: one session that calls weather_now for Berlin, then
    a tool that throws, then answers."""
    turns = [
        call("weather_now", {"city": "Berlin"}),
        call("lookup_order", {"id": "A-17"}),
        call("big_report", {}),
        say("Berlin: 7.5 °C."),
    ]
    with scripted_model({PROMPT: turns}) as model:
        yield model, sessions.new(model, "--wait", "--prompt", PROMPT)


def tool_calls(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for message in document["messages"] for part in message["parts"] if part["type"] == "tool"]


def test_a_session_calls_weather_now_with_its_secret(sessions: Sessions, weather: Any) -> None:
    _, finished = weather
    assert finished.returncode == 0, finished.stderr
    session_id, answer = finished.stdout.split("\n", 1)
    assert session_id.startswith("ses_")
    assert answer == "Berlin: 7.5 °C.\n"
    document = sessions.log(session_id)
    assert document["session"]["status"] == "completed"
    assert document["session"]["model"] == f"scripted/{MODEL_ID}"
    first = tool_calls(document)[0]
    assert (first["tool"], first["arguments"], first["status"]) == ("weather_now", {"city": "Berlin"}, "completed")
    assert json.loads(first["output"]) == {"city": "Berlin", "temperature_c": 7.5, "conditions": "light rain"}
    assert first["spilled"] is None
    text = sessions.beeuni("sessions", "log", session_id)
    assert text.code == 0, text.stderr
    assert f"session {session_id}: completed (agent beeuni, model scripted/{MODEL_ID}" in text.stdout
    assert f"user: {PROMPT}" in text.stdout
    assert '  tool weather_now {"city": "Berlin"}: completed\n    {\n' in text.stdout


def test_a_tool_that_throws_is_logged_with_status_error_and_its_message(sessions: Sessions, weather: Any) -> None:
    session_id = weather[1].stdout.split("\n", 1)[0]
    second = tool_calls(sessions.log(session_id))[1]
    assert (second["tool"], second["arguments"], second["status"]) == ("lookup_order", {"id": "A-17"}, "error")
    assert "the orders API is down (order A-17)" in second["error"]
    text = sessions.beeuni("sessions", "log", session_id).stdout
    assert '  tool lookup_order {"id": "A-17"}: error\n    ' in text
    assert "the orders API is down (order A-17)" in text


def test_a_tool_the_agent_does_not_see_is_not_offered(weather: Any) -> None:
    model, finished = weather
    assert finished.returncode == 0, finished.stderr
    offered = model.conversation(PROMPT)[0].tools
    assert "weather_now" in offered and "lookup_order" in offered
    assert "internal" not in offered
    assert "broken" not in offered  # nor one that does not load


def test_a_spilled_output_is_logged_with_its_file(sessions: Sessions, weather: Any) -> None:
    session_id = weather[1].stdout.split("\n", 1)[0]
    third = tool_calls(sessions.log(session_id))[2]
    assert (third["tool"], third["status"]) == ("big_report", "completed")
    assert third["spilled"] and "big_report" in third["spilled"]
    assert Path(third["spilled"]).read_text().endswith("line 2999")
    text = sessions.beeuni("sessions", "log", session_id).stdout
    part = text[text.index("  tool big_report {}: completed") :]
    assert f"    (the whole output is in {third['spilled']})\n" in part
    assert "line 2999" not in part  # shortened
    assert "characters in all)" in part


def test_sessions_ls_lists_the_projects_sessions_newest_first(sessions: Sessions, weather: Any) -> None:
    session_id = weather[1].stdout.split("\n", 1)[0]
    listed = sessions.beeuni("sessions", "ls")
    assert listed.code == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["ID", "STARTED", "AGENT", "STATUS", "PROMPT"]
    assert any(row.startswith(session_id) and " completed " in row for row in rows)
    documents = json.loads(sessions.beeuni("sessions", "ls", "--json").stdout)
    created = [d["created"] for d in documents]
    assert created == sorted(created, reverse=True)
    assert all("opencode" not in d and "runner" not in d for d in documents)


def test_the_sessions_state_is_kept_outside_the_repository(sessions: Sessions, weather: Any) -> None:
    session_id = weather[1].stdout.split("\n", 1)[0]
    tracked = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=sessions.project, capture_output=True, text=True
    ).stdout
    assert session_id not in tracked and ".opencode" not in tracked
    kept = list(sessions.state.glob(f"projects/*/sessions/{session_id}*"))
    assert {path.name for path in kept} >= {f"{session_id}.json", f"{session_id}.export.json"}


def test_no_process_is_left_after_a_session(sessions: Sessions, weather: Any) -> None:
    assert weather[1].returncode == 0, weather[1].stderr
    assert sessions.strays() == []


def test_without_a_model_configured_it_says_how_to_configure_one(sessions: Sessions) -> None:
    data_folders = set(sessions.state.glob("projects/*/opencode-data/*"))
    finished = sessions.new(None, "--wait", "--prompt", "hello")
    assert finished.returncode == 2, finished.stderr
    assert finished.stdout == ""
    assert "no model is configured:" in finished.stderr
    assert "opencode's configuration" in finished.stderr and "--model PROVIDER/MODEL" in finished.stderr
    assert sessions.strays() == []
    assert set(sessions.state.glob("projects/*/opencode-data/*")) == data_folders  # no session, no data kept


def test_a_session_that_ends_in_an_error_exits_1(sessions: Sessions, standin: PlatformStandIn) -> None:
    """The model's provider refuses the request (the stand-in answers 401 to a chat completion)."""
    with scripted_model({}) as model:
        finished = sessions.new(model, "--wait", "--prompt", "ends in an error", base_url=standin.url + "/v1")
    assert finished.returncode == 1, finished.stderr
    session_id = finished.stdout.split("\n", 1)[0]
    assert f"beeuni: session {session_id} ended in an error: " in finished.stderr
    document = sessions.log(session_id)
    assert document["session"]["status"] == "error"
    assert document["messages"][-1]["error"]
    assert sessions.strays() == []


def test_usage_problems_exit_2(sessions: Sessions) -> None:
    assert sessions.new(None, "--wait", "--prompt", "hi", "--model", "no-slash").returncode == 2
    env = {**sessions.env(None), "BEEUNI_OPENCODE": str(sessions.root / "no-opencode")}
    missing_opencode = run_beeuni(["sessions", "new", "--prompt", "hi"], cwd=sessions.project, env=env)
    assert missing_opencode.code == 2
    assert missing_opencode.stderr.startswith("beeuni: opencode is not installed")
    missing = sessions.beeuni("sessions", "log", "ses_missing")
    assert (missing.code, missing.stderr) == (
        2,
        "beeuni: no session ses_missing in this project (`beeuni sessions ls` lists them)\n",
    )


def test_the_texts_come_from_the_rules(sessions: Sessions, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    source = (rules / "sessions.rules").read_text()
    old = 'no_session: "no session {id} in this project'
    assert old in source
    (rules / "sessions.rules").write_text(source.replace(old, 'no_session: "unheard of: {id} in this project'))
    missing = sessions.beeuni("sessions", "log", "ses_missing", "--rules", str(rules))
    assert missing.code == 2
    assert missing.stderr.startswith("beeuni: unheard of: ses_missing in this project")


def test_an_interrupted_session_stops_its_daemon_and_opencode(sessions: Sessions, standin: PlatformStandIn) -> None:
    key = "interrupt-with-wait"
    with scripted_model({key: [call("wait_forever", {}), say("never")]}) as model:
        command = [BEEUNI, "sessions", "new", "--wait", "--prompt", f"{key}: wait"]
        env = {**os.environ, "NO_COLOR": "1", **sessions.env(model)}
        before = len(standin.requests)
        runner = subprocess.Popen(
            command, cwd=sessions.project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            wait_until(lambda: len(standin.requests) > before, "the tool call to start", limit=SESSION_LIMIT)
            runner.send_signal(signal.SIGINT)
            stdout, stderr = runner.communicate(timeout=120)
        finally:
            runner.kill()
    assert runner.returncode == 1, stderr
    session_id = stdout.split("\n", 1)[0]
    assert f"session {session_id} was interrupted" in stderr
    assert sessions.strays() == []
    document = sessions.log(session_id)
    assert document["session"]["status"] == "interrupted"
    assert tool_calls(document)[0]["tool"] == "wait_forever"


def test_a_session_without_wait_runs_on_and_stops_with_its_runner(sessions: Sessions, standin: PlatformStandIn) -> None:
    key = "detached-runner"
    with scripted_model({key: [call("wait_forever", {}), say("never")]}) as model:
        before = len(standin.requests)
        started = sessions.new(model, "--prompt", f"{key}: wait")
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()
        assert session_id.startswith("ses_")
        wait_until(lambda: len(standin.requests) > before, "the tool call to start", limit=SESSION_LIMIT)
        listed = json.loads(sessions.beeuni("sessions", "ls", "--json").stdout)
        assert next(d for d in listed if d["id"] == session_id)["status"] == "running"
        record = json.loads(next(sessions.state.glob(f"projects/*/sessions/{session_id}.json")).read_text())
        os.kill(record["runner"], signal.SIGTERM)
        wait_until(lambda: sessions.log(session_id)["session"]["status"] != "running", "the runner to stop", limit=120)
        wait_until(lambda: sessions.strays() == [], "the session's processes to stop", limit=60)
    assert sessions.log(session_id)["session"]["status"] == "interrupted"
