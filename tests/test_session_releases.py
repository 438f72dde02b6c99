"""`beeuni sessions` serves a release and converges, for real: the daemon, Bun and the pinned
opencode against the scripted model server, over a git repository.

A session serves the release HEAD named at its start. A commit reaches it only through `sessions
converge`: between turns the next turn (`sessions prompt`, the same conversation) is offered the
new release's tools; while a turn runs, the daemon serves the new release from its next call on.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BEEUNI, Result, run_beeuni
from daemon_helpers import wait_until
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import opencode_version, sessions_environment

SESSION_LIMIT = 600  # seconds a turn may take (a failure, not a measurement)
GREET = """export default {
  description: 'Greets.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'hello' },
}
"""
FAREWELL = """export default {
  description: 'Says goodbye.',
  parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  async execute(args) { return `goodbye, ${args.name}` },
}
"""
# waits, in its call, until the test has converged the session (the file `out/go` appears)
WAIT = """import { existsSync } from 'node:fs'
export default {
  description: 'Waits for a go.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) {
    while (!existsSync(`${context.cwd}/out/go`)) await new Promise((resolve) => setTimeout(resolve, 50))
    return 'went'
  },
}
"""
MANIFEST = "tools:\n  greet: tools/greet.ts\n  wait_for_go: tools/wait_for_go.ts\n"

pytestmark = pytest.mark.skipif(opencode_version() is None, reason="the pinned opencode cannot start here")


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / "project"
        (self.folder / "tools").mkdir(parents=True)
        (self.folder / "out").mkdir()
        (self.folder / "out" / ".keep").write_text("")
        (self.folder / "tools" / "greet.ts").write_text(GREET)
        (self.folder / "tools" / "wait_for_go.ts").write_text(WAIT)
        (self.folder / "beeuni.yaml").write_text(MANIFEST)
        self.git("init", "-q")
        self.commit("the first release")

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", *args], cwd=self.folder, check=True, capture_output=True, text=True)
        return done.stdout.strip()

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def env(self, model: ScriptedModel | None) -> dict[str, str]:
        return sessions_environment(self.root / "home", self.root / "state", self.folder, model)

    def beeuni(self, *args: str, model: ScriptedModel | None = None) -> Result:
        return run_beeuni(list(args), cwd=self.folder, env=self.env(model))

    def sessions(self, model: ScriptedModel, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [BEEUNI, "sessions", *args],
            cwd=self.folder,
            env={**os.environ, "NO_COLOR": "1", **self.env(model)},
            capture_output=True,
            text=True,
            timeout=SESSION_LIMIT,
        )

    def log(self, session_id: str) -> dict[str, Any]:
        shown = self.beeuni("sessions", "log", session_id, "--json")
        assert shown.code == 0, shown.stderr
        found: dict[str, Any] = json.loads(shown.stdout)
        return found


def tool_calls(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for message in document["messages"] for part in message["parts"] if part["type"] == "tool"]


def test_a_later_turn_of_the_same_conversation_calls_the_tool_a_convergence_added(tmp_path: Path) -> None:
    project = Project(tmp_path)
    first_release = project.git("rev-parse", "HEAD")
    first, second = "First turn: greet me.", "Second turn: say goodbye to Ada."
    turns = [call("greet", {}), say("greeted"), call("farewell", {"name": "Ada"}), say("said goodbye")]
    with scripted_model({first: turns}) as model:
        started = project.sessions(model, "new", "--wait", "--prompt", first)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.split("\n", 1)[0]
        assert project.log(session_id)["session"]["release"] == first_release

        (project.folder / "tools" / "farewell.ts").write_text(FAREWELL)
        (project.folder / "beeuni.yaml").write_text(MANIFEST + "  farewell: tools/farewell.ts\n")
        release = project.commit("a farewell tool")
        converged = project.beeuni("sessions", "converge", session_id)
        assert converged.code == 0, converged.stderr
        assert converged.stdout == (
            f"session {session_id} serves {release[:12]} from its next turn on"
            f" (`beeuni sessions prompt {session_id} --prompt TEXT`)\n"
        )

        later = project.sessions(model, "prompt", session_id, "--wait", "--prompt", second)
        assert later.returncode == 0, later.stderr
        assert later.stdout == f"{session_id}\nsaid goodbye\n"
        requests = model.conversation(first)
    assert "farewell" not in requests[0].tools and "greet" in requests[0].tools
    asked = [request for request in requests if second in json.dumps(request.messages)]
    assert asked and "farewell" in asked[0].tools  # the next turn is offered the new release's tools
    assert first in json.dumps(asked[0].messages)  # in the same conversation
    document = project.log(session_id)
    assert document["session"]["release"] == release
    calls = [(c["tool"], c["status"], c["output"]) for c in tool_calls(document)]
    assert calls == [("greet", "completed", "hello"), ("farewell", "completed", "goodbye, Ada")]
    daemon_log = next((tmp_path / "state").glob(f"projects/*/sessions/{session_id}.daemon.log")).read_text()
    assert f"[release] the session serves {release[:12]} (was {first_release[:12]}); tools added farewell" in daemon_log


def test_a_convergence_while_a_turn_runs_is_served_from_the_next_call_on(tmp_path: Path) -> None:
    """...with a dozen connections to the runner's control socket that send nothing, open all
    along: `sessions converge` is answered all the same."""
    from beeuni.daemon.serving.secrets import project_dir

    project = Project(tmp_path)
    prompt = "Wait for a go, then greet me."
    turns = [call("wait_for_go", {}), call("greet", {}), say("done")]
    with scripted_model({prompt: turns}) as model:
        started = project.sessions(model, "new", "--prompt", prompt)  # a runner of its own
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()
        wait_until(lambda: any(c["tool"] == "wait_for_go" for c in tool_calls(project.log(session_id))), "the wait")
        (project.folder / "tools" / "greet.ts").write_text(GREET.replace("'hello'", "'hi there'"))
        release = project.commit("another greeting")
        record = Path(project_dir(str(project.folder), str(tmp_path / "state"))) / "sessions" / f"{session_id}.json"
        with contextlib.ExitStack() as silent:
            for _ in range(12):
                connection = silent.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
                connection.connect(json.loads(record.read_text())["control"]["path"])
            converged = project.beeuni("sessions", "converge", session_id)
        assert converged.code == 0, converged.stderr
        assert converged.stdout.startswith(f"session {session_id} serves {release[:12]} (was ")
        assert "tools changed greet" in converged.stdout
        assert converged.stdout.endswith(
            "from its next tool call on; its next turn is offered the new release's tools\n"
        )
        (project.folder / "out" / "go").write_text("go")
        wait_until(lambda: project.log(session_id)["session"]["status"] != "running", "the turn", limit=SESSION_LIMIT)
    document = project.log(session_id)
    assert document["session"]["status"] == "completed" and document["session"]["release"] == release
    calls = [(c["tool"], c["output"]) for c in tool_calls(document)]
    assert calls == [("wait_for_go", "went"), ("greet", "hi there")]  # the call that ran on ended in its own


def test_converging_on_no_commit_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    project = Project(tmp_path)
    with scripted_model({"Hi.": [say("hello")]}) as model:
        started = project.sessions(model, "new", "--wait", "--prompt", "Hi.")
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.split("\n", 1)[0]
    refused = project.beeuni("sessions", "converge", session_id, "--release", "no-such-branch")
    assert refused.code == 2
    assert refused.stderr == "beeuni: `no-such-branch` names no commit of the repository: there is no such release\n"
    assert "converge_to" not in json.dumps(project.log(session_id))


LOOK = (
    "env | grep -c '^OPENCODE_SERVER_PASSWORD=' || true; p=$PPID;"
    ' while [ "$(cat /proc/$p/comm 2>/dev/null)" != opencode ] && [ "$p" -gt 1 ] 2>/dev/null;'
    ' do p=$(cut -d" " -f4 /proc/$p/stat 2>/dev/null); done;'
    " if cat /proc/$p/environ > /dev/null 2>&1; then echo environ readable; else echo environ unreadable; fi"
)


def test_the_models_commands_get_neither_opencodes_password_nor_its_environment(tmp_path: Path) -> None:
    """opencode takes its server password from its environment; a command the model runs inherits
    opencode's environment, and as the same user could read opencode's first environment in /proc.
    opencode runs without capabilities, as a user's process does (this suite runs as root): its
    box drops them (``daemon/box/harness_box.py``)."""
    project = Project(tmp_path)
    prompt = "Look around."
    with scripted_model(
        {prompt: [call("bash", {"command": LOOK, "description": "Look around"}), say("done")]}
    ) as model:
        finished = project.sessions(model, "new", "--wait", "--prompt", prompt)
    assert finished.returncode == 0, finished.stderr
    (looked,) = tool_calls(project.log(finished.stdout.split("\n", 1)[0]))
    assert (looked["tool"], looked["status"]) == ("bash", "completed")
    assert looked["output"].split() == ["0", "environ", "unreadable"]


def test_an_opencode_plugin_an_agent_wrote_in_the_working_tree_never_loads(tmp_path: Path) -> None:
    """opencode would load the project's own plugins from the working tree, beside the daemon's
    token; a turn gives it the release's instead, so one an agent wrote there (with `edit`, say)
    never loads, and the turns go on."""
    project = Project(tmp_path)
    marker = tmp_path / "loaded"
    evil = f"import {{ writeFileSync }} from 'node:fs'\nwriteFileSync('{marker}', 'x')\n"
    evil += "export const Evil = async () => ({})\n"
    with scripted_model({"Hi.": [say("hello"), say("again")]}) as model:
        started = project.sessions(model, "new", "--wait", "--prompt", "Hi.")
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.split("\n", 1)[0]
        (project.folder / ".opencode" / "plugin").mkdir(parents=True)
        (project.folder / ".opencode" / "plugin" / "evil.ts").write_text(evil)
        again = project.sessions(model, "prompt", session_id, "--wait", "--prompt", "Again.")
        assert again.returncode == 0, again.stderr
    assert not marker.exists()


def test_a_session_recorded_before_it_had_opencode_data_of_its_own_goes_on_with_its_conversation(
    tmp_path: Path,
) -> None:
    """A session whose record names no opencode data folder (recorded before sessions had one) is
    carried over at its next turn: its conversation, as opencode exported it, is imported into a
    data folder of its own — but for what opencode keeps per session beside the messages (its
    permission rules) — and the model is sent it again."""
    project = Project(tmp_path)
    first, second = "First turn: greet me.", "Second turn: say goodbye to Ada."
    with scripted_model({first: [say("greeted"), say("goodbye, Ada")]}) as model:
        started = project.sessions(model, "new", "--wait", "--prompt", first)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.split("\n", 1)[0]
        record_path = next((tmp_path / "state").glob(f"projects/*/sessions/{session_id}.json"))
        record = json.loads(record_path.read_text())
        shutil.rmtree(record_path.parent.parent / "opencode-data" / record.pop("opencode_data"))
        record_path.write_text(json.dumps(record))  # as a record from before
        export_path = record_path.with_name(f"{session_id}.export.json")
        export = json.loads(export_path.read_text())
        export["info"]["permission"] = [{"permission": "bash", "pattern": "*", "action": "allow"}]
        export_path.write_text(json.dumps(export))
        later = project.sessions(model, "prompt", session_id, "--wait", "--prompt", second)
        assert later.returncode == 0, later.stderr
        assert later.stdout == f"{session_id}\ngoodbye, Ada\n"
        asked = [request for request in model.conversation(first) if second in json.dumps(request.messages)]
    assert asked and first in json.dumps(asked[0].messages)  # the same conversation, carried over
    assert json.loads(record_path.read_text())["opencode_data"]
    assert "permission" not in json.loads(export_path.read_text())["info"]  # not carried
