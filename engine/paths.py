"""The repository: the folder that holds ``beeuni.yaml``, against which every path is taken."""

from __future__ import annotations

import os
import stat


class Repository:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def absolute(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def relative(self, path: str) -> str | None:
        """``path`` as a normalised repo-relative path, or ``None`` when it is absolute or leaves
        the repository — by ``..`` or through a symbolic link anywhere along it."""
        if not path or os.path.isabs(path) or path.startswith("\\"):
            return None
        normal = os.path.normpath(path)
        if normal == ".." or normal.startswith(".." + os.sep):
            return None
        real = os.path.realpath(os.path.join(self.root, normal))
        if real != self.root and not real.startswith(self.root + os.sep):
            return None
        return normal

    def inside(self, path: str) -> bool:
        return self.relative(path) is not None

    def is_file(self, path: str) -> bool:
        relative = self.relative(path)
        return relative is not None and os.path.isfile(self.absolute(relative))

    def exists(self, path: str) -> bool:
        relative = self.relative(path)
        return relative is not None and os.path.lexists(self.absolute(relative))

    def is_regular(self, relative: str) -> bool:
        try:
            return stat.S_ISREG(os.stat(self.absolute(relative)).st_mode)
        except OSError:
            return False

    def list_dir(self, path: str) -> list[str]:
        """The sorted names in a repository folder; none when it is missing or outside."""
        relative = self.relative(path)
        if relative is None:
            return []
        try:
            return sorted(os.listdir(self.absolute(relative)))
        except OSError:
            return []
