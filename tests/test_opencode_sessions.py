"""Real sessions on the standard harness: the pinned opencode runs agents of a project served by
the real daemon and Bun, against a scripted model on 127.0.0.1 (``model_server.py``), and the
tests read what opencode offered the model and what it answered it.

Two opencode runs serve every case (each run costs tens of seconds): ``build`` (every tool)
calls tools with exact, invalid, throwing and oversized results; ``lead`` (only `read` and
`task`) starts the subagent ``reviewer``, which gets its own list.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import run_beeuni
from daemon_helpers import Daemon, running_daemon
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import Run, opencode_version, run_opencode

if opencode_version() is None:
    pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here", allow_module_level=True)

ZOO: dict[str, dict[str, Any]] = json.loads((Path(__file__).parent / "schema_zoo" / "zoo.json").read_text())

MODULE = """export default {{
  description: {description},
  parameters: {parameters},
  async execute(args) {{ {body} }},
}}
"""
ECHO_BODY = "return 'echo: ' + JSON.stringify(args)"
TOOLS = {
    **{name: (ECHO_BODY, parameters) for name, parameters in ZOO.items()},
    "echo": (ECHO_BODY, {"type": "object", "properties": {"text": {"type": "string"}, "extra": {"type": "object"}}}),
    "fail": (
        "throw new Error('the order service said no: ' + args.why)",
        ZOO["nothing_at_all"] | {"properties": {"why": {"type": "string"}}},
    ),
    "big": ("return 'line\\n'.repeat(3000)", ZOO["nothing_at_all"]),
}

EXACT = {
    "text": 'héllo, wörld ✓ 🐝 \u2028 "quoted" \\ back',
    "extra": {"nested": [1, [2, {"deep": None, "e": 1e300}]], "big": 9007199254740991, "neg": -0.5, "empty": {}},
}
INVALID = {"repo_path": ".", "mode": "LOUD"}
REFUSAL = 'invalid arguments for git_log: `mode`: `"LOUD"` is not one of `loud`, `quiet`'

SCRIPT = {
    "case-build": [
        call(
            "echo",
            EXACT,
            ("git_log", INVALID),
            ("fail", {"why": "closed"}),
            ("big", {}),
        ),
        say("done"),
    ],
    "case-lead": [
        call("task", {"description": "Review", "prompt": "case-sub: review", "subagent_type": "reviewer"}),
        say("lead done"),
    ],
    "case-sub": [call("echo", {"text": "from the subagent"}), say("reviewed")],
}

MANIFEST = """tools:
  memory: beeuni:memory
{tools}
agents:
  build:
    tools: all
  lead:
    tools: [read, task]
  reviewer:
    tools: [echo, glob]
"""


@dataclass
class Sessions:
    project: Path
    model: ScriptedModel
    daemon: Daemon
    build: Run
    lead: Run


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sessions]:
    tmp_path = tmp_path_factory.mktemp("sessions")
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for name, (body, parameters) in TOOLS.items():
        source = MODULE.format(
            description=json.dumps(f"The {name} tool."), parameters=json.dumps(parameters), body=body
        )
        (project / "tools" / f"{name}.ts").write_text(source)
    listed = "".join(f"  {name}: tools/{name}.ts\n" for name in TOOLS)
    (project / "beeuni.yaml").write_text(MANIFEST.format(tools=listed.rstrip("\n")))
    reviewer = {"mode": "subagent", "description": "Reviews the work."}
    (project / "opencode.json").write_text(json.dumps({"agent": {"reviewer": reviewer, "lead": {"mode": "primary"}}}))
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    home = tmp_path / "home"
    with scripted_model(SCRIPT) as model, running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        build = run_opencode(project, home, model, daemon, "case-build: go", "build")
        lead = run_opencode(project, home, model, daemon, "case-lead: go", "lead")
        yield Sessions(project, model, daemon, build, lead)


def listed_for(project: Path, agent: str, *args: str) -> set[str]:
    shown = run_beeuni(["tools", "ls", "--agent", agent, "--json", *args], cwd=project)
    return {tool["name"] for tool in json.loads(shown.stdout)["tools"]}


def test_each_agent_is_offered_exactly_its_tools(sessions: Sessions) -> None:
    assert sessions.build.returncode == 0, sessions.build.stderr
    assert sessions.lead.returncode == 0, sessions.lead.stderr
    served = set(TOOLS) | {"memory"}
    for key, agent, parent in (
        ("case-build", "build", None),
        ("case-lead", "lead", None),
        ("case-sub", "reviewer", "lead"),
    ):
        offered = set(sessions.model.conversation(key)[0].tools)
        sees = listed_for(sessions.project, agent, *(["--parent", parent] if parent else []))
        assert offered & served == sees & served, agent  # the served tools: exactly
        assert offered - served <= sees, agent  # opencode's own: none the agent does not see
    assert "echo" in sessions.model.conversation("case-sub")[0].tools  # its own list, not lead's
    assert set(sessions.model.conversation("case-lead")[0].tools) == {"read", "task"}


def test_a_removed_beeuni_tool_is_offered_to_nobody(sessions: Sessions) -> None:
    for request in sessions.model.requests:
        assert not {"web_search", "image_search", "scrape_webpage", "show"} & set(request.tools)


def test_offered_schemas_equal_the_modules(sessions: Sessions) -> None:
    offered = sessions.model.conversation("case-build")[0].tools
    for name, parameters in ZOO.items():
        got = offered[name]
        assert got.get("properties", {}) == parameters["properties"], name
        assert got.get("required", []) == parameters.get("required", []), name
    listing = httpx.get(f"{sessions.daemon.url}/beeuni/tools", headers=sessions.daemon.headers("build"), timeout=60)
    by_name = {tool["name"]: tool["parameters"] for tool in listing.json()["tools"]}
    assert all(by_name[name] == parameters for name, parameters in ZOO.items())
    # the one zoo schema with a top-level keyword the standard harness drops is logged at load
    assert "[tools] fetch: the model is not offered its parameters as written: `title`" in sessions.daemon.log()


def test_arguments_reach_the_module_exactly_as_the_model_sent_them(sessions: Sessions) -> None:
    answered = sessions.model.result_of("case-build", 0, 0)
    assert json.loads(answered.removeprefix("echo: ")) == EXACT
    assert sessions.model.result_of("case-sub", 0, 0) == 'echo: {"text":"from the subagent"}'


def test_invalid_arguments_are_refused_with_the_property_named_on_both_harnesses(
    sessions: Sessions, tmp_path: Path
) -> None:
    assert REFUSAL in sessions.model.result_of("case-build", 0, 1)
    with running_daemon(sessions.project, tmp_path, "--harness", "experimental") as experimental:
        answer = experimental.call("git_log", INVALID, agent="build")
    assert answer.status_code == 422
    assert answer.json()["error"] == REFUSAL


def test_a_thrown_error_and_a_spilled_output_reach_the_model_as_documented(sessions: Sessions) -> None:
    assert "the order service said no: closed" in sessions.model.result_of("case-build", 0, 2)
    spilled = sessions.model.result_of("case-build", 0, 3)
    assert "[output truncated: the whole output, 15000 bytes in 3000 lines, is in " in spilled
    assert spilled.startswith("line\nline\n")
