"""How a module's process starts: Bun running ``host.ts`` (a call's host; a load report's is
``probe_host.ts``, beside it), its channel on fd 3 (a socket pair),
a scrubbed environment, a private temporary folder as its home, a private working folder, a
PID namespace of its own whose init it is (``pid_namespace.py``; where the kernel offers none, a
process group of its own only), no capabilities (``capabilities.py``), a syscall filter
(``syscall_filter.py``), and — where the kernel has Landlock — a ruleset of its own
(``confine.py``).

Bun starts in the host's private working folder (never the repository) with ``--no-env-file`` and
an empty ``--config``: it reads no ``bunfig.toml`` (whose ``preload`` would run in every later
call) and loads no ``.env`` of the repository. The calls still get the repository as
``context.cwd`` (``host.ts`` moves there for each call; Bun reads its configuration at its start
only).

What a confined process may open:

* read and execute: the system's programs, libraries and certificates (``SYSTEM_READ``), Bun's own
  files, the hosts' scripts, the release the session serves (its modules and the ``node_modules`` they
  import, in the daemon's private folder), or — serving the working tree — the folders of the
  modules and every ``node_modules`` beside or above them; its own ``/proc/self``;
* read and write: the repository (tools keep their files below it) — but only read what is
  ``protected`` (git's folder, whose hooks and configuration git runs later; what the harness
  loads from the repository; a rules folder in it) — its temporary folder and ``/dev/null``;
* list (names only, never contents): every folder — Bun's resolver lists each folder from a
  module's up to ``/`` in search of ``node_modules``, and a Landlock rule on ``/`` is the only
  rule that covers every such folder;
* nothing else: not the ``hidden`` state folder with the secrets (even inside the repository), not
  the user's home, not another process's ``/proc`` entry, not another call's temporary folder.

Landlock only allows: a hidden or protected path inside the repository is kept out by allowing
what lies beside it (``confine.allowed_around``), so a module cannot create entries in a folder
that holds one (the repository's top, where ``.git`` lies). The rules are made when a process starts, from
the folders as they are then: a process is not reused once a folder on the way to a protected path
changed (``Confinement.stamp``), so a folder made meanwhile is writable from the next process on.

A process is started by ``subprocess`` (a fork, then the steps above in the child before the
exec) — or, from a process that runs one thread only (the daemon's load process,
``host/probe_process.py``; ``beeuni validate --modules``), by one clone of that process
(``_cloned``): the same steps, half the copies of the address space (2 ms of CPU less a module
process, some 15 % of ``validate --modules`` of 50 modules: 780 ms without, 660 ms with).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from fcntl import F_GETFD, FD_CLOEXEC, fcntl
from typing import Protocol

from ...engine.paths import upward
from . import capabilities, confine, pid_namespace, syscall_filter

HOST_FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "host")
HOST_SCRIPT = os.path.join(HOST_FOLDER, "host.ts")  # a call's host
PROBE_SCRIPT = os.path.join(HOST_FOLDER, "probe_host.ts")  # a load report's host
CHANNEL_FD = 3
SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_READ = (
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/opt",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts", "/etc/host.conf",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/localtime", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/dev/urandom", "/dev/random", "/dev/zero",
)  # fmt: skip
DEVICES_WRITE = ("/dev/null",)
LISTED = ("/",)  # directory listings only (see above)
BUNFIG = "bunfig.toml"  # the empty configuration Bun is given


@dataclass(frozen=True)
class Confinement:
    """What every module process of a session may open; ``abi`` 0 means Landlock is missing
    (``landlock_missing`` says why) and processes run with the scrubbed environment only."""

    abi: int
    read: tuple[str, ...]
    workspace: str  # read and written, but for `hidden` (neither) and `protected` (read only)
    hidden: tuple[str, ...]
    protected: tuple[str, ...]
    cwd: str  # the host's working folder

    def write(self) -> list[str]:
        """The paths a process may write, as the folders are now."""
        return confine.allowed_around(self.workspace, self.hidden + self.protected)

    def readable(self) -> list[str]:
        """The paths of the workspace a process may read, as the folders are now."""
        return confine.allowed_around(self.workspace, self.hidden)

    def stamp(self) -> tuple[int, ...]:
        """What ``write`` depends on: the change times of the folders it lists."""
        folders = {self.workspace}
        for path in self.hidden + self.protected:
            while path.startswith(self.workspace + "/"):
                path = os.path.dirname(path)
                folders.add(path)
        found = []
        for folder in sorted(folders):
            try:
                found.append(os.lstat(folder).st_mtime_ns)
            except OSError:
                found.append(-1)
        return tuple(found)


def landlock_missing() -> tuple[int, str]:
    """The Landlock ABI and, when it is 0, why."""
    if os.environ.get("BEEUNI_LANDLOCK") == "off":
        return 0, "BEEUNI_LANDLOCK=off"
    version = confine.abi()
    return version, "" if version else "the kernel has no Landlock"


def confinement_for(
    bun: str,
    workspace: str,
    modules: Iterable[str],
    hidden: Iterable[str],
    work: str,
    release: str | None = None,
    protected: Iterable[str] = (),
) -> Confinement:
    """The session's confinement: ``modules`` are the absolute module paths it may load, all
    inside the folder ``release`` when it serves one; ``hidden`` the paths a module must never
    open even inside the ``workspace``, ``protected`` those it may only read; ``work`` the host's
    working folder (an empty ``bunfig.toml`` is made there, for Bun's ``--config``)."""
    read = set(SYSTEM_READ)
    read.add(os.path.dirname(os.path.realpath(bun)))
    read.add(os.path.realpath(HOST_FOLDER))
    read.add(os.path.realpath(work))
    if release is not None:
        read.add(os.path.realpath(release))
    for module in modules:
        folder = os.path.dirname(os.path.realpath(module))
        read.add(folder)
        if release is None:
            read.update(_node_modules_above(folder))
    root = os.path.realpath(workspace)
    if release is None:
        read.update(_node_modules_above(root))
    with open(os.path.join(work, BUNFIG), "w"):
        pass
    return Confinement(landlock_missing()[0], tuple(sorted(read)), root, _real(hidden), _real(protected), work)


def _real(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(os.path.realpath(path) for path in paths))


def _node_modules_above(folder: str) -> list[str]:
    found = (os.path.join(above, "node_modules") for above in upward(folder))
    return [candidate for candidate in found if os.path.isdir(candidate)]


def environment(folder: str) -> dict[str, str]:
    """All a module's process gets of an environment: a search path, its temporary folder as home
    and temp, a UTF-8 locale. (``context.env`` carries the agent's secrets; never ``process.env``.)"""
    return {
        "PATH": SEARCH_PATH,
        "HOME": folder,
        "TMPDIR": folder,
        "LANG": "C.UTF-8",
        "BUN_RUNTIME_TRANSPILER_CACHE_PATH": "0",  # no cache to write: each process starts fresh
    }


class Process(Protocol):
    """What the daemon uses of a started process: ``subprocess.Popen``, or ``pid_namespace.Host``."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


@dataclass
class Started:
    process: Process
    channel: socket.socket  # the daemon's end of the socket pair
    folder: str
    stamp: tuple[int, ...]  # the confinement's stamp when its rules were made
    contained: bool  # in a PID namespace of its own (else only in a process group of its own)


def start(
    bun: str, confinement: Confinement, folder: str, log: int, script: str = HOST_SCRIPT, background: bool = False
) -> Started:
    """Start a module process running ``script`` (a call's host, or ``PROBE_SCRIPT``) with
    ``folder`` as its private temporary folder; its fd 1 and 2 go to ``log`` (a pipe's write end,
    or ``subprocess.DEVNULL``). ``background``: the process yields to its parent's session
    (``BACKGROUND_NICE``), for the daemon's load process."""
    stamp = confinement.stamp()
    ruleset = _ruleset(confinement, folder) if confinement.abi else None
    namespace = pid_namespace.planned()
    drop = capabilities.planned(namespace is not None and namespace.own_user_namespace)
    syscalls = syscall_filter.planned()
    ours, theirs = socket.socketpair()
    command = [bun, "--no-install", "--no-env-file", f"--config={os.path.join(confinement.cwd, BUNFIG)}", script]
    if namespace is not None and _one_thread():
        try:
            host = _cloned(
                namespace,
                command,
                confinement.cwd,
                environment(folder),
                log,
                theirs,
                drop,
                syscalls,
                ruleset,
                background,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            if ruleset is not None:
                ruleset.close()
        return Started(host, ours, folder, stamp, contained=True)
    report, reported = os.pipe() if namespace is not None else (-1, -1)

    def before_exec() -> None:  # in the child, between fork and exec
        if namespace is not None:
            namespace.enter(reported, not background)  # from here on the host, init of a PID namespace of its own
        if background:
            _yield()
        _confine_self(drop, syscalls, ruleset)
        if theirs.fileno() == CHANNEL_FD:
            os.set_inheritable(CHANNEL_FD, True)
        else:
            os.dup2(theirs.fileno(), CHANNEL_FD)
        _close_inherited()

    try:
        forked = subprocess.Popen(
            command,  # packages come from node_modules, never the network; no configuration of the repository
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=confinement.cwd,
            env=environment(folder),
            close_fds=False,  # fd 3 must survive; _close_inherited closes the rest
            start_new_session=not background,  # its own process group: killed as one
            process_group=0 if background else None,
            preexec_fn=before_exec,
        )
    except BaseException:
        ours.close()
        if namespace is not None:
            os.close(reported)
            namespace.reap(report)  # a host that failed before its exec
            os.close(report)
        raise
    finally:
        theirs.close()
        if ruleset is not None:
            ruleset.close()
    if namespace is None:
        return Started(forked, ours, folder, stamp, contained=False)
    os.close(reported)
    try:
        host = namespace.adopt(forked, report)
    except BaseException:
        ours.close()
        raise
    finally:
        os.close(report)
    return Started(host, ours, folder, stamp, contained=True)


def _confine_self(
    drop: capabilities.Drop, syscalls: syscall_filter.SyscallFilter | None, ruleset: confine.Ruleset | None
) -> None:
    """In the new process, before its descriptors are set and it execs: no capability, the syscall
    filter, the Landlock ruleset — in this order."""
    drop.apply()  # while CAP_SETPCAP is held: only it can clear the bounding set, and this drops it too
    if syscalls is not None:
        syscalls.load()
    if ruleset is not None:  # before fd 3 is set: the ruleset's descriptor may be the number fd 3 takes
        confine.restrict(ruleset.fd)


#: the niceness of a ``background`` process: the weight the scheduler gives it is some 1.5 % of
#: a process at 0 beside it (sched(7)), so on a machine of few cores the daemon's own start keeps
#: its core while the load's processes take the others and whatever the daemon leaves idle
BACKGROUND_NICE = 19


def _yield() -> None:
    """In a ``background`` process: ``BACKGROUND_NICE``. It stays in its parent's session — a
    session of its own would be an autogroup of its own (sched(7)), which the scheduler weighs
    as a whole against the daemon's, whatever its niceness; in the daemon's session, it yields to
    the daemon's threads only, and competes with the rest of the machine as the daemon does."""
    os.setpriority(os.PRIO_PROCESS, 0, BACKGROUND_NICE)


def _one_thread() -> bool:
    """Whether this process runs one thread only (the load process: ``host/probe_process.py``)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _cloned(
    namespace: pid_namespace.Plan,
    command: list[str],
    cwd: str,
    env: dict[str, str],
    log: int,
    theirs: socket.socket,
    drop: capabilities.Drop,
    syscalls: syscall_filter.SyscallFilter | None,
    ruleset: confine.Ruleset | None,
    background: bool,
) -> pid_namespace.Host:
    """The host started as ``start`` starts it, by one clone of this process (of one thread:
    nothing else runs in it meanwhile, as in a fork's child) instead of a fork and a clone in the
    fork's child — half the copies of the address space. Its steps are ``start``'s; one that fails
    is reported on a pipe closed by the exec, and the host ends there."""
    failed, failing = os.pipe2(os.O_CLOEXEC)
    outputs = os.open(os.devnull, os.O_WRONLY) if log == subprocess.DEVNULL else log
    try:
        pid = namespace.clone_host()
        if pid == 0:  # the host
            try:
                namespace.settle(not background)
                if background:
                    _yield()
                _confine_self(drop, syscalls, ruleset)
                nothing = os.open(os.devnull, os.O_RDONLY)
                for source, target in ((nothing, 0), (outputs, 1), (outputs, 2), (theirs.fileno(), CHANNEL_FD)):
                    if source == target:
                        os.set_inheritable(target, True)
                    else:
                        os.dup2(source, target)
                os.chdir(cwd)
                _close_inherited()
                for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python's own choice, as subprocess undoes it
                    signal.signal(number, signal.SIG_DFL)
                os.execve(command[0], command, env)
            except BaseException as err:  # the host never runs a module unconfined: it ends
                os.write(failing, f"{getattr(err, 'errno', None) or 0} {err}".encode()[:512])
            finally:
                os._exit(127)
    finally:
        os.close(failing)
        if outputs != log:
            os.close(outputs)
    try:
        said = os.read(failed, 512)  # nothing: the exec closed it
    finally:
        os.close(failed)
    if said:
        os.waitpid(pid, 0)
        code, _, message = said.decode(errors="replace").partition(" ")
        raise OSError(int(code) if code.isdigit() else 0, message)
    return pid_namespace.Host(pid)


def _ruleset(confinement: Confinement, folder: str) -> confine.Ruleset:
    ruleset = confine.Ruleset(confinement.abi)
    for path in (*confinement.read, *confinement.readable()):
        ruleset.allow(path, confine.READ)
    for path in (*confinement.write(), *DEVICES_WRITE, folder):
        ruleset.allow(path, confine.WRITE)
    for path in LISTED:
        ruleset.allow(path, confine.READ_DIR)
    return ruleset


def _close_inherited() -> None:
    """Close every descriptor above fd 3 that would survive exec (Python opens its own with
    close-on-exec; a library's might not be)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > CHANNEL_FD:
            try:
                if not fcntl(fd, F_GETFD) & FD_CLOEXEC:
                    os.close(fd)
            except OSError:
                pass


def last_pid() -> int:
    """The number the kernel gave the newest process (of this process's pid namespace)."""
    with open("/proc/sys/kernel/ns_last_pid") as last:
        return int(last.read())


def group_members(leader: int, since: int) -> list[int]:
    """The processes in ``leader``'s process group, other than itself, started after ``since``
    was the last process number (``last_pid``): what a call left running. Only entries of
    ``/proc`` numbered above ``since`` are read, unless the numbers wrapped around meanwhile;
    what earlier calls started was killed after them."""
    wrapped = last_pid() < since
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or (int(name) <= since and not wrapped):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == leader and int(name) != leader:
            members.append(int(name))
    return members
