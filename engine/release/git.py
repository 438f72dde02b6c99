"""The one way beeuni runs git: a repository is hostile input.

An agent that may write files of the working tree may write ``.git`` too: its ``config`` (and any
file an ``include`` names), hooks, ``refs/replace/``, ``info/grafts``, ``objects/info/alternates``,
objects and packs. Nothing written there may run a command or change which tree a commit names,
so every git command beeuni runs is started here, and only here:

- **No configuration but the repository's own, and that one overruled.** The environment is made
  from nothing (``PATH``, ``LC_ALL=C``, ``HOME`` and ``XDG_CONFIG_HOME`` at ``/dev/null``, no
  ``GIT_*`` variable of the caller's); ``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``.
  The repository's ``.git/config`` cannot be switched off, so each key that would run something
  in the commands beeuni runs is given again on the command line, which git reads last:
  ``core.fsmonitor`` (run at every index read), ``core.hooksPath``, ``core.commitGraph`` (a
  forged graph names other parents), and ``--no-pager``; ``safe.directory`` names the work tree
  asked about, so that a daemon run as another user than the repository's reads it (git's
  ownership check guards against the configuration running something, which nothing here does).
- **No transport.** A missing object in a repository that names a promisor remote is fetched
  lazily by a ``git fetch`` git starts itself — whose ``uploadpack``, ``sshCommand``, proxy or
  ``ext::`` URL the repository's configuration names. ``GIT_NO_LAZY_FETCH`` exists from git 2.45
  only and ``remote.*.promisor`` cannot be unset from the command line (any ``true`` wins), and a
  repository's ``protocol.<name>.allow`` outranks ``-c protocol.allow=never``. The environment's
  ``GIT_ALLOW_PROTOCOL`` outranks every configuration: it is set to a name no transport or
  remote helper has, so every fetch dies before it connects (``GIT_NO_LAZY_FETCH`` is set too).
- **No other objects.** ``GIT_NO_REPLACE_OBJECTS`` and ``--no-replace-objects`` (``refs/replace``),
  ``GIT_GRAFT_FILE=/dev/null`` (``info/grafts``, which git honours even without replace refs).
- **Objects are read in a git folder of beeuni's own** (``cat_file``): ``cat-file --batch`` runs
  with ``GIT_DIR`` at a fresh folder (a config that says only the object format) and
  ``GIT_OBJECT_DIRECTORY`` at the repository's objects, so no configuration of the repository is
  read at all, and the reader (``objects.py``) checks every object against its name: whatever
  an alternate, a forged loose object or pack holds, only the bytes the commit names are used.
- **No filter driver.** A command that reads work-tree files through git's conversion
  (``_READS_WORK_TREE``: ``status`` re-hashes a file whose stat data changed, ``diff`` against the
  work tree, ``update-index --add``) would run the ``clean`` or ``process`` command of any
  ``filter.<name>`` the repository configures for a path its ``.gitattributes`` (in the work tree,
  where agents write) marks. Such a command is given every driver the repository's configuration
  names, emptied (``filter.<name>.clean`` = "" …, as ``GIT_CONFIG_KEY_n`` variables), which git
  takes as no filter: files are read as their bytes. (git 2.40's ``--attr-source`` would keep
  the work tree's attributes out instead; the configuration is read just before, so a driver
  added in between is the one gap.) Diff drivers stay off by the callers' ``--no-ext-diff`` and
  ``--no-textconv``.
- **Bounded.** A command that has not answered within ``TIMEOUT`` seconds is ended (an
  ``include.path`` naming a FIFO stalls git for ever); no command reads beeuni's standard input.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from .git_folder import common_folder

#: seconds a git command may go without answering before it is ended
TIMEOUT = 60.0
#: a transport and remote helper name none has (``_`` is no URL scheme character)
_NO_PROTOCOL = "_"
_PINNED = {
    "HOME": "/dev/null",
    "XDG_CONFIG_HOME": "/dev/null",
    "LC_ALL": "C",
    "LANG": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": "/dev/null",
    "GIT_ALLOW_PROTOCOL": _NO_PROTOCOL,
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
}
_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.commitGraph=false",
    "core.attributesFile=/dev/null",
    "core.sshCommand=false",
    "gc.auto=0",
    "maintenance.auto=false",
)


#: the git commands that read work-tree files through git's conversion (its filter drivers)
_READS_WORK_TREE = frozenset({"status", "diff", "update-index", "add", "hash-object"})
_FILTER_KEYS = ("clean", "smudge", "process")


class GitStalled(OSError):
    """git did not answer within ``TIMEOUT`` seconds and was ended."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"git did not answer within {seconds:g} s")
        self.seconds = seconds


def environment(**more: str) -> dict[str, str]:
    """The whole environment of a git command: the caller's ``PATH`` (to find git) and the pins."""
    return {"PATH": os.environ.get("PATH", os.defpath), **_PINNED, **more}


def command(top: str, *args: str) -> list[str]:
    """The command line of ``git args`` in the work tree ``top``, its configuration overruled."""
    overrides = [part for setting in (*_OVERRIDES, f"safe.directory={top}") for part in ("-c", setting)]
    return ["git", "--no-pager", "--no-replace-objects", "-C", top, *overrides, *args]


def run(
    top: str,
    *args: str,
    data: bytes | None = None,
    timeout: float | None = None,
    index: str | None = None,
    settings: tuple[str, ...] = (),
    protocols: str = _NO_PROTOCOL,
    variables: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """One git command in the work tree ``top``; ``GitStalled`` when it does not end in time
    (``OSError`` when there is no git). ``index``: the index file it works on instead of the
    repository's (a change request's own); ``settings``: more ``-c`` settings, read after the
    pinned ones; ``protocols``: the transports it may use (``push`` alone names any);
    ``variables``: more of the environment, the caller's own (a commit's author)."""
    limit = TIMEOUT if timeout is None else timeout
    more = {**(variables or {}), "GIT_ALLOW_PROTOCOL": protocols}
    if index is not None:
        more["GIT_INDEX_FILE"] = index
    subcommand = next((arg for arg in args if not arg.startswith("-")), "")
    if subcommand in _READS_WORK_TREE:
        more.update(_no_filters(top, limit))
    extra = [part for setting in settings for part in ("-c", setting)]
    argv = command(top, *args)
    at = len(argv) - len(args)  # after the pinned settings: these outrank them
    try:
        return subprocess.run(
            [*argv[:at], *extra, *argv[at:]],
            input=data,
            stdin=None if data is not None else subprocess.DEVNULL,
            capture_output=True,
            env=environment(**more),
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        raise GitStalled(limit) from None


def _no_filters(top: str, limit: float) -> dict[str, str]:
    """Settings emptying every filter driver the repository's configuration names (its includes
    followed, as git would), so that a work-tree read runs none of them: given as git's
    ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` variables, which split no name at a ``=`` (a
    driver's name may hold one, and ``-c name=value`` would read it wrongly)."""
    try:
        done = subprocess.run(
            command(top, "config", "--null", "--get-regexp", r"^filter\."),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=environment(),
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        raise GitStalled(limit) from None
    names = set()
    for entry in done.stdout.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if key.count(".") >= 2:
            names.add(key[len("filter.") :].rsplit(".", 1)[0])
    keys = [f"filter.{name}.{key}" for name in sorted(names) for key in _FILTER_KEYS]
    settings = {"GIT_CONFIG_COUNT": str(len(keys))}
    for number, key in enumerate(keys):
        settings |= {f"GIT_CONFIG_KEY_{number}": key, f"GIT_CONFIG_VALUE_{number}": ""}
    return settings


#: the transports a push (``beeuni cr open``, the user's own command) may use: never ``ext::`` or
#: a remote helper a repository names; ssh as ``ssh`` (the repository's ``core.sshCommand`` is not)
PUSH_PROTOCOLS = "file:git:http:https:ssh"
PUSH_SETTINGS = ("core.sshCommand=ssh",)


def user_settings(names: tuple[str, ...]) -> tuple[str, ...]:
    """``-c`` settings carrying the values of ``names`` in the user's own global git configuration
    (their identity, their credential helpers), read with git's ``--global`` alone: what a push
    and a commit of the user's need that the pinned environment leaves out. A multi-valued name's
    list starts empty, so that the repository's own entries are not used."""
    home = os.path.expanduser("~")
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    found: list[str] = []
    for name in names:
        try:
            done = subprocess.run(
                ["git", "config", "--global", "--get-all", name],
                capture_output=True,
                stdin=subprocess.DEVNULL,
                env=env,
                timeout=TIMEOUT,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        values = done.stdout.decode("utf-8", "surrogateescape").splitlines() if done.returncode == 0 else []
        if name == "credential.helper":
            found.append(f"{name}=")  # the list starts empty: no helper the repository names
        found += [f"{name}={value}" for value in values]
    return tuple(found)


def objects_folder(git_dir: str) -> str:
    """The object store of the git folder ``git_dir``."""
    return os.path.join(common_folder(git_dir), "objects")


@contextmanager
def cat_file(git_dir: str, sha256: bool) -> Iterator[tuple[subprocess.Popen[bytes], Watchdog]]:
    """``git cat-file --batch`` over the object store of ``git_dir`` and nothing else of it: run
    in a git folder made here for it, so that the repository's configuration (its promisor
    remotes, its includes) is never read. The ``Watchdog`` ends it when it stalls."""
    own = tempfile.mkdtemp(prefix="beeuni-git-")
    try:
        os.mkdir(os.path.join(own, "refs"))
        with open(os.path.join(own, "HEAD"), "w", encoding="utf-8") as handle:
            handle.write("ref: refs/heads/none\n")
        with open(os.path.join(own, "config"), "w", encoding="utf-8") as handle:
            version = "1\n[extensions]\n\tobjectFormat = sha256" if sha256 else "0"
            handle.write(f"[core]\n\trepositoryformatversion = {version}\n")
        env = environment(GIT_DIR=own, GIT_OBJECT_DIRECTORY=objects_folder(git_dir))
        overrides = [part for setting in _OVERRIDES for part in ("-c", setting)]
        argv = ["git", "--no-pager", "--no-replace-objects", *overrides, "cat-file", "--batch"]
        with subprocess.Popen(
            argv, cwd=own, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as process:
            watchdog = Watchdog(process, TIMEOUT)
            try:
                yield process, watchdog
            finally:
                watchdog.stop()
                if process.poll() is None:
                    process.kill()
    finally:
        shutil.rmtree(own, ignore_errors=True)


class Watchdog:
    """Ends a streaming git command that has gone ``limit`` seconds without ``kick``."""

    def __init__(self, process: subprocess.Popen[bytes], limit: float) -> None:
        self.process = process
        self.limit = limit
        self.fired = False
        self._paused = False
        self._last = time.monotonic()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def kick(self) -> None:
        self._last = time.monotonic()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No end while beeuni itself works (hashing the files it would link), however long."""
        self._paused = True
        try:
            yield
        finally:
            self.kick()
            self._paused = False

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stopped.wait(min(1.0, self.limit)):
            if not self._paused and time.monotonic() - self._last > self.limit:
                self.fired = True
                self.process.kill()
                return
