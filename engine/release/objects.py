"""A commit's files, read from git's objects and each checked against its name.

An object's name is the hash of its bytes (``<type> <size>\\0`` before them), so whoever reads the
bytes can check them: ``Reader`` hashes every commit, tree and blob it is handed and refuses one
whose bytes are not its name's. What git's object store holds besides — a replace ref, an
alternate, a loose object or a pack written by hand, a commit-graph — can then make a release
unreadable, never another one. The commit's tree is walked here, from the raw tree objects
(``<mode> <name>\\0<raw object name>`` each), rather than listed by ``git ls-tree``, which trusts
the store; it is as fast (a release of 20,000 files in some 2,000 trees).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from typing import IO, Any

from .git import Watchdog

_REGULAR, _EXECUTABLE, _LINK = b"100644", b"100755", b"120000"
#: bytes read at a time from a file to hash
_CHUNK = 1024 * 1024


class ObjectError(Exception):
    """An object is missing, of another type, or its bytes are not its name's (``forged``); or
    git stopped answering (``stalled``)."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


def hasher(kind: bytes, size: int, name: str) -> Any:
    """The hash of an object of ``kind`` and ``size`` bytes, its header fed (the algorithm the
    length of ``name`` says: 40 hex digits SHA-1, 64 SHA-256)."""
    found = hashlib.sha256() if len(name) == 64 else hashlib.sha1(usedforsecurity=False)
    found.update(kind + b" %d\0" % size)
    return found


def open_holding(path: str, name: bytes, permissions: int) -> tuple[int, os.stat_result] | None:
    """An open descriptor of ``path`` (not followed), and its status, when it is a regular file of
    ``permissions`` holding the blob ``name`` — read and hashed, as its mode proves nothing of
    its bytes — else None. The caller checks that what it linked is the file hashed (nothing
    took its name meanwhile) and closes it."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == permissions:
            found = hasher(b"blob", info.st_size, name.decode())
            left = info.st_size
            while left > 0:
                chunk = os.read(handle, min(left, _CHUNK))
                if not chunk:
                    break
                found.update(chunk)
                left -= len(chunk)
            if left == 0 and found.hexdigest().encode() == name:
                return handle, info
    except OSError:
        pass
    os.close(handle)
    return None


class Reader:
    """Objects asked one at a time of a running ``git cat-file --batch`` (``git.cat_file``)."""

    def __init__(self, process: subprocess.Popen[bytes], watchdog: Watchdog) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._in: IO[bytes] = process.stdin
        self._out: IO[bytes] = process.stdout
        self._watchdog = watchdog

    def read(self, name: str, kind: bytes) -> bytes:
        """The bytes of the object ``name``, which must be a ``kind``; ``ObjectError`` otherwise."""
        try:
            self._in.write(name.encode() + b"\n")
            self._in.flush()
        except OSError:
            raise self._ended(name) from None
        header = self._out.readline().split()
        self._watchdog.kick()
        if not header:
            raise self._ended(name)
        if len(header) != 3 or header[0].decode(errors="replace") != name:
            raise ObjectError(name, "missing")
        size = int(header[2])
        data = self._out.read(size + 1)[:size]
        if len(data) != size:
            raise self._ended(name)
        if header[1] != kind:
            raise ObjectError(name, "type")
        found = hasher(kind, size, name)
        found.update(data)
        if found.hexdigest() != name:
            raise ObjectError(name, "forged")
        return data

    def _ended(self, name: str) -> ObjectError:
        return ObjectError(name, "stalled" if self._watchdog.fired else "ended")

    def tree_of(self, commit: str) -> str:
        """The tree the commit ``commit`` names (its first header line)."""
        first = self.read(commit, b"commit").split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise ObjectError(commit, "type")
        return first[5:].decode()

    def files(self, commit: str, wanted: list[str] | None) -> list[tuple[bytes, bytes, str]]:
        """(mode, object, path from the top) of every file and link the commit holds — only those
        inside the paths ``wanted`` (None: all) — in git's order, the modes as ``ls-tree`` shows
        them (``100644``, ``100755``, ``120000``); submodules left out."""
        raw = 32 if len(commit) == 64 else 20
        found: list[tuple[bytes, bytes, str]] = []
        stack: list[tuple[str, str]] = [(self.tree_of(commit), "")]
        while stack:
            tree, folder = stack.pop()
            below: list[tuple[str, str]] = []
            try:
                entries = _entries(self.read(tree, b"tree"), raw)
            except ValueError:  # a tree git's own checks would refuse
                raise ObjectError(tree, "type") from None
            for mode, name, obj in entries:
                path = folder + name.decode("utf-8", "surrogateescape")
                whole, partly = _inside(path, wanted)
                kind = stat.S_IFMT(mode)
                if kind == stat.S_IFDIR and (whole or partly):
                    below.append((obj.hex(), path + "/"))
                elif whole and kind == stat.S_IFREG:
                    found.append((_EXECUTABLE if mode & 0o100 else _REGULAR, obj.hex().encode(), path))
                elif whole and kind == stat.S_IFLNK:
                    found.append((_LINK, obj.hex().encode(), path))
            stack.extend(reversed(below))
        return found


def _entries(data: bytes, raw: int) -> list[tuple[int, bytes, bytes]]:
    """(mode, name, raw object name) of each entry of a tree object."""
    entries = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        end = data.index(b"\0", space)
        mode = int(data[at:space], 8)
        entries.append((mode, data[space + 1 : end], data[end + 1 : end + 1 + raw]))
        at = end + 1 + raw
    return entries


def _inside(path: str, wanted: list[str] | None) -> tuple[bool, bool]:
    """Whether ``path`` lies inside one of ``wanted`` (is one, or below one), and whether one of
    them lies below it."""
    if wanted is None:
        return True, False
    whole = any(path == w or path.startswith(w + "/") for w in wanted)
    return whole, not whole and any(w.startswith(path + "/") for w in wanted)
