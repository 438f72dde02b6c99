"""The release view of a commit, as a session serves it: the files of its copy (``snapshot.py``).

``validate`` checks git's index over the working tree (``git_index.Release``); a session serves
a commit, copied into a folder of its own. This view answers the release fact's questions
(``facts.py``) for that commit: a file is in the release when the copy holds it. A file the
commit lacks though the working tree has it is said by why: ``staged`` (git's index holds it, the
commit does not), ``untracked`` or ``ignored`` — as git's index says of it, so that a session, and
``tools ls --release``, name the user's own path and its reason, never the copy's.
"""

from __future__ import annotations

import os

from ..paths import Repository
from .git_index import TRACKED, UNTRACKED, Release

#: a file the commit lacks that git's index holds: added after the commit, or never committed
STAGED = "staged"


class CommitView:
    """The commit whose copy's project folder is ``root`` (inside the copy's top ``top``) and
    holds ``paths`` (relative to it); ``working``: the project's folder in the working tree."""

    def __init__(self, top: str, root: str, paths: frozenset[str], working: str) -> None:
        self.top = top
        self.paths = paths
        prefix = os.path.relpath(root, top).replace(os.sep, "/")
        self.prefix = "" if prefix == "." else prefix + "/"
        self.working = Repository(working)
        self._index: Release | bool | None = False  # (read when first asked)

    def _working_index(self) -> Release | None:
        if self._index is False:
            self._index = Release.of(self.working.root)
        return self._index if isinstance(self._index, Release) else None

    def state(self, relative: str) -> str:
        """``tracked`` when the commit holds the file; else why not, as the index says."""
        if relative in self.paths:
            return TRACKED
        index = self._working_index()
        if index is None:
            return UNTRACKED
        found = index.state(relative)
        return STAGED if found == TRACKED else found

    def holds_under_top(self, folder: str) -> bool:
        """Whether the copy holds ``folder`` (a path from the work tree's top): where Bun finds a
        package in the session."""
        return os.path.isdir(os.path.join(self.top, folder))

    def elsewhere(self, relative: str) -> bool:
        """Whether the working tree has the file at ``relative`` (one the commit lacks)."""
        return relative not in self.paths and self.working.is_file(relative)
