"""The standard harness for real: the pinned opencode loads the plugin the daemon writes and
calls a project tool through it and the daemon (offline: the plugin package it would install
from the registry is linked from this repository)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_beeuni
from daemon_helpers import Daemon, run_harness, running_daemon
from opencode_session import OPENCODE, environment, link_plugin_package, plugin_folder

ECHO = """export default {
  description: 'Echo the text, with the agent the daemon saw.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', description: 'What to echo' } },
    required: ['text'],
  },
  async execute(args, context) { return `echo: ${args.text} (${Object.keys(context.env).sort().join(',')})` },
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "beeuni.yaml").write_text(
        "tools:\n  memory: beeuni:memory\n  echo: tools/echo.ts\n"
        "agents:\n  build:\n    tools: all\n    secrets: [BUILD_KEY]\n  plan:\n    tools: [read]\n"
    )
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def opencode(project: Path, home: Path, daemon: Daemon | None, *args: str) -> subprocess.CompletedProcess[str]:
    link_plugin_package(project / ".opencode")  # what opencode would install from the registry
    if daemon is not None:
        link_plugin_package(plugin_folder(daemon))
    return run_harness([str(OPENCODE), "debug", "agent", *args], daemon, project, environment(home, project))


def offered(project: Path, home: Path, daemon: Daemon | None, agent: str) -> dict[str, bool]:
    """Which tools opencode offers ``agent``'s model (``opencode debug agent``'s ``tools``)."""
    listed = opencode(project, home, daemon, agent)
    assert listed.returncode == 0, listed.stderr
    tools: dict[str, bool] = json.loads(listed.stdout)["tools"]
    return tools


def test_opencode_calls_a_project_tool_through_the_plugin_and_the_daemon(project: Path, tmp_path: Path) -> None:
    with running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        plugin = Path(daemon.document["plugin"])
        assert plugin.exists() and not plugin.is_relative_to(project)
        tools = offered(project, tmp_path / "home", daemon, "build")
        assert tools.get("echo") and tools.get("memory")

        called = opencode(
            project, tmp_path / "home", daemon, "build", "--tool", "echo", "--params", '{"text": "hello"}'
        )
        assert called.returncode == 0, called.stderr
        result = json.loads(called.stdout[called.stdout.index("{") :])
        assert result["result"]["output"] == "echo: hello ()"

        refused = opencode(
            project, tmp_path / "home", daemon, "plan", "--tool", "echo", "--params", '{"text": "hello"}'
        )
        # opencode itself refuses a tool hidden from the agent; the daemon too (403)
        assert "Tool echo is disabled for agent plan" in refused.stdout + refused.stderr
        assert (
            daemon.call("echo", {"text": "hello"}, agent="plan").json()["error"]
            == "agent plan does not see the tool echo"
        )
        assert "echo" in daemon.tools(agent="build")


CASES = {  # a beeuni agent's `tools`, and the same in opencode's agent config
    "everything": ("all", {}),
    "no_write": ("{exclude: [write]}", {"write": False}),
    "only_edit": ("[edit]", {"*": False, "edit": True}),
    "no_bash": ("{exclude: [bash]}", {"bash": False}),
    "read_and_write": ("[read, write]", {"*": False, "read": True, "write": True}),
}


def test_standard_harness_groups_match_opencode(tmp_path: Path) -> None:
    """The groups of harness tools, checked against opencode itself: an agent sees the same harness tools under
    beeuni's rules as under the same setting in opencode's own config — compared on the tools
    both know and opencode enables by default."""
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    agents = "".join(f"  {name}:\n    tools: {spec}\n" for name, (spec, _) in CASES.items())
    (folder / "beeuni.yaml").write_text("agents:\n" + agents)
    config = {"agent": {name: {"mode": "primary", "tools": tools} for name, (_, tools) in CASES.items()}}
    (folder / "opencode.json").write_text(json.dumps(config))

    def both(name: str) -> tuple[set[str], set[str]]:
        theirs = json.loads(opencode(folder, tmp_path / "home", None, name).stdout)["tools"]
        listed = json.loads(run_beeuni(["tools", "ls", "--agent", name, "--json"], cwd=folder).stdout)["tools"]
        return {tool for tool, shown in theirs.items() if shown}, {t["name"] for t in listed if t["kind"] == "harness"}

    theirs_all, ours_all = both("everything")
    compared = theirs_all & ours_all
    assert {"bash", "read", "edit", "write", "task"} <= compared
    for name in CASES:
        theirs, ours = both(name)
        assert theirs & compared == ours & compared, name


def test_an_agents_model_is_offered_only_the_tools_it_sees(tmp_path: Path) -> None:
    """The plugin gives opencode each agent's settings; the project's own opencode configuration
    cannot show a tool the agent's list hides (the hide is the last word); calls stay refused by
    the daemon."""
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "tools" / "other.ts").write_text(ECHO.replace("Echo the text", "Another tool"))
    (folder / "beeuni.yaml").write_text(
        "tools:\n  memory: beeuni:memory\n  echo: tools/echo.ts\n  other: tools/other.ts\n"
        "agents:\n  build:\n    tools: all\n  plan:\n    tools: [read, echo]\n"
        "  general:\n    tools: {exclude: [write, other]}\n"
    )
    # the project's own opencode settings try to give plan `memory` and `bash`
    own = {"permission": {"memory": "allow"}, "tools": {"bash": True}}
    (folder / "opencode.json").write_text(json.dumps({"agent": {"plan": own}}))
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    home = tmp_path / "home"
    with running_daemon(folder, tmp_path, "--harness", "standard") as daemon:
        plan = offered(folder, home, daemon, "plan")
        assert plan["echo"] and plan["read"]  # inside its list
        assert not plan["other"] and not plan["bash"] and not plan["edit"] and not plan["write"]  # outside it
        assert not plan["memory"]  # the project's own setting cannot show it
        general = offered(folder, home, daemon, "general")
        assert not general["other"] and general["echo"]
        assert not general["write"] and not general["edit"]  # the edit group goes together
        assert general["bash"]
        build = offered(folder, home, daemon, "build")
        assert build["echo"] and build["other"] and build["bash"]
        refused = daemon.call("other", {"text": "x"}, agent="plan")
        assert refused.status_code == 403
        assert daemon.call("memory", {"command": "view", "path": "/memories"}, agent="plan").status_code == 403


def test_a_convergence_changes_what_an_agents_model_is_offered(tmp_path: Path) -> None:
    """The per-agent settings follow the release the session serves: an edit of the manifest in
    the working tree changes nothing; once the session converges on the commit that holds it, an
    opencode started afterwards (the next turn's) hides what the new release hides, without a
    restart of the daemon."""
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    manifest = folder / "beeuni.yaml"
    manifest.write_text("tools:\n  echo: tools/echo.ts\nagents:\n  plan:\n    tools: [read, echo]\n")
    commit = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "x"]
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(commit, cwd=folder, check=True)
    home = tmp_path / "home"
    with running_daemon(folder, tmp_path, "--harness", "standard") as daemon:
        assert offered(folder, home, daemon, "plan")["echo"]
        assert daemon.call("echo", {"text": "hi"}, agent="plan").status_code == 200
        manifest.write_text(
            "tools:\n  echo: tools/echo.ts\nagents:\n  plan:\n    tools: [read]\n  review:\n    tools: [echo]\n"
        )
        assert offered(folder, home, daemon, "plan")["echo"]  # the working tree is not the release
        subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
        subprocess.run(commit, cwd=folder, check=True)
        assert daemon.converge()["event"] == "converged"
        assert not offered(folder, home, daemon, "plan")["echo"]
        review = offered(folder, home, daemon, "review")
        assert review["echo"] and not review["read"]
