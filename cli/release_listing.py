"""``beeuni tools ls --release REV``: the tools of a commit, as a session on it would serve them.

The commit is copied as the daemon copies it (``engine/release/snapshot.py``) into a temporary
folder, removed afterwards, and the rules run over the copy in the commit's view
(``engine/release/served_run.py``): the listing is what a session started on that commit gets,
and a tool the commit lacks something for is listed apart with why. No module is loaded.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .shared import UsageError

if TYPE_CHECKING:
    from ..engine.project import ProjectRun


@contextmanager
def listed_release(path: str, rules: str | None, rev: str) -> Iterator[tuple[ProjectRun, str]]:
    """The rules' run over the release ``rev`` of the project at ``path``, and its commit;
    ``UsageError`` with the daemon's words when there is no such release."""
    from ..daemon.messages import rules_texts, say
    from ..engine.paths import git_top
    from ..engine.project import locate
    from ..engine.release.served_run import release_run, rules_inside
    from ..engine.release.snapshot import ReleaseError, commit_of, take

    repo, manifest = locate(path)
    try:
        found = git_top(repo.root)
        if found is None:
            raise ReleaseError("release_no_git", repo.root)
        top = found[0]
        commit = commit_of(top, rev)
        assert commit is not None  # (a revision given names a commit, or raised)
        with tempfile.TemporaryDirectory(prefix="beeuni-release-") as base:
            inside = rules_inside(rules, top)
            snapshot = take(repo.root, manifest, commit, os.path.join(base, "release"), [inside] if inside else [])
            yield release_run(repo.root, manifest, rules, top, snapshot), commit
    except ReleaseError as err:
        raise UsageError(say(rules_texts(rules), err.key, detail=err.detail)) from None
