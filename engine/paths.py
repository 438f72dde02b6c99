"""The repository: the folder that holds ``beeuni.yaml``, against which every path is taken.

A manifest may name thousands of module files, most of them in a few folders. Each folder is
read once (``os.scandir``, whose entries know their type without a ``stat`` per file), and every
answer is remembered, so checking 2,000 modules costs a few directory reads, not 6,000 system
calls. Only symbolic links are followed one by one.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


def write_file_atomically(target: str, data: bytes, mode: int | None = None) -> None:
    """Write a file whole or not at all: a temporary file beside it, flushed to disk, then
    renamed over it. ``mode`` defaults to the existing file's permissions (0644 for a new one)."""
    import tempfile

    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".beeuni-", suffix=".tmp")
    try:
        if mode is None:
            mode = stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o644
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


MANIFEST_NAME = "beeuni.yaml"
#: what the rules ask a repository of one path: its methods of these names (``lang/builtins.py``)
QUESTIONS = ("inside", "exists", "is_file", "list_dir")


def manifest_path(path: str) -> str:
    """The manifest a path on the command line names: the file itself, or a folder's manifest."""
    return os.path.join(path, MANIFEST_NAME) if os.path.isdir(path) else path


#: what ``read_file`` gives for a path where nothing is (not even a broken link)
MISSING = ""
#: what ``read_file`` gives for a folder, a device, ... (no regular file)
NOT_REGULAR = "not a regular file"


def read_file(full: str, limit: int) -> bytes | str:
    """The bytes of the file at ``full`` (at most ``limit + 1``: more is refused anyway, and a
    huge file is never read whole), or, as a string, why not: ``MISSING``, ``NOT_REGULAR`` or
    the system's reason."""
    if not os.path.lexists(full):
        return MISSING
    try:
        if not stat.S_ISREG(os.stat(full).st_mode):
            return NOT_REGULAR
        with open(full, "rb") as handle:
            return handle.read(limit + 1)
    except OSError as err:
        return err.strerror or str(err)


_UNKNOWN = ""  # a path not resolved yet (a resolved one is a path or None, never empty)
#: whether paths are written with `/` alone (POSIX), so that a plain one is seen to be normal
_SLASHED = os.sep == "/" and os.altsep is None
#: what a path that may be normal already does not start with (absolute, `\\`, `.`, `..`, ...)
_NOT_FIRST = "/\\."


class LeavesRepository(ValueError):
    """A path that leads out of the repository, by ``..`` or through a symbolic link."""

    def __init__(self, relative: str) -> None:
        super().__init__(f"{relative} leads out of the repository")
        self.relative = relative


class Repository:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._inside_prefix = self.root + os.sep
        self._relative: dict[str, str | None] = {}
        #: a path inside the repository → what its folder holds under its name (None: nothing)
        self._entries: dict[str, os.DirEntry[str] | None] = {}
        #: a repo-relative folder → ``_folder``'s answer
        self._folders: dict[str, tuple[dict[str, os.DirEntry[str]], str, bool]] = {}

    def absolute(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def relative(self, path: str) -> str | None:
        """``path`` as a normalised repo-relative path, or ``None`` when it is absolute or leaves
        the repository — by ``..`` or through a symbolic link anywhere along it."""
        found = self._relative.get(path, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._relative[path] = self._resolve(path)
        return found

    def _resolve(self, path: str) -> str | None:
        plain = _SLASHED and path and path[0] not in _NOT_FIRST and path[-1] != "/"
        if plain and "//" not in path and "/." not in path:
            normal = path if path.__class__ is str else str(path)  # a plain `tools/x.ts`, as `normpath` gives it
        elif not path or os.path.isabs(path) or path.startswith("\\"):
            return None
        else:
            normal = os.path.normpath(path)
            if normal == ".." or normal.startswith(".." + os.sep):
                return None
        folder, _, name = normal.rpartition(os.sep)  # `os.path.split` of a normalised path
        place = self._folders.get(folder)
        if place is None:
            place = self._folders[folder] = self._folder(folder)
        entries, real_folder, inside = place
        entry = entries.get(name)
        link = entry is not None and entry.is_symlink()
        # Anything but a link in a folder inside the repository is inside: only a link, or what
        # a folder outside holds (the repository itself, reached through `..` of a link), needs
        # its own real path.
        if link or not inside:
            # `os.path.join`, written out: `real_folder` is a real path, `name` a plain name
            real = real_folder + name if real_folder.endswith(os.sep) else real_folder + os.sep + name
            if link:
                real = os.path.realpath(real)
            inside = real == self.root or real.startswith(self._inside_prefix)
        if not inside:
            return None
        self._entries[path] = entry
        return normal

    def _folder(self, folder: str) -> tuple[dict[str, os.DirEntry[str]], str, bool]:
        """What the repo-relative ``folder`` holds, by name (nothing, when it cannot be read),
        its real path, and whether it is the repository or inside it."""
        real = os.path.realpath(os.path.join(self.root, folder))
        try:
            with os.scandir(real) as found:
                entries = {entry.name: entry for entry in found}
        except OSError:
            entries = {}
        return entries, real, real == self.root or real.startswith(self._inside_prefix)

    def read(self, relative: str, limit: int) -> bytes | str:
        """``read_file`` of a repository file."""
        return read_file(self.absolute(relative), limit)

    def inside(self, path: str) -> bool:
        return self.relative(path) is not None

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is inside and a file (a link to a file counts)."""
        entry = self._inside_entry(path)
        try:
            return entry is not None and entry.is_file()
        except OSError:  # a link that leads to itself, or a folder that cannot be read
            return False

    def exists(self, path: str) -> bool:
        """Whether ``path`` is inside and there (a broken link counts: it is there, not a file)."""
        return self._inside_entry(path) is not None

    def _inside_entry(self, path: str) -> os.DirEntry[str] | None:
        entries = self._entries  # found when the path was resolved, if it is inside
        if path in entries:
            return entries[path]
        return None if self.relative(path) is None else entries[path]

    def real_target(self, relative: str) -> str | None:
        """The real absolute path a write to the repo-relative ``relative`` lands on (symbolic
        links followed), or ``None`` when that is outside the repository."""
        real = os.path.realpath(self.absolute(relative))
        return real if real.startswith(self.root + os.sep) else None

    def write_atomically(self, relative: str, data: bytes) -> None:
        """Write a repository file whole or not at all, keeping an existing file's permissions.
        A symbolic link is written at its target, which must be inside the repository: a write
        never goes through a link out of it (``LeavesRepository``)."""
        target = self.real_target(relative)
        if target is None:
            raise LeavesRepository(relative)
        write_file_atomically(target, data)

    def list_dir(self, path: str) -> list[str]:
        """The sorted names in a repository folder; none when it is missing or outside."""
        relative = self.relative(path)
        if relative is None:
            return []
        try:
            return sorted(os.listdir(self.absolute(relative)))
        except OSError:
            return []


def upward(folder: str) -> Iterator[str]:
    """``folder`` and each folder above it, up to the root."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def git_top(folder: str) -> tuple[str, str] | None:
    """The work tree holding ``folder`` and the git folder of its index, or None outside git."""
    ceilings = {os.path.realpath(path) for path in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":") if path}
    start = os.path.realpath(folder)
    for current in upward(start):
        if current in ceilings and current != start:  # (git looks in the folder it starts from)
            return None
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            return current, dot_git
        if os.path.isfile(dot_git):  # a linked work tree or a submodule: `gitdir: PATH`
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    first = handle.readline().strip()
            except (OSError, ValueError):
                return None
            if first.startswith("gitdir:"):
                return current, os.path.join(current, first[len("gitdir:") :].strip())
            return None
    return None
