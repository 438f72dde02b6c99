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
* opencode's data and state folders the session's own (``SessionData``, in the project's state
  folder), where its database keeps the conversation from turn to turn, and its cache the turn's:
  never the user's, which the user's own opencode loads code from (its cache's packages) and
  configuration (``auth.json``'s ``wellknown`` entries fetch one). Each turn keeps of the session's
  data only the database; the user's ``auth.json`` (``opencode auth login``) is given in
  ``OPENCODE_AUTH_CONTENT``, read before opencode starts, and no ``auth.json`` is read;
* the rules' ``OPENCODE_TURN_SETTINGS`` (no formatter, no language server) merged last;
* ``SHELL`` and the ``shell`` setting the launcher of the commands' box
  (``daemon/box/command_box.py``): every command of its model runs in a box nested in opencode's,
  which reaches neither opencode's data nor its configuration, nor the password of its server.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

from ..daemon.box import command_box
from ..daemon.box.confine import allowed_around
from ..daemon.box.harness_box import HarnessBox, harness_box
from ..daemon.box.sandbox import SEARCH_PATH
from ..daemon.plugin import ZOD
from ..daemon.serving.secrets import hidden_from_boxes
from ..engine.paths import git_top, upward
from .model_config import ConfigProblem, parse_config, user_models

#: the XDG folders opencode keeps its own data in, and where they are when the variable is unset
DATA_FOLDERS = {
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_STATE_HOME": (".local", "state"),
    "XDG_CACHE_HOME": (".cache",),
}
USER_CONFIG = "user-config.json"  # the copy of the user's OPENCODE_CONFIG
GLOBAL_MODELS = "config.json"  # the global folder's first file: the user's models, read before the rest
INSTRUCTIONS = "AGENTS.md"  # where opencode reads the configuration folder's instructions
DEFAULT_SHELL = "/bin/sh"  # the commands' shell when none the rules name is on the search path
SHELL_SETTING = "shell"  # the configuration key of the shell opencode runs its model's commands in
AUTH = "auth.json"  # the credentials `opencode auth login` keeps in the user's data folder
#: what a session's data folder keeps from turn to turn: opencode's database (``opencode*.db``,
#: with its write-ahead log); the rest (downloaded programs, git snapshots, logs) is made anew
DATABASE_PREFIX, DATABASE_SUFFIXES = "opencode", (".db", ".db-wal", ".db-shm")


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

    @property
    def cache(self) -> str:
        """opencode's cache folder (``XDG_CACHE_HOME``): the packages it installs, made anew."""
        return os.path.join(self.root, "cache")

    @property
    def shell(self) -> str:
        """Where the commands' launcher is written (``SHELL``)."""
        return os.path.join(self.root, "shell")

    @property
    def commands(self) -> str:
        """The home and temporary folder of the commands opencode's model runs."""
        return os.path.join(self.root, "commands")

    def make(self) -> None:
        for folder in (self.config, self.home, self.tmp, self.cache, self.shell, self.commands):
            os.makedirs(folder, mode=0o700, exist_ok=True)


@dataclass(frozen=True)
class SessionData:
    """opencode's data and state folders of one session (``XDG_DATA_HOME``, ``XDG_STATE_HOME``)."""

    root: str

    @property
    def data(self) -> str:
        return os.path.join(self.root, "data")

    @property
    def state(self) -> str:
        return os.path.join(self.root, "state")

    def prepare(self) -> None:
        """Make the folders, keeping of opencode's data only its database: whatever else a turn left
        there (a program in ``bin/``, a snapshot's git configuration) is removed before opencode
        reads it again."""
        for folder in (self.root, self.data, self.state):
            _real_folder(folder)
        mine = _real_folder(os.path.join(self.data, "opencode"))
        _real_folder(os.path.join(self.state, "opencode"))
        for entry in os.scandir(mine):
            if entry.is_file(follow_symlinks=False) and _is_database(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


def _is_database(name: str) -> bool:
    return name.startswith(DATABASE_PREFIX) and name.endswith(DATABASE_SUFFIXES)


def _real_folder(path: str) -> str:
    """``path`` as a folder of this user's, readable by them only (a link or file there removed)."""
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.unlink(path)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def data_folders(env: dict[str, str]) -> dict[str, str]:
    """The user's XDG data, state and cache folders, as opencode would find them with ``env``."""
    home = env.get("HOME") or os.path.expanduser("~")
    return {name: env.get(name) or os.path.join(home, *default) for name, default in DATA_FOLDERS.items()}


def environment(env: dict[str, str], turn: TurnFolders, data: SessionData) -> dict[str, str]:
    """opencode's environment: ``env`` (the runner's) with its configuration the turn's alone, its
    data the session's and the user's credentials given whole."""
    given = dict(env)
    given.update(
        XDG_DATA_HOME=data.data,
        XDG_STATE_HOME=data.state,
        XDG_CACHE_HOME=turn.cache,
        OPENCODE_AUTH_CONTENT=env.get("OPENCODE_AUTH_CONTENT") or _user_credentials(env),
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


def _user_credentials(env: dict[str, str]) -> str:
    """The user's ``auth.json`` as opencode would read it (``{}`` when there is none)."""
    path = os.path.join(data_folders(env)["XDG_DATA_HOME"], "opencode", AUTH)
    try:
        with open(path, encoding="utf-8") as handle:
            content = json.load(handle)
    except (OSError, ValueError):
        return "{}"
    return json.dumps(content) if isinstance(content, dict) else "{}"


def with_settings(content: str | None, settings: dict[str, object]) -> str | None:
    """``OPENCODE_CONFIG_CONTENT`` with ``settings`` merged over it (content that is not a JSON
    object is left as it is: opencode refuses it and starts no turn)."""
    if not settings:
        return content
    try:
        document = parse_config(content, "OPENCODE_CONFIG_CONTENT") if content else {}
    except ConfigProblem:
        return content
    if not isinstance(document, dict):
        return content
    return json.dumps({**document, **settings})


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


def box(
    repo_root: str,
    turn: TurnFolders,
    data: SessionData,
    env: dict[str, str],
    opencode: str,
    read: list[str],
    shells: list[str],
) -> tuple[HarnessBox, str]:
    """The box the turn's opencode runs in, and the launcher of its commands' box (for ``SHELL``).

    opencode's: the project's folder read and written (git's folder and the state folder aside),
    the turn's ``home/``, ``tmp/``, cache and commands' folders and the session's data written; the
    turn's configuration folder (the plugin), opencode's install, beeuni's (the plugin's zod, the
    launcher), ``read`` and the git work tree around the project only read.

    Its commands': the project's folder as above and their own home and temporary folder written,
    ``read`` and the git work tree around the project read — not opencode's data, home,
    configuration or install. The real shell is the first of ``shells`` on the search path."""
    hidden = hidden_from_boxes()
    git = git_top(repo_root)
    protected, around = [], []
    if git is not None:
        top, git_dir = git
        protected += [git_dir, os.path.join(top, ".git")]
        around += [git_dir, *_common_dir(git_dir), *allowed_around(os.path.realpath(top), hidden)]
    opencode_reads = [*read, *around, turn.root, *_install(opencode), os.path.dirname(ZOD)]
    opencode_reads += command_box.readable_for_launcher()
    written = [data.data, data.state, turn.cache, turn.home, turn.tmp, turn.commands]
    harness = harness_box(repo_root, hidden, protected, opencode_reads, written)
    commands = harness_box(repo_root, hidden, protected, [*read, *around], [turn.commands])
    home = turn.commands
    variables = {name: home for name in ("HOME", "TMPDIR", "XDG_CONFIG_HOME", *DATA_FOLDERS)}
    found = (shutil.which(name, path=env.get("PATH") or SEARCH_PATH) for name in shells)
    shell = next((path for path in found if path), DEFAULT_SHELL)
    launcher = command_box.write_launcher(
        turn.shell, os.path.realpath(shell), commands.read, commands.write, commands.abi, variables
    )
    return harness, launcher


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
