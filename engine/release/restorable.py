"""Whether git can give a file back: what ``tools migrate`` may delete, and what it moves aside.

A file is ``clean`` when git tracks it and it is the same in the work tree, the index and the
last commit: deleted, ``git checkout`` restores it. Any other (``changed``, ``untracked``,
``ignored``, or ``none`` outside a git repository or without git) is never deleted. One
``git status`` answers for every path; each path is taken literally (no pathspec magic), and
its answer is read from git's porcelain format, whose paths are from the work tree's top. Both
commands run through ``git.run``, the repository as hostile input.
"""

from __future__ import annotations

import os

from . import git

CLEAN, CHANGED, UNTRACKED, IGNORED, NONE = "clean", "changed", "untracked", "ignored", "none"


def git_states(root: str, paths: list[str]) -> dict[str, str]:
    """The state of each repo-relative path of the project at ``root``."""
    from ..paths import git_top

    found = git_top(root)
    if not paths or found is None:
        return dict.fromkeys(paths, NONE)
    top = os.path.realpath(found[0])
    prefix = os.path.relpath(os.path.realpath(root), top)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    named = [prefix + path for path in paths]
    status = ("status", "--porcelain=v1", "-z", "--ignored=traditional", "--untracked-files=all", "--no-renames")
    try:
        done = git.run(top, "--literal-pathspecs", *status, "--", *named)
    except OSError:  # no git, or it stalled
        return dict.fromkeys(paths, NONE)
    if done.returncode != 0:
        return dict.fromkeys(paths, NONE)
    listed: dict[str, str] = {}
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        listed[path] = UNTRACKED if code == "??" else IGNORED if code == "!!" else CHANGED
    quiet = [path for path in named if path not in listed]
    committed = _committed(top, quiet) if quiet else set()
    # not listed: tracked and unchanged, or in a repository with nothing committed yet
    return {path: listed.get(prefix + path) or (CLEAN if prefix + path in committed else UNTRACKED) for path in paths}


def _committed(top: str, paths: list[str]) -> set[str]:
    """Which of ``paths`` (from the work tree's top ``top``) the last commit holds."""
    try:
        done = git.run(top, "--literal-pathspecs", "ls-tree", "-z", "--full-name", "--name-only", "HEAD", "--", *paths)
    except OSError:
        return set()
    if done.returncode != 0:
        return set()
    return set(done.stdout.decode("utf-8", "surrogateescape").split("\0"))
