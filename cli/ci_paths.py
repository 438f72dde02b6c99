"""How the CI formats (github, sarif, gitlab) name a file: by its path from the root of the git
repository that holds it — where GitHub places an annotation, and what code scanning and GitLab
resolve a path against — else from the current folder. The same for one manifest as for several,
so a monorepo's projects are annotated where they are."""

from __future__ import annotations

import os

from ..engine.paths import upward


def base_folder(project_root: str) -> str:
    """The folder the CI formats name the files of a project by: the nearest folder, from the
    project upward, with a ``.git`` (a folder; or a file, as in a linked worktree or a
    submodule), else the current folder."""
    above = upward(os.path.abspath(project_root))
    return next((folder for folder in above if os.path.exists(os.path.join(folder, ".git"))), os.getcwd())
