"""The runner's control socket (`sessions converge` while a turn runs): only a request with the
key is passed on, only the session's user reaches it, and connections that send nothing do not
hold up the next."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from beeuni.cli.session_control import MAX_WAITING, ControlServer, ask

#: a client of another user: connects to the socket, sends a request with the key, prints what came
CLIENT = """
import json, socket, sys
path, key = sys.argv[1], sys.argv[2]
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
    try:
        client.connect(path)
    except OSError as err:
        sys.exit(print("cannot connect:", type(err).__name__))
    try:
        client.sendall(json.dumps({"key": key, "release": "theirs"}).encode() + b"\\n")
        client.settimeout(30)
        print("answered" if client.recv(65536) else "not answered")
    except OSError:
        print("not answered")
"""


def converging(asked: list[str | None]) -> ControlServer:
    def converge(release: str | None) -> dict[str, Any]:
        asked.append(release)
        return {"event": "converged", "release": release}

    return ControlServer(converge)


def test_a_request_with_the_key_is_answered_one_without_it_is_not() -> None:
    asked: list[str | None] = []
    server = converging(asked)
    try:
        assert ask({**server.address, "key": "not-the-key"}, "abc") is None
        assert ask(server.address, "abc") == {"event": "converged", "release": "abc"}
        assert asked == ["abc"]
    finally:
        server.close()


def test_the_socket_is_in_a_folder_only_its_user_enters_and_goes_with_the_turn() -> None:
    server = converging([])
    folder = Path(server.address["path"]).parent
    try:
        info = folder.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o700, os.getuid())
        assert not server.address["path"].startswith("\0")  # no abstract socket: those any user opens
    finally:
        server.close()
    assert not folder.exists()
    assert ask(server.address, None) is None


def test_a_dozen_silent_connections_and_more_do_not_hold_up_the_runner() -> None:
    """Connections that connect and send nothing, left open all along: a request with the key is
    answered at once, again after more silent ones than are waited for, each time."""
    asked: list[str | None] = []
    server = converging(asked)
    try:
        with contextlib.ExitStack() as stack:
            for round_ in range(3):
                for _ in range(12 if round_ == 0 else MAX_WAITING * 2):
                    silent = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
                    silent.connect(server.address["path"])
                assert ask(server.address, f"r{round_}") == {"event": "converged", "release": f"r{round_}"}
        assert asked == ["r0", "r1", "r2"]
    finally:
        server.close()


def other_user() -> tuple[list[str], str]:
    """The command that runs a program as ``nobody``, or skip when this test cannot switch users."""
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("running a client as another user needs root and setpriv")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    group = "nogroup" if _group_exists("nogroup") else "nobody"
    return [setpriv, "--reuid", "nobody", "--regid", group, "--clear-groups"], group


def _group_exists(name: str) -> bool:
    import grp

    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def as_nobody(path: str, key: str) -> str:
    prefix, _ = other_user()
    done = subprocess.run(
        [*prefix, sys.executable, "-I", "-c", CLIENT, path, key], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_another_user_cannot_reach_the_socket_even_with_the_key() -> None:
    """As ``nobody``, with the key and the path (as if the record had leaked): the folder keeps it
    out; opened to every user (as a chmod could), the runner checks the peer's user and closes
    the connection unanswered. Its owner is answered all along."""
    asked: list[str | None] = []
    server = converging(asked)
    folder = Path(server.address["path"]).parent
    try:
        assert as_nobody(server.address["path"], server.address["key"]) == "cannot connect: PermissionError"
        folder.chmod(0o755)
        Path(server.address["path"]).chmod(0o666)
        assert as_nobody(server.address["path"], server.address["key"]) == "not answered"
        assert asked == []
        assert ask(server.address, "mine") == {"event": "converged", "release": "mine"}
        assert asked == ["mine"]
    finally:
        server.close()


LISTENER = """
import socket, sys
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
    listener.bind(sys.argv[1])
    listener.listen(4)
    print("ready", flush=True)
    connection, _ = listener.accept()
    connection.settimeout(5)
    try:
        print(connection.recv(65536).decode() or "nothing", flush=True)
    except OSError:
        print("nothing", flush=True)
"""


def test_a_socket_of_another_user_is_not_asked() -> None:
    """`sessions converge` sends the key only to a runner of its own user: a socket another user
    bound at the recorded path (a record it could write) gets nothing."""
    prefix, group = other_user()
    folder = tempfile.mkdtemp(prefix="beeuni-test-")
    try:
        shutil.chown(folder, "nobody", group)
        path = os.path.join(folder, "control")
        with subprocess.Popen(
            [*prefix, sys.executable, "-I", "-c", LISTENER, path], stdout=subprocess.PIPE, text=True
        ) as process:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
            assert ask({"path": path, "key": "the-key"}, None) is None
            said = process.stdout.read()
            process.wait(timeout=30)
        assert said.strip() == "nothing"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
