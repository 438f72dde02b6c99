"""The standard harness's side: an opencode plugin that forwards every call to the daemon.

The plugin (``opencode_plugin.ts``) reads the daemon's URL and token from the socket opencode's
starter handed it (``handoff.py``) when it loads, registers each served tool through the plugin's
``tool`` hook, and forwards each call with its abort signal.

The plugin is written by eject's rule: a path inside the repository is never written through
a symbolic link that leads out of it (``tool_files.writable``). An ``--opencode-dir`` outside
the repository is the user's choice and written as given.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from ..cli.tool_files import writable
from ..engine.paths import write_file_atomically

if TYPE_CHECKING:
    from ..cli.tool_files import Refuse
    from ..engine.paths import Repository

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opencode_plugin.ts")
PLUGIN_NAME = "beeuni-tools.ts"


def write_plugin(repo: Repository, opencode_dir: str, without_connection: str, refuse: Refuse) -> str:
    """Write the plugin into ``<opencode_dir>/plugin/`` (mode 0600), saying ``without_connection``
    (the rules' text) when opencode was started without the daemon's connection; return its path,
    or raise ``refuse``'s refusal (nothing written)."""
    with open(TEMPLATE, encoding="utf-8") as handle:
        source = handle.read().replace("'__BEEUNI_WITHOUT_CONNECTION__'", json.dumps(without_connection))
    path = os.path.join(os.path.abspath(opencode_dir), "plugin", PLUGIN_NAME)
    relative = os.path.relpath(path, repo.root)
    inside = relative != os.pardir and not relative.startswith(os.pardir + os.sep)
    target = writable(repo, relative, refuse) if inside else path
    write_file_atomically(target, source.encode(), mode=0o600)
    return path
