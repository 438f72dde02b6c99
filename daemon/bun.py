"""Where Bun, the tool modules' runtime, is found. Light on purpose: commands that only need to
know whether Bun is there import this and nothing of the daemon's server."""

from __future__ import annotations

import os
import shutil


class BunMissing(Exception):
    def __init__(self) -> None:
        super().__init__(
            "Bun is not installed: install it (`npm install --global bun`, or see https://bun.sh), "
            "put `bun` on PATH or set BEEUNI_BUN to its path (`make setup` installs it into node_modules/.bin)"
        )


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
