"""The release view: which files a config release holds — those git tracks, staged ones included.

A session gets only the files of the git index, so ``validate`` asks the index, not the working
tree. The index is read directly (its format is documented in git's
``Documentation/gitformat-index.txt``), not with ``git ls-files``, which would cost a process: its
paths are parsed once, when a run first asks about the release. In a repository of SHA-256
objects (``extensions.objectFormat``) each entry's header holds a 32-byte object name instead of
20, so it is 12 bytes longer, and so is the index's checksum.

Why an untracked file is not tracked — ignored, or merely not added — is asked of ``git
check-ignore`` (the one authority on ``.gitignore``, ``info/exclude`` and ``core.excludesFile``),
only for such a file. Discovery honours ``GIT_CEILING_DIRECTORIES`` as git does.
"""

from __future__ import annotations

import os

TRACKED, UNTRACKED, IGNORED = "tracked", "untracked", "ignored"
_EXTENDED = 0x4000
_INTENT_TO_ADD = 0x2000  # of the extended flags: `git add -N`, not in a commit
#: the bytes of an entry's header before its object name (times, device, inode, mode, ids, size)
_BEFORE_NAME = 40


class Release:
    """The release of the repository at ``root`` (the folder that holds the manifest), as the
    index of the git work tree around it says; paths are repo-relative, as everywhere."""

    def __init__(self, top: str, git_dir: str, root: str) -> None:
        self.top = top
        prefix = os.path.relpath(os.path.realpath(root), top)
        self.prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
        try:
            with open(os.path.join(git_dir, "index"), "rb") as handle:
                data = handle.read()
        except OSError:
            data = b""  # a repository with nothing added yet
        #: the tracked paths, from the work tree's top
        self.paths = frozenset(_parse(data, _hash_size(git_dir)))
        self._ignored: frozenset[str] | None = None  # (given, not asked of git: ``given``)
        #: every question answered: path → state
        self.answers: dict[str, str] = {}

    @classmethod
    def of(cls, root: str) -> Release | None:
        from ..paths import git_top

        found = git_top(root)
        return None if found is None else cls(found[0], found[1], root)

    @classmethod
    def given(cls, root: str, tracked: list[str], ignored: list[str], prefix: str = "") -> Release:
        """A release said in advance, not read from git (a rules test case's, a change request's
        commit): ``tracked`` files, and of the others, those ``ignored``; the work tree's top is
        ``root``, the project's folder ``prefix`` below it (``/`` at its end, or empty)."""
        release = cls.__new__(cls)
        release.top, release.prefix = os.path.realpath(root), prefix
        release.paths = frozenset(path.encode("utf-8", "surrogateescape") for path in tracked)
        release._ignored = frozenset(ignored)
        release.answers = {}
        return release

    def state(self, relative: str) -> str:
        """``tracked``, ``ignored`` or ``untracked``: the file at a repo-relative path."""
        found = self.answers.get(relative)
        if found is None:
            found = self.answers[relative] = TRACKED if self.tracks(relative) else self._why_not(relative)
        return found

    def tracks(self, relative: str) -> bool:
        return (self.prefix + relative).encode("utf-8", "surrogateescape") in self.paths

    def holds_under_top(self, folder: str) -> bool:
        """Whether the index tracks a file inside ``folder``, a path from the work tree's top."""
        prefix = (folder.rstrip("/") + "/").encode("utf-8", "surrogateescape")
        return any(path.startswith(prefix) for path in self.paths)

    def tracked_paths(self) -> list[str]:
        """Every path the index tracks, from the work tree's top (for ``validate --modules``,
        which copies the release; the checks ask ``tracks``)."""
        return sorted(path.decode("utf-8", "surrogateescape") for path in self.paths)

    def _why_not(self, relative: str) -> str:
        if self._ignored is not None:
            return IGNORED if relative in self._ignored else UNTRACKED
        import subprocess

        try:
            done = subprocess.run(
                ["git", "-C", self.top, "check-ignore", "-q", "--", self.prefix + relative],
                capture_output=True,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            return UNTRACKED  # no git to ask: not tracked, the reason unknown
        return IGNORED if done.returncode == 0 else UNTRACKED


def node_modules_above(prefix: str) -> list[str]:
    """The ``node_modules`` folder of each folder above the project's, ``prefix`` (a path from
    the work tree's top, ``/`` at its end), the top's included: where Bun looks for packages."""
    parts = prefix.strip("/").split("/") if prefix else []
    return ["/".join([*parts[:depth], "node_modules"]) for depth in range(len(parts))]


def _hash_size(git_dir: str) -> int:
    """The bytes of an object name in the repository of ``git_dir``: 32 where its configuration
    (a linked work tree's is the common folder's) says ``objectFormat = sha256``, else 20."""
    folders = [git_dir]
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            folders.append(os.path.join(git_dir, handle.read().strip()))
    except (OSError, ValueError):
        pass
    for folder in folders:
        try:
            with open(os.path.join(folder, "config"), encoding="utf-8", errors="replace") as handle:
                config = handle.read().lower()
        except OSError:
            continue
        for line in config.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "objectformat" and value.strip() == "sha256":
                return 32
    return 20


def _parse(data: bytes, hash_size: int) -> list[bytes]:
    """The paths of an index (none of another file), intent-to-add left out. In versions 2 and 3
    an entry's path is NUL-terminated and padded to 8 bytes; in version 4 it is the previous
    entry's path, less the number of bytes a varint says, plus a NUL-terminated rest, unpadded."""
    if data[:4] != b"DIRC":
        return []
    compressed = int.from_bytes(data[4:8], "big") == 4
    count = int.from_bytes(data[8:12], "big")
    paths: list[bytes] = []
    previous = b""
    offset = 12
    flags_at = _BEFORE_NAME + hash_size
    for _ in range(count):
        flags = int.from_bytes(data[offset + flags_at : offset + flags_at + 2], "big")
        extended = bool(flags & _EXTENDED)
        at = offset + flags_at + (4 if extended else 2)
        intent = extended and int.from_bytes(data[at - 2 : at], "big") & _INTENT_TO_ADD
        if compressed:
            strip = data[at] & 0x7F
            while data[at] & 0x80:  # git's offset varint: each continuation adds one
                at += 1
                strip = ((strip + 1) << 7) | (data[at] & 0x7F)
            at += 1
        end = data.index(b"\0", at)
        path = previous[: len(previous) - strip] + data[at:end] if compressed else data[at:end]
        if not intent:
            paths.append(path)
        previous = path
        offset = end + 1 if compressed else offset + ((end - offset + 8) & ~7)
    return paths
