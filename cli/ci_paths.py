"""How the CI formats (github, sarif, gitlab) name a file: by its path from the root of the git
repository that holds it — where GitHub places an annotation, and what code scanning and GitLab
resolve a path against — else from the current folder. The same for one manifest as for several,
so a monorepo's projects are annotated where they are."""

from __future__ import annotations

import os

from ..engine.paths import upward


def git_root(folder: str) -> str | None:
    """The root of the git repository that holds ``folder``: the nearest folder, from it upward,
    with a ``.git`` (a folder; or a file, as in a linked worktree or a submodule)."""
    return next(
        (above for above in upward(os.path.abspath(folder)) if os.path.exists(os.path.join(above, ".git"))), None
    )


def base_folder(project_root: str) -> str:
    """The folder the CI formats name the files of a project by: its git root, else the current
    folder."""
    return git_root(project_root) or os.getcwd()
