"""opencode loads nothing an agent wrote, and its model's commands reach what a tool module
reaches: `beeuni sessions` for real (the daemon, Bun, git and the pinned opencode against the
scripted model), with the attacker's files planted where opencode, or the plugin's imports, would
find them, and the model's own `bash` commands reaching for the secrets store, the daemon's private
folder and git's hooks.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from beeuni.daemon.box import confine
from beeuni.daemon.serving.secrets import project_dir
from conftest import BEEUNI, run_beeuni
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import opencode_version, sessions_environment

SESSION_LIMIT = 600  # seconds a turn may take (a failure, not a measurement)
GREET = """export default {
  description: 'Greets.',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 2 }, loud: { type: 'boolean' } },
    required: ['name'],
  },
  async execute(args) { return `hello, ${args.name}` },
}
"""
SECRET = "s3cr3t-value-of-the-store"

pytestmark = pytest.mark.skipif(opencode_version() is None, reason="the pinned opencode cannot start here")


def evil_plugin(marker: Path) -> str:
    """An opencode plugin that, once imported, writes ``marker``."""
    written = f"import {{ writeFileSync }} from 'node:fs'\nwriteFileSync({json.dumps(str(marker))}, 'x')\n"
    return written + "export const Evil = async () => ({})\n"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True)
    return done.stdout.strip()


class Monorepo:
    """A git repository whose project is in ``app/``: opencode's home, beeuni's state and the
    temporary folder of the session's commands all under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.top = root / "repo"
        self.folder = self.top / "app"
        self.tmp = root / "tmp"
        self.tmp.mkdir()
        (self.folder / "tools").mkdir(parents=True)
        (self.folder / "tools" / "greet.ts").write_text(GREET)
        (self.folder / "beeuni.yaml").write_text("tools:\n  greet: tools/greet.ts\n")
        git(self.top, "init", "-q")
        self.commit()

    def commit(self) -> None:
        git(self.top, "add", "-A")
        git(self.top, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "a release")

    def env(self, model: ScriptedModel | None) -> dict[str, str]:
        return {
            **sessions_environment(self.root / "home", self.root / "state", self.folder, model),
            "TMPDIR": str(self.tmp),
        }

    def sessions(self, model: ScriptedModel, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [BEEUNI, "sessions", *args],
            cwd=self.folder,
            env={**os.environ, "NO_COLOR": "1", **self.env(model), **extra},
            capture_output=True,
            text=True,
            timeout=SESSION_LIMIT,
        )

    def log(self, session_id: str) -> dict[str, Any]:
        shown = run_beeuni(["sessions", "log", session_id, "--json"], cwd=self.folder, env=self.env(None))
        assert shown.code == 0, shown.stderr
        found: dict[str, Any] = json.loads(shown.stdout)
        return found

    def opencode_log(self, session_id: str) -> str:
        return next((self.root / "state").glob(f"projects/*/sessions/{session_id}.opencode.log")).read_text()


def tool_calls(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for message in document["messages"] for part in message["parts"] if part["type"] == "tool"]


def test_opencode_reads_only_the_configuration_the_session_gives_it(tmp_path: Path) -> None:
    """A plugin in a `.opencode/` at the repository's top, an `opencode.json` above the project
    naming a plugin and an MCP server, the user's global configuration folder and `~/.opencode`:
    none loads. The release's own `.opencode/` does (its agent is the turn's); the working tree's
    edit of it does not."""
    repo = Monorepo(tmp_path)
    markers = {name: tmp_path / f"loaded-{name}" for name in ("top", "upward", "mcp", "global", "dot-home", "tree")}
    agent = "---\ndescription: The release's own agent.\nmode: primary\n---\nYou help.\n"
    (repo.folder / ".opencode" / "agent").mkdir(parents=True)
    (repo.folder / ".opencode" / "agent" / "helper.md").write_text(agent)
    repo.commit()
    # what the agents (or anyone) wrote since, in the working tree and the user's folders
    (repo.top / ".opencode" / "plugin").mkdir(parents=True)
    (repo.top / ".opencode" / "plugin" / "evil.ts").write_text(evil_plugin(markers["top"]))
    (repo.top / "evil-upward.ts").write_text(evil_plugin(markers["upward"]))
    mcp = {"type": "local", "command": ["sh", "-c", f"touch {markers['mcp']}"], "enabled": True}
    upward = {"plugin": [f"file://{repo.top / 'evil-upward.ts'}"], "mcp": {"evil": mcp}}
    (repo.top / "opencode.json").write_text(json.dumps(upward))
    (repo.folder / ".opencode" / "plugin").mkdir()
    (repo.folder / ".opencode" / "plugin" / "evil.ts").write_text(evil_plugin(markers["tree"]))
    (repo.folder / ".opencode" / "agent" / "helper.md").write_text(agent.replace("mode: primary", "mode: subagent"))
    home = tmp_path / "home"
    (home / ".config" / "opencode" / "plugin").mkdir(parents=True)
    (home / ".config" / "opencode" / "plugin" / "evil.ts").write_text(evil_plugin(markers["global"]))
    (home / ".config" / "opencode" / "opencode.json").write_text(json.dumps({"mcp": {"evil": mcp}}))
    (home / ".opencode" / "plugin").mkdir(parents=True)
    (home / ".opencode" / "plugin" / "evil.ts").write_text(evil_plugin(markers["dot-home"]))
    prompt = "Greet Ada."
    with scripted_model({prompt: [call("greet", {"name": "Ada"}), say("greeted")]}) as model:
        finished = repo.sessions(model, "new", "--wait", "--agent", "helper", "--prompt", prompt)
    assert finished.returncode == 0, finished.stderr  # the release's agent, a primary one
    assert finished.stdout.endswith("\ngreeted\n")
    (greeted,) = tool_calls(repo.log(finished.stdout.split("\n", 1)[0]))
    assert (greeted["tool"], greeted["output"]) == ("greet", "hello, Ada")
    assert [name for name, marker in markers.items() if marker.exists()] == []


def test_the_plugin_imports_nothing_from_a_node_modules_planted_above_it(tmp_path: Path) -> None:
    """Offline, opencode's install of @opencode-ai/plugin fails; the plugin resolved that import
    upward, to a `node_modules` in TMPDIR that any local user can make. Now it imports zod from
    beeuni's install by its path: the planted package never runs, and the schemas still reach the
    model exactly (an optional parameter stays optional). Landlock is off here, so that nothing but
    the plugin's own import keeps the package out — and the session's log says opencode was not
    confined."""
    repo = Monorepo(tmp_path)
    marker = tmp_path / "planted-imported"
    planted = tmp_path / "node_modules" / "@opencode-ai" / "plugin"  # above the state folder, in TMPDIR
    planted.mkdir(parents=True)
    (planted / "package.json").write_text(
        json.dumps({"name": "@opencode-ai/plugin", "type": "module", "main": "index.js"})
    )
    (planted / "index.js").write_text(evil_plugin(marker) + "export const tool = { schema: null }\n")
    state_package = Path(project_dir(str(repo.folder), str(tmp_path / "state"))) / "opencode"
    prompt = "Greet Ada."
    with scripted_model({prompt: [call("greet", {"name": "Ada"}), say("greeted")]}) as model:
        env = repo.env(model)  # links the package into the state folder; offline it is missing:
        for link in (state_package / "node_modules" / "@opencode-ai").iterdir():
            link.unlink()
        finished = subprocess.run(
            [BEEUNI, "sessions", "new", "--wait", "--prompt", prompt],
            cwd=repo.folder,
            env={**os.environ, "NO_COLOR": "1", **env, "BEEUNI_LANDLOCK": "off", "TMPDIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=SESSION_LIMIT,
        )
        offered = model.conversation(prompt)[0].tools["greet"]  # its JSON Schema of parameters
    assert finished.returncode == 0, finished.stderr
    assert not marker.exists()
    assert offered["required"] == ["name"]
    assert offered["properties"]["name"] == {"type": "string", "minLength": 2}
    session_id = finished.stdout.split("\n", 1)[0]
    assert "[sessions] opencode and the commands its model runs are not confined (BEEUNI_LANDLOCK=off)" in (
        repo.opencode_log(session_id)
    )


@pytest.mark.skipif(confine.abi() == 0, reason="the kernel has no Landlock")
def test_the_models_commands_reach_the_working_tree_and_not_the_secrets(tmp_path: Path) -> None:
    """The model's `bash` runs in opencode's box: the secrets store and the daemon's private
    folder (under the runner's TMPDIR) cannot be read, git's hooks cannot be written, the
    working tree can."""
    repo = Monorepo(tmp_path)
    stored = run_beeuni(["secrets", "set", "API_KEY=-"], cwd=repo.folder, env=repo.env(None), stdin=SECRET)
    assert stored.code == 0, stored.stderr
    store = Path(project_dir(str(repo.folder), str(tmp_path / "state"))) / "secrets.json"
    assert SECRET in store.read_text()
    hook = repo.top / ".git" / "hooks" / "pre-commit"
    commands = {
        "secrets": f"cat {store} 2>&1 || true",
        "private": f"ls {repo.tmp} 2>&1; ls {repo.tmp}/beeuni-daemon-* 2>&1 || true",
        "hook": f"echo x > {hook} 2>&1 || echo refused",
        "tree": "echo written > written.txt && cat written.txt",
    }
    prompt = "Look around."
    turns = [call("bash", {"command": command, "description": name}) for name, command in commands.items()]
    with scripted_model({prompt: [*turns, say("done")]}) as model:
        # opencode would ask the user before a command names a path outside the project: allowed
        allowed = json.dumps({"external_directory": "allow"})
        finished = repo.sessions(model, "new", "--wait", "--prompt", prompt, OPENCODE_PERMISSION=allowed)
    assert finished.returncode == 0, finished.stderr
    outputs = {
        call["arguments"]["description"]: call["output"]
        for call in tool_calls(repo.log(finished.stdout.split("\n", 1)[0]))
    }
    assert "Permission denied" in outputs["secrets"] and SECRET not in outputs["secrets"]
    assert "Permission denied" in outputs["private"] and "beeuni-daemon-" not in outputs["private"].replace(
        f"{repo.tmp}/beeuni-daemon-*", ""
    )
    assert "Permission denied" in outputs["hook"] and not hook.exists()
    assert outputs["tree"].strip() == "written"
    assert (repo.folder / "written.txt").read_text() == "written\n"
