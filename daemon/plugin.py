"""The standard harness's side: an opencode plugin that forwards every call to the daemon.

The plugin (``opencode_plugin.ts``) reads the daemon's URL and token from the connection file at
opencode's start, registers each served tool through the plugin's ``tool`` hook, and forwards each
call with its abort signal.
"""

from __future__ import annotations

import json
import os

from .secrets import write_private

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opencode_plugin.ts")
PLUGIN_NAME = "beeuni-tools.ts"


def write_plugin(opencode_dir: str, connection_file: str) -> str:
    """Write the plugin into ``<opencode_dir>/plugin/``; return its path."""
    with open(TEMPLATE, encoding="utf-8") as handle:
        source = handle.read().replace("'__BEEUNI_CONNECTION_FILE__'", json.dumps(connection_file))
    folder = os.path.join(opencode_dir, "plugin")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, PLUGIN_NAME)
    write_private(path, source.encode())
    return path
