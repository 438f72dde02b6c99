"""Where beeuni keeps its caches (the compiled rules, the results of checks): ``$BEEUNI_CACHE_DIR``,
else ``$XDG_CACHE_HOME/beeuni``, else ``~/.cache/beeuni``. A module of its own, importing
nothing, because a run answered from the result cache imports little else."""

from __future__ import annotations

import os

CACHE_DIR_VARIABLE = "BEEUNI_CACHE_DIR"


def cache_dir() -> str:
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "beeuni")
