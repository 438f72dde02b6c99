"""Real sessions on the standard harness: the pinned opencode runs an agent of a project served
by the real daemon and Bun, against a scripted model on 127.0.0.1 (``model_server.py``), and the
test reads what opencode offered the model and what it answered it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import running_daemon
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import opencode_version, run_opencode

if opencode_version() is None:
    pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here", allow_module_level=True)

ECHO = """export default {
  description: 'Echo the arguments as JSON.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', description: 'What to echo' }, extra: { type: 'object' } },
    required: ['text'],
  },
  async execute(args) { return 'echo: ' + JSON.stringify(args) },
}
"""

EXACT = {"text": "héllo, wörld ✓ 🐝 \u2028", "extra": {"nested": [1, [2, {"deep": None}]], "big": 9007199254740991}}

SCRIPT = {
    "case-echo": [call("echo", EXACT), say("done")],
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, ScriptedModel]]:
    """One project, daemon and scripted model for the module's runs."""
    tmp_path = tmp_path_factory.mktemp("sessions")
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "echo.ts").write_text(ECHO)
    (project / "beeuni.yaml").write_text("tools:\n  echo: tools/echo.ts\nagents:\n  build:\n    tools: all\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with scripted_model(SCRIPT) as model, running_daemon(project, tmp_path, "--harness", "standard"):
        yield project, tmp_path / "home", model


def test_a_scripted_session_calls_a_project_tool_with_the_arguments_the_model_sent(
    session: tuple[Path, Path, ScriptedModel],
) -> None:
    project, home, model = session
    run = run_opencode(project, home, model, "case-echo: echo it", "build")
    assert run.returncode == 0, run.stderr
    first = model.conversation("case-echo")[0]
    assert "echo" in first.tools and "bash" in first.tools
    answered = model.result_of("case-echo", 0)
    assert answered.startswith("echo: ")
    assert json.loads(answered.removeprefix("echo: ")) == EXACT
    assert [part["state"]["status"] for part in run.tool_parts()] == ["completed"]
