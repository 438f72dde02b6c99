"""What one turn's opencode reads and reaches: the folders made for the turn, the environment it
starts with, the project configuration it is given from the release, and the box it runs in.

opencode 1.18 (``packages/opencode/src/config``) reads its configuration from: the global folder
(``$XDG_CONFIG_HOME/opencode``: ``config.json``, ``opencode.json(c)``, and its ``agent``,
``command``, ``mode``, ``plugin``, ``tool`` folders), ``OPENCODE_CONFIG``, every ``opencode.json(c)``
from its working folder up to the git work tree's top, every ``.opencode/`` folder on the same
way (with their plugins, tools, agents and commands), ``~/.opencode/``, ``OPENCODE_CONFIG_DIR``,
``OPENCODE_CONFIG_CONTENT``, and instructions (``AGENTS.md``, ``CLAUDE.md``) from the project up
and from ``~/.claude``. A turn gives it only the session's:

* ``OPENCODE_DISABLE_PROJECT_CONFIG``: nothing of the working tree or above it (no
  ``opencode.json``, no ``.opencode/``, no ``AGENTS.md``) — where the agents write;
* ``XDG_CONFIG_HOME`` the turn's folder, so that the global folder is the turn's configuration
  folder (``OPENCODE_CONFIG_DIR``, where the daemon writes the plugin), and ``HOME`` the turn's
  ``home/``: the user's ``~/.config/opencode``, ``~/.opencode`` and ``~/.claude`` are not read;
* the release's own project configuration (``OPENCODE_PROJECT_FILES`` in the rules), copied from
  the daemon's copy of the release: ``.opencode/…`` into ``home/.opencode/``, the project's
  ``opencode.json(c)`` and ``AGENTS.md`` into the configuration folder;
* the user's ``OPENCODE_CONFIG`` (copied into the turn's folder) and ``OPENCODE_CONFIG_CONTENT``:
  what the user named in the environment of the command; and of the user's global configuration
  its models alone (``provider``, ``model``, ``small_model``; ``model_config.user_models``), as the
  configuration folder's ``config.json`` — no plugin, MCP server or agent of it;
* opencode's data, state and cache folders stay the user's (``XDG_DATA_HOME`` … as before), so
  that a session's conversation goes on from turn to turn and ``opencode auth login`` counts.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from ..daemon.confine import allowed_around
from ..daemon.harness_box import HarnessBox, harness_box
from ..daemon.plugin import ZOD
from ..daemon.secrets import state_dir
from ..engine.paths import git_top, upward
from .model_config import ConfigProblem, user_models

#: the XDG folders opencode keeps its own data in, and where they are when the variable is unset
DATA_FOLDERS = {
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_STATE_HOME": (".local", "state"),
    "XDG_CACHE_HOME": (".cache",),
}
USER_CONFIG = "user-config.json"  # the copy of the user's OPENCODE_CONFIG
GLOBAL_MODELS = "config.json"  # the global folder's first file: the user's models, read before the rest
INSTRUCTIONS = "AGENTS.md"  # where opencode reads the configuration folder's instructions


@dataclass(frozen=True)
class TurnFolders:
    """The turn's own folders, under ``root`` in the project's state folder, removed after it."""

    root: str

    @property
    def config(self) -> str:
        """opencode's configuration folder: ``OPENCODE_CONFIG_DIR`` and ``$XDG_CONFIG_HOME/opencode``."""
        return os.path.join(self.root, "opencode")

    @property
    def home(self) -> str:
        return os.path.join(self.root, "home")

    @property
    def tmp(self) -> str:
        return os.path.join(self.root, "tmp")

    def make(self) -> None:
        for folder in (self.config, self.home, self.tmp):
            os.makedirs(folder, mode=0o700, exist_ok=True)


def data_folders(env: dict[str, str]) -> dict[str, str]:
    """The user's XDG data, state and cache folders, as opencode would find them with ``env``."""
    home = env.get("HOME") or os.path.expanduser("~")
    return {name: env.get(name) or os.path.join(home, *default) for name, default in DATA_FOLDERS.items()}


def environment(env: dict[str, str], turn: TurnFolders) -> dict[str, str]:
    """opencode's environment: ``env`` (the runner's) with its configuration the turn's alone."""
    given = {**env, **data_folders(env)}
    given.update(
        HOME=turn.home,
        XDG_CONFIG_HOME=turn.root,
        TMPDIR=turn.tmp,
        OPENCODE_CONFIG_DIR=turn.config,
        OPENCODE_DISABLE_PROJECT_CONFIG="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
        OPENCODE_DISABLE_EXTERNAL_SKILLS="1",
    )
    try:
        models = user_models(env)  # the user's models, configured once for both harnesses
    except ConfigProblem:
        models = {}  # a broken global file: opencode is not given it (and says no model, if so)
    if models:
        with open(os.path.join(turn.config, GLOBAL_MODELS), "w", encoding="utf-8") as handle:
            json.dump(models, handle)
    user_config = env.get("OPENCODE_CONFIG")
    if user_config:
        copy = os.path.join(turn.root, USER_CONFIG)
        try:
            shutil.copyfile(user_config, copy)
            given["OPENCODE_CONFIG"] = copy
        except OSError:
            pass  # opencode says it cannot read it, as it would have
    return given


def give_release(release_root: str, turn: TurnFolders, paths: list[str]) -> list[str]:
    """Copy the release's project configuration (``paths``, repo-relative) into the turn's folders:
    ``.opencode/…`` into ``home/.opencode/``, the rest into the configuration folder; the project
    folder's ``AGENTS.md`` as the configuration folder's instructions. The configuration folders
    it made (for the plugin package's link)."""
    made = set()
    for path in [*paths, INSTRUCTIONS]:
        source = os.path.join(release_root, path)
        if not os.path.lexists(source):
            continue
        first, _, rest = path.partition("/")
        if first == ".opencode" and rest:
            target, folder = os.path.join(turn.home, ".opencode", rest), os.path.join(turn.home, ".opencode")
        else:
            target, folder = os.path.join(turn.config, os.path.basename(path)), turn.config
        if os.path.isdir(source):
            shutil.copytree(source, target, symlinks=False, ignore_dangling_symlinks=True, dirs_exist_ok=True)
        elif os.path.isfile(source):
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            shutil.copyfile(source, target)
        made.add(folder)
    return sorted(made)


def box(repo_root: str, turn: TurnFolders, env: dict[str, str], opencode: str, read: list[str]) -> HarnessBox:
    """The box the turn's opencode runs in: the project's folder read and written (git's folder
    and the state folder aside), the turn's ``home/`` and ``tmp/`` and opencode's own data folders
    written; the turn's configuration folder (the plugin), opencode's install, beeuni's (the
    plugin's zod), ``read`` and the git work tree around the project only read."""
    hidden = [state_dir()]
    git = git_top(repo_root)
    protected, readable = [], [*read, turn.root, *_install(opencode), os.path.dirname(ZOD)]
    if git is not None:
        top, git_dir = git
        protected += [git_dir, os.path.join(top, ".git")]
        readable += [git_dir, *_common_dir(git_dir), *allowed_around(os.path.realpath(top), hidden)]
    folders = [os.path.join(path, "opencode") for path in data_folders(env).values()]
    for folder in folders:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return harness_box(repo_root, hidden, protected, readable, [*folders, turn.home, turn.tmp])


def _install(opencode: str) -> Iterator[str]:
    """What opencode's own program needs to read: the ``node_modules`` folder it was installed
    into (npm's wrapper and the binary of the platform beside it), else its file."""
    real = os.path.realpath(opencode)
    yield real
    for folder in upward(os.path.dirname(real)):
        if os.path.basename(folder) == "node_modules":
            yield folder
            return


def _common_dir(git_dir: str) -> list[str]:
    """A linked work tree's common git folder (its ``commondir``), which git reads too."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = handle.readline().strip()
    except (OSError, ValueError):
        return []
    return [os.path.normpath(os.path.join(git_dir, common))] if common else []
