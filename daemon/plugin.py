"""The standard harness's side: an opencode plugin that forwards every call to the daemon.

The plugin (``opencode_plugin.ts``) reads the daemon's URL and token from the socket opencode's
starter handed it (``handoff.py``) when it loads, registers each served tool through the plugin's
``tool`` hook, and forwards each call with its abort signal. The one module it imports besides
Bun's own is zod, from beeuni's install by its absolute path (``ZOD``): nothing it imports
resolves from a folder another process could write.

It runs inside opencode, beside the token, so it is written where no agent of the session and no
tool module can write: ``opencode/plugin/`` of the daemon's private folder (``private.py``), or
``--opencode-dir``, which may not lie in the repository. The starter points opencode at that
folder (``OPENCODE_CONFIG_DIR``) and checks the file against the digest in the daemon's document
before each start of opencode (``verify``): a plugin that is not the one this daemon wrote never
loads, and a fresh folder per daemon leaves nothing of an earlier session to load.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine.paths import write_file_atomically

if TYPE_CHECKING:
    from ..engine.paths import Repository

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opencode_plugin.ts")
#: zod for the plugin, bundled into one file that imports nothing (``make plugin-zod``): the plugin
#: imports it by this absolute path, so that no ``node_modules`` beside or above the folder opencode
#: loads the plugin from (TMPDIR's, which any local user can make) answers its import
ZOD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin_zod.js")
PLUGIN_FOLDER = "plugin"
PLUGIN_NAME = "beeuni-tools.ts"


class PluginRefused(Exception):
    """The plugin cannot be written there: the rules' ``DAEMON_MESSAGES`` key and its detail."""


@dataclass(frozen=True)
class Plugin:
    path: str
    digest: str  # sha256 of its bytes, in the daemon's document


def write_plugin(repo: Repository, opencode_dir: str, without_connection: str) -> Plugin:
    """Write the plugin into ``<opencode_dir>/plugin/`` (mode 0600), saying ``without_connection``
    (the rules' text) when opencode was started without the daemon's connection; or
    ``PluginRefused`` (nothing written) for a folder inside the repository."""
    folder = os.path.realpath(opencode_dir)
    if folder == repo.root or folder.startswith(repo.root + os.sep):
        raise PluginRefused("plugin_in_repository", opencode_dir)
    with open(TEMPLATE, encoding="utf-8") as handle:
        source = handle.read().replace("'__BEEUNI_WITHOUT_CONNECTION__'", json.dumps(without_connection))
    source = source.replace("'__BEEUNI_ZOD__'", json.dumps(ZOD))
    data = source.encode()
    path = os.path.join(folder, PLUGIN_FOLDER, PLUGIN_NAME)
    write_file_atomically(path, data, mode=0o600)
    return Plugin(path, hashlib.sha256(data).hexdigest())


class PluginMismatch(Exception):
    """The plugin file is not the one the daemon wrote, or something else waits beside it."""


def verify(document: dict[str, object]) -> str:
    """Check, before opencode starts, that the plugin the daemon's ``document`` names is the file
    the daemon wrote and alone in its folder; the folder to give opencode as its configuration
    folder. ``PluginMismatch`` says what is wrong."""
    path, digest = document.get("plugin"), document.get("plugin_sha256")
    if not isinstance(path, str) or not isinstance(digest, str):
        raise PluginMismatch("the daemon's document names no plugin")
    folder = os.path.dirname(path)
    try:
        with open(path, "rb") as handle:
            found = hashlib.sha256(handle.read()).hexdigest()
        others = sorted(set(os.listdir(folder)) - {PLUGIN_NAME})
    except OSError as err:
        raise PluginMismatch(f"{path}: {err.strerror}") from None
    if found != digest:
        raise PluginMismatch(f"{path} is not the plugin the daemon wrote")
    if others:
        raise PluginMismatch(f"{folder} holds more than the daemon's plugin: {', '.join(others)}")
    return os.path.dirname(folder)
