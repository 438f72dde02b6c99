"""Where Bun, the tool modules' runtime, is found. Light on purpose: commands that only need to
know whether Bun is there import this and nothing of the daemon's server."""

from __future__ import annotations

import os
import shutil
import sys

from ...engine.paths import upward


class BunMissing(Exception):
    """Bun is nowhere ``find_bun`` looks; the text telling how to install it is the rules'
    (``BUN_MISSING``)."""


def find_bun(project: str | None = None) -> str:
    """Bun's path. In this order: where ``BEEUNI_BUN`` says (and only there, when it is set); the
    ``node_modules/.bin/bun`` of the ``project`` folder or of a folder above it (where
    ``npm install bun`` puts it, as ``npm run`` finds it); the ``bun`` beside this Python's own
    scripts (``make setup`` links the one it installed there); then PATH."""
    configured = os.environ.get("BEEUNI_BUN")
    if configured:
        if not os.access(configured, os.X_OK):
            raise BunMissing()
        return configured
    installed = os.path.join(sys.prefix, "bin", "bun")
    above = upward(os.path.abspath(project)) if project else []
    for candidate in [*(os.path.join(folder, "node_modules", ".bin", "bun") for folder in above), installed]:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("bun")
    if found is None:
        raise BunMissing()
    return found
