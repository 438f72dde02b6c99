"""Opening a change request with the forge's own command-line client (``beeuni cr open``).

The clients and their arguments are the rules' (``CR_FORGES``): each is tried, in order, where it
is installed and logged in to the remote's host; the first that is opens the request. A remote
on no host (a path, a ``file://`` URL) has no forge. Without one, the push's own answer may hold
the forge's link to open the request (``CR_PUSH_LINK``).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..engine.lang.values import text
from ..engine.release import change

if TYPE_CHECKING:
    from ..engine.project import ProjectRun


@dataclass(frozen=True)
class Opened:
    """What the forge's client did: the request's ``url``; or its ``failure``, by ``command``;
    or neither (no client for this remote)."""

    url: str | None = None
    failure: str | None = None
    command: str = ""


def place_of(url: str) -> tuple[str, str] | None:
    """The host and the repository's path on it (``owner/name``) of a remote's URL: a URL with a
    host, or git's ``[user@]host:path``; None for a path on this machine."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file" or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    else:
        head, colon, path = url.partition(":")
        if not colon or "/" in head or not head:
            return None
        host = head.rpartition("@")[2]
    path = path.strip("/")
    path = path[: -len(".git")] if path.endswith(".git") else path
    return (host, path) if host and path else None


def open_request(run: ProjectRun, top: str, remote: str, branch: str, base: str, title: str, body: str) -> Opened:
    url = change.remote_url(top, remote)
    place = place_of(url) if url is not None else None
    if place is None:
        return Opened()
    blanks = {"host": place[0], "path": place[1], "branch": branch, "base": base, "title": title, "body": body}
    for forge in run.output("CR_FORGES"):
        program = shutil.which(text(forge["command"]))
        if program is None:
            continue
        logged_in = _client(program, [text(arg).format_map(blanks) for arg in forge["logged_in"]], top)
        if logged_in is None or logged_in.returncode != 0:
            continue
        command = text(forge["command"])
        done = _client(program, [text(arg).format_map(blanks) for arg in forge["open"]], top)
        if done is None:
            return Opened(failure="it did not run", command=command)
        said = done.stdout.decode("utf-8", "replace").strip()
        if done.returncode != 0:
            problem = done.stderr.decode("utf-8", "replace").strip() or said
            last = problem.splitlines()[-1] if problem else f"exit status {done.returncode}"
            return Opened(failure=last, command=command)
        lines = said.splitlines()
        return Opened(url=next((line for line in reversed(lines) if "://" in line), said), command=command)
    return Opened()


def _client(program: str, arguments: list[str], top: str) -> subprocess.CompletedProcess[bytes] | None:
    """Run the forge's client in the work tree, with nothing to read: it asks no question."""
    try:
        return subprocess.run([program, *arguments], cwd=top, stdin=subprocess.DEVNULL, capture_output=True)
    except OSError:
        return None


def push_link(run: ProjectRun, said: str) -> str | None:
    """The forge's link to open the request, from ``git push``'s answer, if it gave one."""
    from ..engine.lang import patterns

    pattern = patterns.regex(str(run.output("CR_PUSH_LINK")))
    for line in said.splitlines():
        found = pattern.search(line.strip())
        if found is not None:
            return str(found.group(1))
    return None
