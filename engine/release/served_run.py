"""A release's run of the rules, as a session makes it: over the copy of a commit
(``snapshot.py``), in the commit's view (``commit_view.py``), with a ``--rules`` folder that lies
in the repository read from the copy too. The daemon and ``beeuni tools ls --release`` make it
the same way, so they see the same tools.

Every refusal names the user's own paths: a rules folder the commit lacks is said by its path in
the work tree and why (untracked, ignored, staged), and the rules read from the copy are named
by the folder the user gave.
"""

from __future__ import annotations

import os

from ..paths import Repository
from ..project import ProjectRun, load_rules
from .commit_view import STAGED, CommitView
from .git_index import TRACKED, Release
from .snapshot import ReleaseError, Snapshot

#: the rules' text (``DAEMON_MESSAGES``) for a rules folder the release lacks, by why
NO_RULES = "release_no_rules_{state}"


def rules_inside(rules: str | None, top: str) -> str | None:
    """The ``--rules`` folder (its real path) when it lies inside the work tree ``top``: it is
    read from the release, as the manifest is."""
    if rules is None:
        return None
    folder = os.path.realpath(rules)
    return folder if folder == top or folder.startswith(top.rstrip("/") + "/") else None


def rules_of(rules: str | None, top: str, snapshot: Snapshot | None) -> str | None:
    """The rules folder to read: inside the repository, its copy in the release; else as given.
    ``ReleaseError`` when the release lacks it, naming the folder as the work tree has it."""
    inside = rules_inside(rules, top)
    if inside is None or snapshot is None:
        return rules
    relative = os.path.relpath(inside, top).replace(os.sep, "/")
    copied = os.path.join(snapshot.folder, relative)
    if snapshot.commit is not None and not os.path.isdir(copied):
        raise ReleaseError(NO_RULES.format(state=_folder_state(top, relative)), relative)
    return copied


def _folder_state(top: str, relative: str) -> str:
    """Why a commit lacks the folder ``relative`` (from the work tree's top): staged (the index
    holds a file in it), ignored or untracked."""
    index = Release.of(top)
    if index is None:
        return "untracked"
    if index.holds_under_top(relative):
        return STAGED
    found = index.state(relative)
    return STAGED if found == TRACKED else found


def release_run(working: str, manifest: str, rules: str | None, top: str, snapshot: Snapshot | None) -> ProjectRun:
    """The rules over the release ``snapshot`` (None: the working tree ``working`` as it is), in
    the view of its commit when it has one."""
    root = snapshot.root if snapshot is not None else working
    shown = None
    folder = rules_of(rules, top, snapshot)
    if folder is not None and folder != rules:
        shown = rules
    run = ProjectRun(Repository(root), manifest, load_rules(folder, shown))
    if snapshot is not None and snapshot.commit is not None:
        run.set_release(CommitView(snapshot.folder, snapshot.root, snapshot.paths, working))
    return run
