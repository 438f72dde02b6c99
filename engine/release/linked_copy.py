"""A copy of the release, for ``validate --modules``: Bun loads each module where only the files
git tracks are, so a module that resolves an untracked helper or a package from an ignored
node_modules fails there as it fails in every session — never called fine.

The copy holds the tracked files of the repository (the folder that holds the manifest) and those
of each ``node_modules`` folder above it, up to the git work tree's top (where Bun looks for a
package), as hard links where the file system allows, else copies; a tracked symbolic link is
made again as it is. It lives in a temporary folder, removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from .git_index import Release, node_modules_above


@contextmanager
def release_copy(root: str) -> Iterator[str | None]:
    """The folder in a copy of the release that stands for ``root``; None outside git."""
    release = Release.of(root)
    if release is None:
        yield None
        return
    base = tempfile.mkdtemp(prefix="beeuni-release-")
    try:
        above = [folder + "/" for folder in node_modules_above(release.prefix)]
        for path in release.tracked_paths():
            if path.startswith(release.prefix) or any(path.startswith(folder) for folder in above):
                _place(os.path.join(release.top, path), os.path.join(base, path))
        copied_root = os.path.realpath(os.path.join(base, release.prefix))
        os.makedirs(copied_root, exist_ok=True)
        yield copied_root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _place(source: str, target: str) -> None:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        elif os.path.isfile(source):
            try:
                os.link(source, target)
            except OSError:  # another file system, or no links there
                shutil.copy2(source, target)
    except OSError:
        pass  # tracked but gone from the working tree, or unreadable: not in the copy
