"""A release, taken into a folder of its own: what a session serves.

A session serves its config release — the files git tracks at one commit — never the working
tree its agents and tool modules can write. ``take`` copies the release of the project at a
commit (``HEAD`` by default) into a fresh folder: the files under the project's folder (the one
that holds the manifest) and those of each ``node_modules`` folder above it up to the work tree's
top, where Bun looks for packages. The manifest, its imports, every module and every file a module
imports are then read from the copy only, and nothing written in the working tree afterwards
reaches it.

The files are read from git's objects — the commit, its trees and their blobs, each checked
against its name (``objects.py``), streamed from ``git cat-file --batch`` — and written here,
read-only. That is as fast as ``git archive | tar -x`` or ``checkout-index`` into a temporary
index, faster than pygit2 or dulwich (docs/platform.md, "What a session serves"), and unlike them it
applies no ``.gitattributes`` (``export-ignore`` would leave tracked files out, ``export-subst``
and the line-end conversions change their bytes) and runs no filter command a repository's
configuration names: what is copied is exactly what the commit holds, whatever else the
repository's folder holds (``git.py``: how git is run). Symbolic links are made as committed when
they stay inside the copy; one that leads out of it (an absolute target, or ``..`` past the top)
is left out, so that no import reaches the working tree through it. Submodules are not part of
the release.

Outside git there is no release: ``take_folder`` copies the project's folder as it is at the
start instead (bounded), leaving out the folders given (the state folder with the secrets).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import stat
import subprocess
import threading
from dataclasses import dataclass, field
from typing import IO, Any

from ..paths import git_top
from . import git
from .git_index import node_modules_above
from .objects import ObjectError, Reader, hasher, open_holding

#: bounds of a copy of a folder outside git: past them the daemon refuses to start
MAX_FOLDER_FILES = 50_000
MAX_FOLDER_BYTES = 1024 * 1024 * 1024
#: bytes read at a time from git's object stream
CHUNK = 1024 * 1024
_FILE_MODES = {b"100644": 0o444, b"100755": 0o555}
_LINK_MODE = b"120000"
#: the rules' text (``DAEMON_MESSAGES``) for each way an object cannot be read
_OBJECT_PROBLEMS = {"forged": "release_forged", "stalled": "release_stalled"}


class ReleaseError(Exception):
    """No release could be taken: ``key`` names the rules' text (``DAEMON_MESSAGES``), ``detail``
    fills its ``{detail}``."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"{key}: {detail}")
        self.key = key
        self.detail = detail


@dataclass(frozen=True)
class Snapshot:
    """A release in a folder: ``root`` stands for the project's folder (it holds the manifest),
    inside ``folder``, the copy's top; ``commit`` is None for a copy of a folder outside git;
    ``paths`` are the files the release holds, relative to the project's folder; ``objects``,
    each copied file's mode and git object by its path from the copy's top."""

    folder: str
    root: str
    commit: str | None
    paths: frozenset[str]
    objects: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def commit_of(top: str, rev: str | None) -> str | None:
    """The commit ``rev`` names (``HEAD`` when None) in the repository of the work tree ``top``;
    None when ``rev`` is None and the repository has no commit yet; ``ReleaseError`` when ``rev``
    names no commit or the repository cannot be read."""
    named = "HEAD" if rev is None else rev
    try:
        done = git.run(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{named}^{{commit}}")
        if done.returncode == 0:
            return done.stdout.decode().strip()
        if rev is not None:
            raise ReleaseError("release_unknown", named)
        refs = git.run(top, "for-each-ref", "--count=1")  # none at all: nothing was committed yet
    except git.GitStalled as err:
        raise ReleaseError("release_stalled", f"{err.seconds:g}") from None
    except OSError as err:
        raise ReleaseError("release_unreadable", str(err)) from None
    if refs.returncode == 0 and not refs.stdout.strip():
        return None
    problem = (done.stderr or refs.stderr).decode("utf-8", "replace").strip()
    raise ReleaseError("release_unreadable", problem or f"{named} names no commit")


def take(
    project: str,
    manifest: str,
    rev: str | None,
    into: str,
    extra: list[str] | None = None,
    beside: Snapshot | None = None,
) -> Snapshot:
    """The release of the project at ``project`` (its folder) at ``rev``, copied into the new
    folder ``into``, with the folders ``extra`` (absolute paths in the work tree: a rules folder
    outside the project's); ``ReleaseError`` when the project is in no git work tree (use
    ``take_folder``), ``rev`` names no commit, the repository cannot be read, or the release
    holds no ``manifest``. A file that ``beside`` (the release served until now) holds with the
    same mode, object and bytes is linked from it, not written again: a convergence writes only
    what changed."""
    found = git_top(project)
    if found is None:
        raise ReleaseError("release_no_git", project)
    top, git_dir = found
    prefix = os.path.relpath(os.path.realpath(project), top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    commit = commit_of(top, rev)
    if commit is None:
        raise ReleaseError("release_no_commit", top)
    others = [os.path.relpath(os.path.realpath(folder), top).replace(os.sep, "/") for folder in extra or []]
    try:
        with git.cat_file(git_dir, sha256=len(commit) == 64) as (process, watchdog):
            listed = _listing(Reader(process, watchdog), commit, prefix, others)
            if prefix + manifest not in {path for _, _, path in listed}:
                raise ReleaseError("release_no_manifest", f"{manifest} at {commit[:12]}")
            os.makedirs(into, mode=0o700)
            try:
                with watchdog.paused():
                    left = _linked(listed, beside, into)
                _write(process, watchdog, left, into)
            except BaseException:
                shutil.rmtree(into, ignore_errors=True)
                raise
    except ObjectError as err:
        raise ReleaseError(_OBJECT_PROBLEMS.get(err.problem, "release_object_missing"), err.name) from None
    paths = frozenset(path[len(prefix) :] for _, _, path in listed if path.startswith(prefix))
    root = os.path.join(into, prefix) if prefix else into
    os.makedirs(root, exist_ok=True)
    objects = {path: (mode, obj) for mode, obj, path in listed if mode != _LINK_MODE}
    return Snapshot(into, root.rstrip("/"), commit, paths, objects)


def _linked(
    entries: list[tuple[bytes, bytes, str]], beside: Snapshot | None, into: str
) -> list[tuple[bytes, bytes, str]]:
    """Link into ``into`` each file ``beside`` holds as it is in ``entries`` (both copies are
    read-only, so they may share it); the entries left to write. A file of ``beside`` that is no
    longer a regular file of its mode holding the entry's object — a module outside Landlock
    may have changed its mode, written it and set its mode back — or lies under a folder that
    became a link, is written from git's objects instead. A convergence of a release of 20,000
    files takes 0.91 s linked, 2.5 to 10.9 s copied whole (``bench_daemon.py``)."""
    if beside is None or not beside.objects:
        return entries
    top = os.path.realpath(beside.folder)
    left: list[tuple[bytes, bytes, str]] = []
    made: set[str] = set()
    plain_folders: dict[str, bool] = {}
    for mode, obj, path in entries:
        source = os.path.join(top, path)
        folder = os.path.dirname(source)
        if folder not in plain_folders:
            plain_folders[folder] = os.path.realpath(folder) == folder
        held = None
        if beside.objects.get(path) == (mode, obj) and plain_folders[folder]:
            held = open_holding(source, obj, _FILE_MODES[mode])
        if held is None:
            left.append((mode, obj, path))
            continue
        target = os.path.join(into, path)
        _make_folder(os.path.dirname(target), made)
        try:
            os.link(source, target, follow_symlinks=False)
            if not os.path.samestat(os.lstat(target), held[1]):  # replaced since it was hashed
                os.unlink(target)
                left.append((mode, obj, path))
        except OSError:  # another file system: written from git's objects instead
            left.append((mode, obj, path))
        finally:
            os.close(held[0])
    return left


def _make_folder(folder: str, made: set[str]) -> None:
    """Make ``folder`` (and those above it) once per copy."""
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)


def _listing(reader: Reader, commit: str, prefix: str, others: list[str]) -> list[tuple[bytes, bytes, str]]:
    """(mode, object, path from the top) of every file and link the release holds under the
    project's folder, in the ``node_modules`` folders above it and in the folders ``others``."""
    wanted = None
    if prefix:
        wanted = [prefix.rstrip("/"), *node_modules_above(prefix), *others]
        wanted = None if "." in wanted else wanted
    return [entry for entry in reader.files(commit, wanted) if _safe(entry[2])]


def _safe(path: str) -> bool:
    """Whether ``path`` stays below the copy's top (git refuses others; a crafted tree may not)."""
    parts = path.split("/")
    return all(part not in ("", ".", "..") and part.lower() != ".git" for part in parts)


def _write(
    reader: subprocess.Popen[bytes], watchdog: git.Watchdog, entries: list[tuple[bytes, bytes, str]], into: str
) -> None:
    """Stream each entry's bytes from ``git cat-file --batch`` into its file, checked against
    the entry's object name as they pass; links last, so that no file is written through one."""
    request = b"".join(obj + b"\n" for _, obj, _ in entries)
    assert reader.stdin is not None and reader.stdout is not None
    feeder = threading.Thread(target=_feed, args=(reader.stdin, request), daemon=True)
    feeder.start()
    links: list[tuple[str, bytes]] = []
    made: set[str] = set()
    try:
        for mode, obj, path in entries:
            header = reader.stdout.readline().split()
            watchdog.kick()
            if not header:
                raise ObjectError(path, "stalled" if watchdog.fired else "ended")
            if len(header) != 3 or header[0] != obj or header[1] != b"blob":
                raise ObjectError(path, "missing")
            size = int(header[2])
            target = os.path.join(into, path)
            _make_folder(os.path.dirname(target), made)
            found = hasher(b"blob", size, obj.decode())
            if mode == _LINK_MODE:
                destination = reader.stdout.read(size)
                found.update(destination)
                links.append((target, destination))
            else:
                _copy(reader.stdout, size, target, _FILE_MODES[mode], found, watchdog)
            if found.hexdigest().encode() != obj:
                raise ObjectError(path, "forged")
            reader.stdout.read(1)  # the newline after the object
    finally:
        feeder.join()
    for target, destination in links:
        _link(into, target, destination.decode("utf-8", "surrogateescape"))


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write the object names to cat-file (from a thread, while its answers are read)."""
    with contextlib.suppress(OSError), stream:
        stream.write(data)


def _copy(stream: IO[bytes], size: int, target: str, mode: int, found: Any, watchdog: git.Watchdog) -> None:
    """Write ``size`` bytes of ``stream`` to the new file ``target``, fed to the hash ``found``."""
    handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        remaining = size
        while remaining:
            chunk = stream.read(min(CHUNK, remaining))
            if not chunk:
                raise ObjectError(os.path.basename(target), "stalled" if watchdog.fired else "ended")
            found.update(chunk)
            os.write(handle, chunk)
            watchdog.kick()
            remaining -= len(chunk)
        os.fchmod(handle, mode)
    finally:
        os.close(handle)


def _link(top: str, target: str, destination: str) -> None:
    """Make the link ``target`` → ``destination`` when it leads to a place inside ``top``."""
    if destination.startswith("/"):
        return
    relative = posixpath.relpath(os.path.dirname(target), top).replace(os.sep, "/")
    landing = posixpath.normpath(posixpath.join(relative, destination))
    if landing == ".." or landing.startswith("../"):
        return
    with contextlib.suppress(OSError):  # something stands there already (a crafted tree): left out
        os.symlink(destination, target)


def take_folder(project: str, into: str, leave_out: list[str]) -> Snapshot:
    """A copy of the folder ``project`` as it is now (outside git there is no release), without
    the folders of ``leave_out``; ``ReleaseError`` past ``MAX_FOLDER_FILES`` files or
    ``MAX_FOLDER_BYTES`` bytes."""
    source = os.path.realpath(project)
    left_out = {os.path.realpath(path) for path in leave_out}
    os.makedirs(into, mode=0o700)
    files, size, paths = 0, 0, set()
    try:
        for folder, folders, names in os.walk(source):
            folders[:] = [f for f in folders if os.path.join(folder, f) not in left_out]
            relative = os.path.relpath(folder, source)
            made = os.path.join(into, relative) if relative != "." else into
            os.makedirs(made, exist_ok=True)
            for name in [*names, *(f for f in folders if os.path.islink(os.path.join(folder, f)))]:
                path = os.path.join(folder, name)
                info = os.lstat(path)
                target = os.path.join(made, name)
                shown = name if relative == "." else f"{relative}/{name}".replace(os.sep, "/")
                if stat.S_ISLNK(info.st_mode):
                    _link(into, target, os.readlink(path))
                elif stat.S_ISREG(info.st_mode):
                    files, size = files + 1, size + info.st_size
                    if files > MAX_FOLDER_FILES or size > MAX_FOLDER_BYTES:
                        raise ReleaseError(
                            "folder_too_large", f"{MAX_FOLDER_FILES} files, {MAX_FOLDER_BYTES >> 20} MiB"
                        )
                    shutil.copyfile(path, target, follow_symlinks=False)
                    os.chmod(target, 0o555 if info.st_mode & 0o100 else 0o444)
                    paths.add(shown)
            folders[:] = [f for f in folders if not os.path.islink(os.path.join(folder, f))]
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return Snapshot(into, into, None, frozenset(paths))
