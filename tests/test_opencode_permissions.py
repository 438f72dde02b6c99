"""An agent's `permission` on the standard harness, for real: the pinned opencode gets the
manifest's permission as that agent's own (`opencode debug agent` lists its rules), a tool the
agent's `tools` hides stays hidden whatever the project's opencode.json says, and in a real
session (`opencode run` against the scripted model) the model is offered exactly what the agent
sees, a served tool whose permission is `ask` is asked about (and `opencode run` refuses it
without running it), and an allowed one runs — through `opencode run` and through `beeuni
sessions new`. `validate` warns where opencode.json tries."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BEEUNI, run_beeuni
from daemon_helpers import running_daemon
from model_server import call, say, scripted_model
from opencode_session import opencode_version, run_opencode, sessions_environment
from test_opencode import ECHO, opencode

if opencode_version() is None:
    pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here", allow_module_level=True)

MANIFEST = """tools:
  memory: beeuni:memory
  echo: tools/echo.ts
  other: tools/other.ts
agents:
  plan:
    tools: [read, echo, other, bash]
    permission:
      bash: {"git *": allow, "*": ask}
      other: ask
      read: {"*": allow, "*.env": deny}
  build:
    tools: all
    permission:
      memory: deny
"""
# the project's own opencode settings try to show `plan` what its `tools` hides
OPENCODE_JSON = """{
  "agent": {
    "plan": {
      "permission": {"*": "allow", "memory": "allow", "edit": "allow"},
      "tools": {"write": true, "glob": true}
    }
  }
}
"""
#: what beeuni gives opencode for `plan`, in order
PLAN_RULES = [
    ("bash", "git *", "allow"),
    ("bash", "*", "ask"),
    ("other", "*", "ask"),
    ("read", "*", "allow"),
    ("read", "*.env", "deny"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "tools" / "other.ts").write_text(ECHO.replace("Echo the text", "Another tool"))
    (folder / "beeuni.yaml").write_text(MANIFEST)
    (folder / "opencode.json").write_text(OPENCODE_JSON)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    return folder


def debug_agent(project: Path, home: Path, daemon: Any, agent: str) -> dict[str, Any]:
    shown = opencode(project, home, daemon, agent)
    assert shown.returncode == 0, shown.stderr
    found: dict[str, Any] = json.loads(shown.stdout)
    return found


def rules_of(agent: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(rule["permission"], rule["pattern"], rule["action"]) for rule in agent["permission"]]


def test_opencode_gets_the_manifests_permission_and_cannot_show_a_hidden_tool(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        plan = debug_agent(project, home, daemon, "plan")
        build = debug_agent(project, home, daemon, "build")
    rules = rules_of(plan)
    # the manifest's rules, in order, after the project's own (`"*": "allow"` among them) ...
    start = rules.index(PLAN_RULES[0])
    assert rules[start : start + len(PLAN_RULES)] == PLAN_RULES
    assert ("*", "*", "allow") in rules[:start]
    # ... and after them, last of all, a deny of each tool `plan` does not see
    denied = {permission for permission, pattern, action in rules[start + len(PLAN_RULES) :] if action == "deny"}
    assert {"memory", "edit", "write", "glob", "apply_patch", "webfetch"} <= denied
    tools = plan["tools"]
    assert tools["read"] and tools["echo"] and tools["other"] and tools["bash"]
    for hidden in ("memory", "edit", "write", "glob"):  # what opencode.json tried to show
        assert not tools.get(hidden), hidden
    # `deny` for a tool hides it from the model too (opencode's own rule), here on `build`
    assert not build["tools"]["memory"] and build["tools"]["echo"]


def test_validate_warns_in_opencode_json_and_resolve_shows_the_permission(project: Path) -> None:
    checked = run_beeuni(["validate", "--format", "json"], cwd=project)
    found = {(d["rule"], d["file"], d["line"], d["column"]) for d in json.loads(checked.stdout)["diagnostics"]}
    lines = OPENCODE_JSON.splitlines()

    def at(key: str, line: int) -> tuple[str, str, int, int]:
        return ("permission/opencode-shows-hidden", "opencode.json", line, lines[line - 1].index(f'"{key}"') + 1)

    assert found == {at("memory", 4), at("edit", 4), at("write", 5), at("glob", 5)}
    assert checked.code == 0
    resolved = json.loads(run_beeuni(["resolve", "--json"], cwd=project).stdout)
    for harness in resolved["harnesses"]:
        agents = {agent["name"]: agent for agent in harness["agents"]}
        assert rules_of(agents["plan"]) == PLAN_RULES
        assert rules_of(agents["build"]) == [("memory", "*", "deny")]


def test_a_real_session_offers_what_the_agent_sees_and_asks_before_an_ask_tool(project: Path, tmp_path: Path) -> None:
    script = {"case-plan": [call("echo", {"text": "hi"}), call("other", {"text": "there"}), say("done")]}
    with scripted_model(script) as model, running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        run = run_opencode(project, tmp_path / "home", model, daemon, "case-plan: go", "plan")
    assert run.returncode == 0, run.stderr
    offered = set(model.conversation("case-plan")[0].tools)
    assert {"read", "echo", "other", "bash"} <= offered
    assert not offered & {"memory", "edit", "write", "glob", "webfetch", "apply_patch"}
    assert model.result_of("case-plan", 0, 0) == "echo: hi ()"  # allowed: it ran
    parts = {part["tool"]: part["state"] for part in run.tool_parts()}
    assert parts["echo"]["status"] == "completed" and parts["echo"]["output"] == "echo: hi ()"  # allowed: it ran
    # `ask`: opencode asks before the plugin calls the daemon, and `opencode run` rejects what it would ask
    assert "permission requested: other" in run.stdout + run.stderr
    assert parts["other"]["status"] == "error" and "rejected permission" in parts["other"]["error"]


def test_a_beeuni_session_cannot_be_shown_a_hidden_tool_by_opencode_json(tmp_path: Path) -> None:
    """The same through `beeuni sessions new --wait` (opencode's server, the session agent): the
    committed opencode.json tries to give the session agent a tool its list hides; the model is
    not offered it, the agent's permission lets the tool it sees run, and a tool it must be
    asked about is refused: a session has nobody to ask."""
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "echo.ts").write_text(ECHO)
    (project / "tools" / "internal.ts").write_text(ECHO.replace("Echo the text", "Internal"))
    (project / "tools" / "other.ts").write_text(ECHO.replace("Echo the text", "Another tool"))
    (project / "beeuni.yaml").write_text(
        "tools:\n  echo: tools/echo.ts\n  internal: tools/internal.ts\n  other: tools/other.ts\n"
        "agents:\n  beeuni:\n    tools: {exclude: [internal, bash]}\n    permission: {echo: allow, other: ask}\n"
    )
    tries = {"permission": {"internal": "allow", "bash": "allow"}, "tools": {"internal": True}}
    (project / "opencode.json").write_text(json.dumps({"agent": {"beeuni": tries}}))
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    commit = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "x"]
    subprocess.run(commit, cwd=project, check=True)
    prompt = "case-session: go"
    script = {"case-session": [call("echo", {"text": "hi"}), call("other", {"text": "there"}), say("done")]}
    with scripted_model(script) as model:
        environment = sessions_environment(tmp_path / "home", tmp_path / "state", project, model)
        finished = subprocess.run(
            [BEEUNI, "sessions", "new", "--wait", "--prompt", prompt],
            cwd=project,
            env={**os.environ, "NO_COLOR": "1", **environment},
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert finished.returncode == 0, finished.stderr
    offered = set(model.conversation("case-session")[0].tools)
    assert "echo" in offered and "read" in offered
    assert "internal" not in offered and "bash" not in offered
    assert model.result_of("case-session", 0, 0) == "echo: hi ()"
    # `ask`: nobody answers a session, so the question is rejected (as `opencode run` does) and
    # the session goes on instead of waiting for ever; the call never reached the daemon
    session_id = finished.stdout.split()[0] if finished.stdout.strip() else ""
    logged = run_beeuni(["sessions", "log", session_id, "--json"], cwd=project, env=environment)
    parts = [p for m in json.loads(logged.stdout)["messages"] for p in m["parts"] if p["type"] == "tool"]
    other = next(part for part in parts if part["tool"] == "other")
    assert other["status"] == "error" and "rejected permission" in other["error"]
