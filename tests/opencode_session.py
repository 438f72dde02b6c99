"""Real opencode sessions for tests: the pinned opencode (``node_modules/.bin/opencode``) runs
one prompt non-interactively (``opencode run``) against a scripted model (``model_server.py``),
in a project whose tools the real daemon serves through the plugin it writes.

Everything opencode keeps stays in the test's temporary folder (HOME and the XDG folders), and
nothing is fetched: the model catalogue fetch, updates and sharing are switched off with
opencode's own settings, and the package opencode installs into a project's ``.opencode/`` for
its plugins (``@opencode-ai/plugin``, pinned in package.json) is linked from this repository's
``node_modules`` beforehand, with the package files opencode compares, so that it finds nothing
to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beeuni.daemon.plugin import verify
from conftest import ROOT
from daemon_helpers import Daemon, run_harness
from model_server import MODEL_ID, ScriptedModel

OPENCODE = ROOT / "node_modules" / ".bin" / "opencode"
PLUGIN_PACKAGE = "@opencode-ai/plugin"

# opencode's own switches for a session that reaches nothing but 127.0.0.1
OFFLINE = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
}


@dataclass
class Run:
    """One finished ``opencode run``: its exit status, its JSON events and its output."""

    returncode: int
    events: list[dict[str, Any]]
    stdout: str
    stderr: str
    seconds: float

    def tool_parts(self) -> list[dict[str, Any]]:
        """The tool calls opencode reported, each with its ``state`` (input, output or error)."""
        return [e["part"] for e in self.events if e.get("type") == "tool_use" and "part" in e]


def opencode_version() -> str | None:
    """The pinned opencode's version, or None when it cannot start here (the reason to skip)."""
    if not OPENCODE.exists():
        return None
    try:
        shown = subprocess.run([str(OPENCODE), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return shown.stdout.strip() if shown.returncode == 0 else None


def home_env(home: Path) -> dict[str, str]:
    """HOME and the XDG folders under ``home``, with opencode's offline switches: what opencode
    reads and writes of a user's folders stays inside the test's."""
    return {
        **OFFLINE,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".data"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".state"),
    }


def scripted_config(home: Path, model: ScriptedModel, base_url: str | None = None) -> str:
    """Write an opencode configuration under ``home`` that names the scripted model (its requests
    sent to ``base_url`` instead, if given); its path, for ``OPENCODE_CONFIG``."""
    home.mkdir(parents=True, exist_ok=True)
    provider = model.config()
    if base_url is not None:
        provider["options"] = {**provider["options"], "baseURL": base_url}
    settings = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": provider},
        "model": f"scripted/{MODEL_ID}",
        "small_model": f"scripted/{MODEL_ID}",
        "autoupdate": False,
        "share": "disabled",
    }
    config = home / "scripted-model.json"
    config.write_text(json.dumps(settings))
    return str(config)


def environment(home: Path, project: Path, model: ScriptedModel | None = None) -> dict[str, str]:
    """opencode's environment when a test runs it itself: ``opencode_variables``, PWD the project
    (opencode takes its project from it)."""
    return {**os.environ, **opencode_variables(home, model), "PWD": str(project), "NO_COLOR": "1"}


def sessions_environment(
    home: Path, state: Path, project: Path, model: ScriptedModel | None = None, base_url: str | None = None
) -> dict[str, str]:
    """What ``beeuni sessions`` runs with in tests and benchmarks: ``opencode_variables``, the state
    folder ``state``, the set-up's Bun and opencode. The package opencode installs for the plugin,
    in the opencode folder of the project's state, is linked beforehand: nothing is fetched."""
    from beeuni.daemon.serving.secrets import project_dir

    link_plugin_package(Path(project_dir(str(project), str(state))) / "opencode")
    return {
        **opencode_variables(home, model, base_url),
        "BEEUNI_STATE_DIR": str(state),
        "BEEUNI_BUN": str(ROOT / "node_modules" / ".bin" / "bun"),
        "BEEUNI_OPENCODE": str(OPENCODE),
    }


def opencode_variables(home: Path, model: ScriptedModel | None = None, base_url: str | None = None) -> dict[str, str]:
    """``home_env``, and — with ``model`` — a configuration (``OPENCODE_CONFIG``, beside the
    project's own opencode.json) naming the scripted model (its requests sent to ``base_url``
    instead, if given)."""
    variables = home_env(home)
    if model is not None:
        variables["OPENCODE_CONFIG"] = scripted_config(home, model, base_url)
    return variables


def link_plugin_package(folder: Path) -> None:
    """Give opencode's configuration folder ``folder`` the plugin package opencode would install
    from the registry at its start: linked from this repository, with a package.json and lock
    that name it, so that opencode's check finds it installed and fetches nothing."""
    scope = folder / "node_modules" / "@opencode-ai"
    scope.mkdir(parents=True, exist_ok=True)
    link = scope / "plugin"
    if not link.exists():
        link.symlink_to(ROOT / "node_modules" / "@opencode-ai" / "plugin", target_is_directory=True)
    version = json.loads((ROOT / "node_modules" / "@opencode-ai" / "plugin" / "package.json").read_text())["version"]
    dependencies = {PLUGIN_PACKAGE: version}
    (folder / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    lock = {
        "name": folder.name,
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": {"dependencies": dependencies}},
    }
    (folder / "package-lock.json").write_text(json.dumps(lock))


def plugin_folder(daemon: Daemon) -> Path:
    """opencode's configuration folder for ``daemon``'s plugin, where opencode installs the
    plugin package (``link_plugin_package`` links it there beforehand)."""
    return Path(verify(daemon.document))


def run_opencode(
    project: Path, home: Path, model: ScriptedModel, daemon: Daemon, prompt: str, agent: str | None = None, *args: str
) -> Run:
    """Run ``prompt`` in ``project`` with opencode's ``agent`` (its default agent if None)."""
    link_plugin_package(project / ".opencode")
    link_plugin_package(plugin_folder(daemon))
    command = [str(OPENCODE), "run", "--format", "json", "--title", "scripted", "--model", f"scripted/{MODEL_ID}"]
    if agent is not None:
        command += ["--agent", agent]
    command += [*args, prompt]
    started = time.monotonic()
    finished = run_harness(command, daemon, project, environment(home, project, model))
    seconds = time.monotonic() - started
    events = [json.loads(line) for line in finished.stdout.split("\n") if line.startswith("{")]
    return Run(finished.returncode, events, finished.stdout, finished.stderr, seconds)
