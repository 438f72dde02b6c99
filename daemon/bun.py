"""Where Bun, the tool modules' runtime, is found. Light on purpose: commands that only need to
know whether Bun is there import this and nothing of the daemon's server."""

from __future__ import annotations

import os
import shutil


class BunMissing(Exception):
    """Bun is not on PATH, nor where ``BEEUNI_BUN`` says; the text telling how to install it is
    the rules' (``BUN_MISSING``)."""


def find_bun() -> str:
    """Bun from the environment (``BEEUNI_BUN``) or on PATH."""
    configured = os.environ.get("BEEUNI_BUN")
    if configured:
        if not os.access(configured, os.X_OK):
            raise BunMissing()
        return configured
    found = shutil.which("bun")
    if found is None:
        raise BunMissing()
    return found
