"""The daemon's edges, for real (daemon on 127.0.0.1, Bun): strict input, bounded headers and
per-agent state, the Host allow-list, grants that only narrow, and the files it writes."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import BEEUNI, ROOT
from daemon_helpers import BUN, Daemon, daemon_refused, running_daemon, start_daemon, stop_daemon, wait_until
from hypothesis import given, settings
from hypothesis import strategies as st

COUNT = """import { appendFileSync } from 'node:fs'
export default {
  description: 'Counts its runs in out/calls.log, in the repository.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) { appendFileSync(`${context.cwd}/out/calls.log`, 'ran\\n'); return 'counted' },
}"""
ECHO = """export default {
  description: 'Echo the arguments and the secrets the call sees.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) { return { args, env: context.env } },
}"""
MANIFEST = """tools:
  count: tools/count.ts
  echo: tools/echo.ts
agents:
  alice:
    tools: [count, echo]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("edges") / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "out").mkdir()  # where the modules write (they cannot create entries in the top folder)
    (folder / "tools" / "count.ts").write_text(COUNT)
    (folder / "tools" / "echo.ts").write_text(ECHO)
    (folder / "beeuni.yaml").write_text(MANIFEST)
    return folder


@pytest.fixture(scope="module")
def daemon(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(project, tmp_path_factory.mktemp("edges-daemon"), "--harness", "experimental") as running:
        yield running


def post(daemon: Daemon, body: bytes, tool: str = "count", **headers: str) -> httpx.Response:
    return httpx.post(
        f"{daemon.url}/beeuni/tools/{tool}", content=body, headers={**daemon.headers(), **headers}, timeout=60
    )


def runs(project: Path) -> int:
    log = project / "out" / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


# strict input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "literal"),
    [
        (b'{"a": NaN}', "NaN"),
        (b'{"a": Infinity}', "Infinity"),
        (b'{"a": [-Infinity]}', "-Infinity"),
        (b'{"a": 1e999}', "1e999"),
    ],
)
def test_numbers_json_does_not_have_are_400_and_the_tool_is_not_run(
    daemon: Daemon, project: Path, body: bytes, literal: str
) -> None:
    before = runs(project)
    answer = post(daemon, body)
    assert (answer.status_code, answer.json()) == (
        400,
        {"error": f"the arguments must be strict JSON: {literal} is no JSON number; the tool was not run"},
    )
    assert runs(project) == before
    assert post(daemon, b'{"a": 1e300}').status_code == 200  # a large finite number is JSON


@pytest.mark.parametrize(
    ("literal", "shown"),
    [
        ("1" * 400, "1" * 24 + "… (400 digits)"),
        ("-" + "9" * 309, "-" + "9" * 23 + "… (309 digits)"),
        (str(2**53 + 1), f"{2**53 + 1} (16 digits)"),
        (str(-(2**64) - 1), f"{-(2**64) - 1} (20 digits)"),
    ],
)
def test_an_integer_a_double_cannot_hold_exactly_is_400_and_the_tool_is_not_run(
    daemon: Daemon, project: Path, literal: str, shown: str
) -> None:
    before = runs(project)
    answer = post(daemon, b'{"a": [' + literal.encode() + b"]}")
    assert (answer.status_code, answer.json()) == (
        400,
        {
            "error": f"the arguments must be strict JSON: the integer {shown} is more than a JSON number holds"
            " exactly (the tool reads numbers as doubles); the tool was not run"
        },
    )
    assert runs(project) == before


def test_integers_a_double_holds_reach_the_module_unchanged(daemon: Daemon) -> None:
    held = [2**53, -(2**53), 2**60, 2**1023, 0]
    answer = post(daemon, json.dumps({"held": held}).encode(), tool="echo")
    assert answer.status_code == 200, answer.text
    echoed = json.loads(answer.json()["output"])["args"]["held"]  # JavaScript writes the shortest form
    assert [float(number) for number in echoed] == [float(number) for number in held]


def test_nesting_past_the_documented_depth_is_400_not_a_server_error(daemon: Daemon, project: Path) -> None:
    before = runs(project)
    for depth in (65, 5000, 100_000):
        answer = post(daemon, b'{"a": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}")
        assert (answer.status_code, answer.json()) == (
            400,
            {"error": "the arguments nest deeper than 64 levels of objects and arrays; the tool was not run"},
        )
    assert runs(project) == before
    brackets_in_text = json.dumps({"a": "[" * 5000, "b": [[["{"]]]}).encode()
    assert post(daemon, brackets_in_text).status_code == 200  # brackets inside strings are text
    assert post(daemon, b'{"a": ' + b"[" * 63 + b"]" * 63 + b"}").status_code == 200  # 64 deep: the limit itself


@pytest.mark.parametrize("header", ["X-Beeuni-Agent", "X-Beeuni-Parent"])
def test_an_agent_header_over_its_limit_is_431(daemon: Daemon, header: str) -> None:
    for size, error in (
        (1025, f"the {header.lower()} header is longer than 1024 bytes"),
        (1024 * 1024, HEAD_TOO_LARGE),
    ):
        answer = post(daemon, b"{}", **{header: "a" * size})
        assert (answer.status_code, answer.json()) == (431, {"error": error})
        listing = httpx.get(f"{daemon.url}/beeuni/tools", headers={**daemon.headers(), header: "a" * size}, timeout=60)
        assert listing.status_code == 431
    assert post(daemon, b"{}", **{"X-Beeuni-Agent": "a" * 1024}).status_code == 200  # undeclared: the default view


def test_per_agent_state_is_bounded_by_the_manifest(project: Path) -> None:
    """Whatever names the requests carry, the session remembers views only for the agents the
    manifest declares (and one for all undeclared ones)."""
    from beeuni.daemon.serving.session import Session

    async def ask() -> int:
        session = Session(str(project), None, "experimental", "beeuni", str(BUN), 30.0)
        await session.start()
        try:
            assert session.current is not None
            for index in range(2000):
                assert session.visible(session.current, f"agent-{index}-{'x' * 900}", None) == ["count", "echo"]
            assert session.visible(session.current, "alice", None) == ["count", "echo"]
            return len(session.current.visible)
        finally:
            await session.stop()

    assert asyncio.run(ask()) == 2


@pytest.mark.parametrize(
    "host", ["example.com", "127.0.0.1", "127.0.0.1:1", "localhost.example.com:{port}", "evil:{port}"]
)
def test_a_foreign_host_is_refused(daemon: Daemon, host: str) -> None:
    given = host.format(port=daemon.url.rsplit(":", 1)[1])
    for answer in (
        post(daemon, b"{}", host=given),
        httpx.get(f"{daemon.url}/beeuni/tools", headers={**daemon.headers(), "host": given}, timeout=60),
        httpx.get(f"{daemon.url}/beeuni/openapi.json", headers={"host": given}, timeout=60),
    ):
        assert answer.status_code == 400
        assert answer.json() == {
            "error": "the daemon answers only requests addressed to it by a local name (127.0.0.1, localhost, [::1])"
            f" and its port, not to the host {given}"
        }


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_the_local_names_with_the_daemons_port_are_answered(daemon: Daemon, name: str) -> None:
    port = daemon.url.rsplit(":", 1)[1]
    assert post(daemon, b"{}", host=f"{name}:{port}").status_code == 200


def test_the_401_text_shows_no_path(daemon: Daemon) -> None:
    answer = httpx.post(f"{daemon.url}/beeuni/tools/count", content=b"{}", timeout=60)
    assert answer.status_code == 401
    error = answer.json()["error"]
    assert str(daemon.state) not in error and "/" not in error
    assert error.startswith("a bearer token is required")


# `secrets set` and `secrets rm` -------------------------------------------------------------


def secrets(project: Path, state: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "BEEUNI_STATE_DIR": str(state), "NO_COLOR": "1"}
    return subprocess.run(
        [BEEUNI, "secrets", *args, str(project)], input=stdin, capture_output=True, env=environment, timeout=120
    )


def stored(state: Path) -> dict[str, str]:
    found = list(state.glob("projects/*/secrets.json"))
    return json.loads(found[0].read_bytes()) if found else {}


@pytest.mark.parametrize("name", ["BEEUNI_API_URL", "BEEUNI_TOKEN", "BEEUNI_ANYTHING", "OPENAI_API_KEY"])
def test_a_reserved_name_is_refused(project: Path, tmp_path: Path, name: str) -> None:
    refused = secrets(project, tmp_path, "set", f"{name}=-", stdin=b"-\n")
    assert refused.returncode == 2
    assert f"`{name}` is reserved: the platform sets it in every call's `context.env`" in refused.stderr.decode()
    assert stored(tmp_path) == {}


def test_twenty_parallel_writers_keep_all_twenty(project: Path, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=20) as pool:
        done = list(pool.map(lambda i: secrets(project, tmp_path, "set", f"KEY_{i}=-", stdin=b"v%d" % i), range(20)))
    assert [run.returncode for run in done] == [0] * 20
    assert stored(tmp_path) == {f"KEY_{i}": f"v{i}" for i in range(20)}


def test_a_value_is_stored_exactly_or_refused(project: Path, tmp_path: Path) -> None:
    exact = "pässwörd \U0001f41d\r\n\tend"
    assert secrets(project, tmp_path, "set", "TEXT=-", stdin=exact.encode() + b"\n").returncode == 0
    assert stored(tmp_path) == {"TEXT": exact}  # one final newline dropped, every other byte kept
    for value in (b"\xff\xfebinary", b"caf\xe9"):
        refused = secrets(project, tmp_path, "set", "BINARY=-", stdin=value)
        assert refused.returncode == 2
        assert "the value for BINARY is not UTF-8 text; nothing was stored" in refused.stderr.decode()
    empty = secrets(project, tmp_path, "set", "EMPTY=-", stdin=b"\n")
    assert (empty.returncode, empty.stderr.decode().count("the value for EMPTY is empty")) == (2, 1)
    assert stored(tmp_path) == {"TEXT": exact}


def test_secrets_rm(project: Path, tmp_path: Path) -> None:
    for name in ("KEEP", "GONE"):
        assert secrets(project, tmp_path, "set", f"{name}=-", stdin=b"x").returncode == 0
    assert secrets(project, tmp_path, "rm", "GONE").returncode == 0
    assert stored(tmp_path) == {"KEEP": "x"}
    again = secrets(project, tmp_path, "rm", "GONE")
    assert again.returncode == 2 and "no secret named GONE is stored for this project" in again.stderr.decode()
    assert stored(tmp_path) == {"KEEP": "x"}


def test_a_stored_secret_never_stands_in_for_a_platform_variable(project: Path, tmp_path: Path) -> None:
    """A store written before the names were refused may hold one: the call sees the platform's."""
    folder = tmp_path / "granting"
    shutil.copytree(project, folder, ignore=shutil.ignore_patterns("calls.log"))
    (folder / "beeuni.yaml").write_text(MANIFEST + "    secrets: all\n")
    state = tmp_path / "state"
    assert secrets(folder, state, "set", "MINE=-", stdin=b"mine").returncode == 0
    forged = {"MINE": "mine", "BEEUNI_API_URL": "https://evil.example", "BEEUNI_TOKEN": "forged"}
    next(state.glob("projects/*/secrets.json")).write_text(json.dumps(forged))
    env = {"BEEUNI_API_URL": "https://platform.example", "BEEUNI_TOKEN": "platform-token"}
    with running_daemon(folder, tmp_path, "--harness", "experimental", env=env) as daemon:
        seen = json.loads(daemon.call("echo", agent="alice").json()["output"])["env"]
    assert seen["MINE"] == "mine" and seen["BEEUNI_API_URL"] == "https://platform.example"
    assert seen["BEEUNI_TOKEN"] == "platform-token"


def test_the_reserved_names_are_the_rules_data(project: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    agents = rules / "agents.rules"
    agents.write_text(
        agents.read_text().replace('RESERVED_SECRET_PREFIX = "BEEUNI_"', 'RESERVED_SECRET_PREFIX = "ACME_"')
    )
    assert secrets(project, tmp_path, "set", "BEEUNI_MINE=-", "--rules", str(rules), stdin=b"x").returncode == 0
    refused = secrets(project, tmp_path, "set", "ACME_KEY=-", "--rules", str(rules), stdin=b"x")
    assert refused.returncode == 2 and "`ACME_KEY` is reserved" in refused.stderr.decode()
    assert stored(tmp_path) == {"BEEUNI_MINE": "x"}


# spill files --------------------------------------------------------------------------------

BIG = """export default {
  description: 'A long output.',
  parameters: { type: 'object', properties: {} },
  async execute() { return Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\\n') },
}"""


def start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()


def test_spill_files_live_in_the_daemons_private_folder_removed_at_exit_and_stale_ones_at_start(
    project: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "spilling"
    shutil.copytree(project, folder, ignore=shutil.ignore_patterns("calls.log"))
    (folder / "tools" / "big.ts").write_text(BIG)
    (folder / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n  big: tools/big.ts\n", 1))
    temp = tmp_path / "temp"
    temp.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = temp / f"beeuni-daemon-{gone.pid}-{start_time(os.getpid())}-x"  # a dead daemon's
    reused = temp / f"beeuni-daemon-{os.getpid()}-1-x"  # a live pid, another start: reused by another process
    live = temp / f"beeuni-daemon-{os.getpid()}-{start_time(os.getpid())}-x"  # a live daemon's
    other = temp / "beeuni-daemon-notes"
    for made in (stale, reused, live, other):
        made.mkdir()
        (made / "out.txt").write_text("old")
    with running_daemon(folder, tmp_path, "--harness", "experimental", env={"TMPDIR": str(temp)}) as daemon:
        own = [path.name for path in temp.glob(f"beeuni-daemon-{daemon.process.pid}-*")]
        assert len(own) == 1
        assert sorted(path.name for path in temp.glob("beeuni-daemon-*")) == sorted([live.name, other.name, *own])
        body = daemon.call("big").json()
        spilled = Path(body["path"])
        private = spilled.parent.parent
        assert private.name.startswith(f"beeuni-daemon-{daemon.process.pid}-{start_time(daemon.process.pid)}-")
        assert (spilled.parent.name, private.parent) == ("spill", temp)
        assert oct(private.stat().st_mode & 0o777) == "0o700"
        assert oct(spilled.stat().st_mode & 0o777) == "0o600"
        assert spilled.read_text().splitlines()[-1] == "line 3000"
    assert not private.exists()
    assert live.exists() and other.exists()


def test_the_spilled_total_is_bounded_oldest_removed_first(tmp_path: Path) -> None:
    from beeuni.daemon.host.output import SpillFolder

    spill = SpillFolder(str(tmp_path / "spill"), limit=100)
    first, second = spill.store(b"a" * 40, "t"), spill.store(b"b" * 40, "t")
    third = spill.store(b"c" * 40, "t")
    assert (Path(first).exists(), Path(second).exists(), Path(third).read_bytes()) == (False, True, b"c" * 40)
    huge = spill.store(b"d" * 150, "t")  # larger than the limit: kept, alone
    assert [path.name for path in Path(spill.path).iterdir()] == [Path(huge).name]


# the opencode plugin ------------------------------------------------------------------------


def test_the_plugin_is_written_outside_the_repository_and_never_into_it(project: Path, tmp_path: Path) -> None:
    """The plugin runs in opencode beside the daemon's token: no agent and no module may write it."""
    folder = tmp_path / "plugged"
    shutil.copytree(project, folder, ignore=shutil.ignore_patterns("calls.log"))
    with running_daemon(folder, tmp_path, "--harness", "standard") as daemon:
        written = Path(daemon.document["plugin"])
        assert not written.is_relative_to(folder) and not (folder / ".opencode").exists()
        assert "__BEEUNI_WITHOUT_CONNECTION__" not in written.read_text()
        assert oct(written.stat().st_mode & 0o777) == "0o600"
        assert hashlib.sha256(written.read_bytes()).hexdigest() == daemon.document["plugin_sha256"]
    for inside in (folder / ".opencode", folder / "elsewhere"):
        started, handed = daemon_refused(folder, tmp_path / "state", "--opencode-dir", str(inside))
        assert (started.code, handed) == (2, b"")
        assert f"beeuni daemon: --opencode-dir {inside} lies in the repository" in started.stderr
        assert not inside.exists()


def test_the_starter_checks_the_plugin_before_opencode_loads_it(project: Path, tmp_path: Path) -> None:
    from beeuni.daemon.plugin import PluginMismatch, verify

    with running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        assert verify(daemon.document) == str(Path(daemon.document["plugin"]).parent.parent)
        plugin = Path(daemon.document["plugin"])
        (plugin.parent / "left-over.ts").write_text("export const Evil = async () => ({})\n")
        with pytest.raises(PluginMismatch, match=re.escape("holds more than the daemon's plugin: left-over.ts")):
            verify(daemon.document)
        (plugin.parent / "left-over.ts").unlink()
        plugin.write_text(plugin.read_text().replace("x-beeuni-agent", "x-beeuni-agnt"))
        with pytest.raises(PluginMismatch, match=re.escape("is not the plugin the daemon wrote")):
            verify(daemon.document)


@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\ab'),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="[{a"), inner, max_size=3),
        max_leaves=40,
    ),
    st.integers(min_value=0, max_value=12),
)
@settings(max_examples=300, deadline=None)
def test_the_depth_scan_agrees_with_the_parsed_value(value: Any, limit: int) -> None:
    from beeuni.daemon.edge.strict_json import depth_exceeds

    def depth(node: Any) -> int:
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        return 0 if children is None else 1 + max((depth(child) for child in children), default=0)

    assert depth_exceeds(json.dumps(value).encode(), limit) == (depth(value) > limit)


@given(st.integers(min_value=-(10**320), max_value=10**320))
def test_an_integer_is_taken_exactly_when_a_double_holds_it(number: int) -> None:
    from beeuni.daemon.edge.strict_json import Inexact, parse

    try:
        held = int(float(number)) == number
    except OverflowError:
        held = False
    try:
        assert parse(str(number).encode()) == number and held
    except Inexact:
        assert not held


# the edge: heads, read timeouts, connections without the token ----------------------------

HEAD_TOO_LARGE = (
    "the request's head (its request line and headers) is over 16384 bytes or 100 headers;"
    " it was refused before its token or body was read"
)


def connect(daemon: Daemon) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(daemon.url.rsplit(":", 1)[1])), timeout=60)


def head(daemon: Daemon, *lines: str, token: bool = True, body: bytes = b"{}", tool: str = "count") -> bytes:
    """A request's head as a client writes it, its body's length declared."""
    host = daemon.url.removeprefix("http://")
    auth = [f"Authorization: Bearer {daemon.token}"] if token else []
    fields = [f"POST /beeuni/tools/{tool} HTTP/1.1", f"Host: {host}", *auth, f"Content-Length: {len(body)}", *lines]
    return ("\r\n".join(fields) + "\r\n\r\n").encode()


def answer_of(connection: socket.socket) -> tuple[int, Any]:
    """The status and JSON body of the answer read from ``connection``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, f"the connection closed without an answer: {data!r}"
        data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    fields, _, body = rest.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in fields.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        assert chunk, "the connection closed in the answer's body"
        body += chunk
    return int(status_line.split()[1]), json.loads(body)


def peak_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def test_a_head_is_bounded_in_bytes_and_headers_before_the_token_is_read(daemon: Daemon, project: Path) -> None:
    from beeuni.daemon.edge.http_edges import MAX_HEAD, MAX_HEADERS

    before = runs(project)
    for token in (True, False):  # 431 with or without the token: the app never saw the request
        base = len(head(daemon, "X-Pad: ", token=token))
        exact = head(daemon, "X-Pad: " + "p" * (MAX_HEAD - base), token=token)
        over = head(daemon, "X-Pad: " + "p" * (MAX_HEAD - base + 1), token=token)
        assert len(exact) == MAX_HEAD
        with connect(daemon) as connection:
            connection.sendall(over + b"{}")
            assert answer_of(connection) == (431, {"error": HEAD_TOO_LARGE})
        count = MAX_HEADERS - (3 if token else 2)
        with connect(daemon) as connection:
            connection.sendall(head(daemon, *[f"X-Pad-{n}: p" for n in range(count + 1)], token=token) + b"{}")
            assert answer_of(connection) == (431, {"error": HEAD_TOO_LARGE})
        with connect(daemon) as connection:  # at the limits: answered as usual
            connection.sendall(exact + b"{}")
            assert answer_of(connection)[0] == (200 if token else 401)
            connection.sendall(head(daemon, *[f"X-Pad-{n}: p" for n in range(count)], token=token) + b"{}")
            assert answer_of(connection)[0] == (200 if token else 401)
    with connect(daemon) as connection:  # the request line counts: a long path is a long head
        connection.sendall(f"GET /beeuni/tools?{'q' * MAX_HEAD} HTTP/1.1\r\n\r\n".encode())
        assert answer_of(connection) == (431, {"error": HEAD_TOO_LARGE})
    assert runs(project) == before + 2  # the two answered with the token


def test_a_flood_of_huge_heads_is_431_and_grows_the_daemon_by_no_more_than_a_head_each(
    project: Path, tmp_path: Path
) -> None:
    """Eight requests without the token, each sending a 64 MiB header: each is answered 431 as
    soon as its head passes the bound, and what the client still sends is dropped unread."""
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        before = peak_mib(daemon.process.pid)

        def flood(_: int) -> tuple[int, Any]:
            with connect(daemon) as connection:
                connection.sendall(b"POST /beeuni/tools/count HTTP/1.1\r\nX-Filler: ")
                for _ in range(1024):  # 64 MiB, until the answer is there to read
                    if select.select([connection], [], [], 0)[0]:
                        break
                    connection.sendall(b"f" * 65536)
                return answer_of(connection)

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(flood, range(8)))
        assert answers == [(431, {"error": HEAD_TOO_LARGE})] * 8
        assert peak_mib(daemon.process.pid) - before < 16
        assert post(daemon, b"{}").status_code == 200


def test_half_sent_requests_never_crowd_out_the_harness(project: Path, tmp_path: Path) -> None:
    """1,100 requests without the token that never finish their head hold at most UNPROVEN_MAX of
    the daemon's descriptors (each new one closes the oldest); the harness's calls, on a new
    connection and on one it opened before, are answered."""
    from beeuni.daemon.edge.http_edges import UNPROVEN_MAX

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the test's own descriptors are limited to {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if hard == resource.RLIM_INFINITY else hard, hard))
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon, contextlib.ExitStack() as stack:
        descriptors = Path(f"/proc/{daemon.process.pid}/fd")
        assert post(daemon, b"{}").status_code == 200
        before = len(list(descriptors.iterdir()))
        harness = stack.enter_context(connect(daemon))
        harness.sendall(head(daemon, body=b"{}") + b"{")  # its head read: the token presented
        for _ in range(1100):
            connection = stack.enter_context(connect(daemon))
            connection.sendall(b"POST /beeuni/tools/count HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert post(daemon, b"{}").status_code == 200  # a new connection of the harness
        harness.sendall(b"}")  # the old one, in the middle of its body all along
        assert answer_of(harness)[1]["output"] == "counted"
        assert len(list(descriptors.iterdir())) - before <= UNPROVEN_MAX + 16


class Held:
    """A fake connection for the bound's policy: its transport records that it was closed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.closed = False
        self.transport: Any = self

    def close(self) -> None:
        self.closed = True


def bound_of(total: int) -> tuple[Any, list[int]]:
    """An ``Unproven`` bound of ``total`` whose passes read each fake's pid, and the passes' sizes."""
    from beeuni.daemon.edge.unproven import Unproven

    passes: list[int] = []

    def attribute(connections: Any, known: Any) -> list[int]:
        passes.append(len(connections))
        return [connection.pid for connection in connections]

    return Unproven(total, attribute=attribute, cheap=float("inf")), passes  # never waits for its share


def test_a_process_flooding_closes_its_own_connections_and_no_other() -> None:
    """The policy alone: below the pressure nothing is attributed; a process opening thousands
    never holds more than PER_PROCESS_MAX and closes none of another's, old or new; past the
    total, the process holding the most loses its oldest."""
    from beeuni.daemon.edge.unproven import PASS_EVERY, PER_PROCESS_MAX, UNKNOWN

    unproven, passes = bound_of(256)
    quiet = [Held(1000 + n) for n in range(PER_PROCESS_MAX - 1)]
    for connection in quiet:
        unproven.admit(connection)
    assert passes == []  # no pressure: no /proc reading
    harness = Held(7)
    unproven.admit(harness)
    flood = []
    for n in range(3000):
        flood.append(Held(666))
        unproven.admit(flood[-1])
        if n == 1000:
            newcomer = Held(7)  # the harness's next connection, in the middle of the flood
            unproven.admit(newcomer)
        assert sum(not held.closed for held in flood) <= PER_PROCESS_MAX
    assert passes[0] == PER_PROCESS_MAX and max(passes[1:]) <= PASS_EVERY and len(passes) <= 3000 // PASS_EVERY + 2
    assert not any(held.closed for held in (*quiet, harness, newcomer))
    others = [Held(UNKNOWN) for _ in range(100)]  # another user's: one group, bounded like a process
    for connection in others:
        unproven.admit(connection)
    assert sum(not held.closed for held in others) <= PER_PROCESS_MAX
    assert not any(held.closed for held in (*quiet, harness, newcomer))

    crowded, _ = bound_of(64)  # past the total: the oldest of the group holding the most goes
    many = [Held(100 + n % 4) for n in range(64)]
    for connection in many:
        crowded.admit(connection)
    extra = Held(200)
    crowded.admit(extra)
    assert [held for held in many if held.closed] == [many[0]] and not extra.closed


def test_a_clients_socket_and_process_are_found_by_its_address() -> None:
    """The kernel's answer (netlink) and the table it falls back to agree, for a client of any
    loopback address; the process holding the socket is found."""
    from beeuni.daemon.edge import sockets
    from beeuni.daemon.edge.peer import process_at

    with socket.create_server(("127.0.0.1", 0)) as listener:
        server = listener.getsockname()
        with (
            socket.create_connection(server) as plain,
            socket.create_connection(server, source_address=("127.0.0.2", 0)) as other,
        ):
            clients = [plain.getsockname(), other.getsockname()]
            expected = {
                client: (os.geteuid(), os.fstat(held.fileno()).st_ino)
                for client, held in zip(clients, (plain, other), strict=True)
            }
            assert sockets.owners(clients, server) == expected
            assert sockets._by_table(clients, server) == expected
            assert sockets.owners([("127.0.0.1", 1), ("::1", 5)], server) == {}
            found = process_at(clients[1], server)
            assert found is not None and found[0] == os.getpid()


#: a process that opens connections to the daemon and holds them, sending nothing; on each line
#: of its input it says how many the daemon has not closed
FLOODER = """import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
print("flooded", flush=True)
for _ in sys.stdin:
    open_ = 0
    for connection in held:
        try:
            open_ += connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            open_ += 1
        except OSError:
            pass
    print(open_, flush=True)
"""

#: a client that opens its connection, begins a request without the token, and on its first line
#: of input sends the rest (the token in it) and says the answer's status
CLIENT = """import json, socket, sys
port = int(sys.argv[1])
connection = socket.create_connection(("127.0.0.1", port))
begun, rest = json.loads(sys.stdin.readline())
connection.sendall(begun.encode())
print("begun", flush=True)
sys.stdin.readline()
connection.sendall(rest.encode())
answer = b""
while b"\\r\\n" not in answer and (chunk := connection.recv(65536)):
    answer += chunk
print(answer.split(b" ")[1].decode() if answer else "closed", flush=True)
"""


@contextlib.contextmanager
def flooding(daemon: Daemon, folder: Path, count: int, user: int | None = None) -> Iterator[Any]:
    """A process (of ``user``) holding ``count`` connections to the daemon; a function saying how
    many of them the daemon has not closed."""
    script = folder / "flooder.py"
    script.write_text(FLOODER)
    script.chmod(0o644)
    process = subprocess.Popen(
        [python_for(user), "-I", str(script), daemon.url.rsplit(":", 1)[1], str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        user=user,
        group=user,
        extra_groups=[] if user is not None else None,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline() == "flooded\n"

        def still_open() -> int:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("count\n")
            process.stdin.flush()
            return int(process.stdout.readline())

        yield still_open
    finally:
        process.kill()
        process.wait()


def python_for(user: int | None) -> str:
    """An interpreter ``user`` may run (this one lives in root's home, closed to others)."""
    if user is None:
        return sys.executable
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.path.exists(system):
        pytest.skip(f"user {user} cannot run {sys.executable}, and there is no {system}")
    return system


def test_a_flooding_process_loses_its_own_connections_never_anothers(project: Path, tmp_path: Path) -> None:
    """Another process opens 600 connections and holds them without a word: the daemon leaves it
    at most PER_PROCESS_MAX; this process's connection, begun without the token before the
    flood (the oldest, which the flood closed when the bound was for all), is answered once it
    sends the rest of its request, and so is a new one."""
    from beeuni.daemon.edge.refusals import BURST
    from beeuni.daemon.edge.unproven import PER_PROCESS_MAX

    with running_daemon(project, tmp_path, "--harness", "experimental", "--read-timeout", "600") as daemon:
        descriptors = Path(f"/proc/{daemon.process.pid}/fd")
        assert post(daemon, b"{}").status_code == 200
        before = len(list(descriptors.iterdir()))
        request = head(daemon) + b"{}"
        with connect(daemon) as waiting, flooding(daemon, tmp_path, 600) as still_open:
            waiting.sendall(request[:20])  # the request line begun, no token yet
            wait_until(lambda: still_open() <= PER_PROCESS_MAX, "the flooder to be cut down to its share")
            assert len(list(descriptors.iterdir())) - before <= PER_PROCESS_MAX + 16
            waiting.sendall(request[20:])
            status, answer = answer_of(waiting)
            assert (status, answer["output"]) == (200, "counted")
            assert post(daemon, b"{}").status_code == 200
            assert 0 < still_open() <= PER_PROCESS_MAX  # its own share is kept, not the others'
        cut = re.compile(
            r"\[daemon\] closed \d+ connections of process \d+ \(python[^)]*\) that had not presented the"
            rf" token: one process may hold {PER_PROCESS_MAX} at once"
        )
        wait_until(lambda: cut.search(daemon.log()) is not None, "the cut to be logged")
        assert len(cut.findall(daemon.log())) <= BURST  # rate-limited, as every refusal


NOBODY = 65534


def test_a_flood_by_another_user_cannot_close_the_daemon_users_connection(project: Path) -> None:
    """The daemon runs as an ordinary user (``nobody``); root's processes are unreadable to it,
    so their connections are the one unknown group: a flood of 600 from there is cut down to
    PER_PROCESS_MAX, and a connection of the daemon's own user, begun without the token before
    it, is answered."""
    from beeuni.daemon.edge.unproven import PER_PROCESS_MAX

    if os.geteuid() != 0:
        pytest.skip("only root can start a daemon as another user")
    folder = Path(tempfile.mkdtemp(prefix="beeuni-peer-bound-"))
    try:
        os.chmod(folder, 0o755)
        shutil.copytree(project, folder / "project", ignore=shutil.ignore_patterns("calls.log"))
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        env = {"HOME": str(folder), "TMPDIR": str(folder)}
        daemon = start_daemon(
            folder / "project",
            folder / "state",
            "--harness",
            "experimental",
            "--read-timeout",
            "600",
            env=env,
            user=NOBODY,
        )
        try:
            (folder / "client.py").write_text(CLIENT)
            port = daemon.url.rsplit(":", 1)[1]
            client = subprocess.Popen(
                [python_for(NOBODY), "-I", str(folder / "client.py"), port],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                user=NOBODY,
                group=NOBODY,
                extra_groups=[],
            )
            assert client.stdin is not None and client.stdout is not None
            request = head(daemon).decode() + "{}"
            client.stdin.write(json.dumps([request[:20], request[20:]]) + "\n")
            client.stdin.flush()
            assert client.stdout.readline() == "begun\n"
            with flooding(daemon, folder, 600) as still_open:
                wait_until(lambda: still_open() <= PER_PROCESS_MAX, "root's flood to be cut down to one share")
                client.stdin.write("go\n")
                client.stdin.flush()
                assert client.stdout.readline() == "200\n"
            client.wait(timeout=60)
            unnamed = "connections that had not presented the token, of processes the daemon cannot name"
            wait_until(lambda: unnamed in daemon.log(), "the cut to be logged")
        finally:
            stop_daemon(daemon)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_request_that_does_not_arrive_in_full_in_time_is_408(project: Path, tmp_path: Path) -> None:
    with running_daemon(project, tmp_path, "--harness", "experimental", "--read-timeout", "2") as daemon:
        before = runs(project)
        with connect(daemon) as silent, connect(daemon) as in_head, connect(daemon) as in_body:
            in_head.sendall(b"POST /beeuni/tools/count HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            in_body.sendall(head(daemon, body=b'{"a": 1}') + b'{"a"')
            for connection in (silent, in_head, in_body):
                assert answer_of(connection) == (
                    408,
                    {"error": "the request did not arrive in full within 2 seconds; the connection was closed"},
                )
                assert connection.recv(1) == b""  # closed
        assert runs(project) == before
        assert post(daemon, b"{}").status_code == 200
        assert "Traceback" not in daemon.log()


# a long-running process frees its cycles ----------------------------------------------------


def resident_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024


def test_refused_calls_do_not_grow_the_daemon(daemon: Daemon) -> None:
    """A command runs without the cyclic garbage collector (cli/main.py); the daemon runs for a
    whole session and collects. Without it each refused request — an exception and its
    traceback, a cycle — stayed: some 5 KB each, 20 MB over these."""

    def refuse_many(count: int) -> None:
        with httpx.Client(headers=daemon.headers(), timeout=60) as client:
            for _ in range(count):
                assert client.post(f"{daemon.url}/beeuni/tools/nothing", json={}).status_code == 404
                assert client.post(f"{daemon.url}/beeuni/tools/count", content=b"{bad").status_code == 400

    refuse_many(500)  # what a daemon allocates once (caches, buffers) is allocated by now
    before = resident_mib(daemon.process.pid)
    refuse_many(2000)
    assert resident_mib(daemon.process.pid) - before < 8


# pipelined requests and refusals: bounded before the token -----------------------------------

#: how much the daemon may grow under the floods below (the attack seen grew it by 1.6 GiB)
FLOOD_GROWTH_MIB = 32


def pipeline(daemon: Daemon, connection: socket.socket, request: bytes, limit: int) -> int:
    """Send ``request`` again and again on ``connection`` without reading an answer, until
    ``limit`` bytes are sent, the daemon closes the connection, or it reads no more (nothing
    sent for 5 s: a wait, not a measurement); the bytes sent."""
    connection.setblocking(False)
    batch = memoryview(request * (65536 // len(request)))
    view, sent = batch, 0
    while sent < limit:
        if not select.select([], [connection], [], 5)[1]:
            break
        try:
            count = connection.send(view)
        except OSError:  # closed by the daemon
            break
        sent += count
        view = view[count:] or batch
    return sent


def test_pipelined_requests_without_the_token_do_not_grow_the_daemon(project: Path, tmp_path: Path) -> None:
    """Token-less requests pipelined on a connection whose client never reads an answer (a module
    finds the port in /proc/net/tcp): each connection is closed once MAX_PIPELINED wait, and the
    attacker's 300 connections and their gigabyte grow the daemon by at most FLOOD_GROWTH_MIB."""
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        host = daemon.url.removeprefix("http://")
        request = f"GET /beeuni/tools HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        assert post(daemon, b"{}").status_code == 200
        before = resident_mib(daemon.process.pid)
        sent = 0
        for _ in range(300):
            with connect(daemon) as connection:
                sent += pipeline(daemon, connection, request, 4 * 1024 * 1024)
        after = resident_mib(daemon.process.pid)
        print(f"pipelined without the token: {sent / 2**20:.0f} MiB sent, RSS {before:.1f} -> {after:.1f} MiB")
        assert after - before < FLOOD_GROWTH_MIB
        assert post(daemon, b"{}").status_code == 200


#: a tool module that finds the daemon's listener in /proc/self/net/tcp and floods it with token-less
#: requests pipelined on 100 connections, never reading an answer (only the port it is given: on a
#: shared machine the table lists other daemons too)
FLOOD = """import { readFileSync } from 'node:fs'
import net from 'node:net'
export default {
  description: 'Floods the loopback listeners with pipelined requests.',
  parameters: { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] },
  async execute(args) {
    const ports = readFileSync('/proc/self/net/tcp', 'utf8').split('\\n').slice(1)
      .map((line) => line.trim().split(/\\s+/))
      .filter((fields) => fields[3] === '0A' && fields[1]?.startsWith('0100007F:'))
      .map((fields) => parseInt(fields[1].split(':')[1], 16))
      .filter((port) => port === args.port)
    let sent = 0, connections = 0
    for (const port of ports) for (let i = 0; i < 100; i++) {
      connections++
      sent += await new Promise((resolve) => {
        const blob = Buffer.from(`GET /beeuni/tools HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n`.repeat(2000))
        let written = 0
        const socket = net.connect(port, '127.0.0.1')
        const done = () => { clearTimeout(stalled); socket.destroy(); resolve(written) }
        const stalled = setTimeout(done, 5000)  // not read any more and not closed: the next one
        const pump = () => {
          while (written < 4 * 2 ** 20) { written += blob.length; if (!socket.write(blob)) return }
          done()
        }
        socket.on('connect', pump).on('drain', pump).on('error', done).on('close', done)
      })
    }
    return { ports: ports.length, connections, sent }
  },
}
"""


def test_a_module_flooding_the_daemon_it_finds_does_not_grow_it(tmp_path: Path) -> None:
    """The attack as a module makes it, from its box: the daemon's port from /proc/self/net/tcp,
    pipelined requests without the token on 100 connections, no answer read."""
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "flood.ts").write_text(FLOOD)
    (folder / "beeuni.yaml").write_text("tools:\n  flood: tools/flood.ts\nagents:\n  alice:\n    tools: [flood]\n")
    with running_daemon(folder, tmp_path, "--harness", "experimental", "--timeout", "600") as daemon:
        before = resident_mib(daemon.process.pid)
        answer = daemon.call("flood", {"port": int(daemon.url.rsplit(":", 1)[1])}, agent="alice")
        after = resident_mib(daemon.process.pid)
        assert answer.status_code == 200, answer.text
        flooded = json.loads(answer.json()["output"])
        print(f"a module's flood: {flooded}, RSS {before:.1f} -> {after:.1f} MiB")
        assert flooded["ports"] == 1 and flooded["connections"] == 100 and flooded["sent"] > 64 * 2**20
        assert after - before < FLOOD_GROWTH_MIB
        assert "flood" in daemon.tools("alice")  # the daemon answers on


def test_pipelined_requests_with_the_token_are_read_no_further_until_answers_are_taken(
    project: Path, tmp_path: Path
) -> None:
    """With the token, a connection pipelining without reading is not closed: the daemon stops
    reading it (what it read is held, one read at most) and goes on once the client reads its
    answers, every one in order."""
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        request = head(daemon, tool="echo")
        before = resident_mib(daemon.process.pid)
        with connect(daemon) as connection:
            sent = pipeline(daemon, connection, request + b"{}", 256 * 1024 * 1024)
            after = resident_mib(daemon.process.pid)
            print(f"pipelined with the token: {sent / 2**20:.1f} MiB sent, RSS {before:.1f} -> {after:.1f} MiB")
            assert sent < 256 * 1024 * 1024  # the daemon stopped reading long before
            assert after - before < FLOOD_GROWTH_MIB
            connection.setblocking(True)
            connection.settimeout(60)
            answers = connection.makefile("rb")
            for _ in range(200):  # the answers come, in order, as they are read
                status, body = next_answer(answers)
                assert status == 200 and json.loads(body["output"]) == {"args": {}, "env": {}}
        assert post(daemon, b"{}").status_code == 200


def next_answer(answers: Any) -> tuple[int, Any]:
    """The status and JSON body of the next answer on a connection's buffered reader."""
    status = int(answers.readline().split()[1])
    length = 0
    while (line := answers.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, json.loads(answers.read(length))


def test_pipelined_bodies_chunked_or_declared_are_each_answered_in_order(daemon: Daemon) -> None:
    """Sixty requests with the token, sent at once on one connection before any answer is read:
    the edge feeds their heads in steps and holds what follows the eighth queued one, and each
    body — chunked or of a declared length — reaches its own call."""
    host = daemon.url.removeprefix("http://")
    requests = b""
    for n in range(60):
        body = json.dumps({"n": n, "pad": "x" * 3000}).encode()
        fields = f"POST /beeuni/tools/echo HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {daemon.token}\r\n"
        if n % 2:
            chunks = [body[i : i + 700] for i in range(0, len(body), 700)]
            framed = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"
            requests += f"{fields}Transfer-Encoding: chunked\r\n\r\n".encode() + framed
        else:
            requests += f"{fields}Content-Length: {len(body)}\r\n\r\n".encode() + body
    with connect(daemon) as connection:
        connection.sendall(requests)
        answers = connection.makefile("rb")
        for n in range(60):
            status, answer = next_answer(answers)
            assert status == 200 and json.loads(answer["output"])["args"] == {"n": n, "pad": "x" * 3000}


def test_bodies_without_the_token_are_not_kept(project: Path, tmp_path: Path) -> None:
    """200 connections without the token, each sending a megabyte of a body it declares 64 MiB
    long and staying open: the daemon keeps none of it (the app refuses before it reads a body)."""
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon, contextlib.ExitStack() as stack:
        host = daemon.url.removeprefix("http://")
        request = f"POST /beeuni/tools/count HTTP/1.1\r\nHost: {host}\r\nContent-Length: {64 * 2**20}\r\n\r\n"
        before = resident_mib(daemon.process.pid)
        for _ in range(200):
            connection = stack.enter_context(connect(daemon))
            connection.sendall(request.encode())
            pipeline(daemon, connection, b"x" * 65536, 2**20)
        after = resident_mib(daemon.process.pid)
        print(f"bodies without the token: RSS {before:.1f} -> {after:.1f} MiB")
        assert after - before < FLOOD_GROWTH_MIB / 2
        assert post(daemon, b"{}").status_code == 200


REFUSALS_COUNTED = re.compile(r"^\[daemon\] (\d+) more refusals in the last (\d+) s were counted, not logged .*: (.*)$")


def refusal_lines(daemon: Daemon, kind: str, line_start: str) -> tuple[int, int, int]:
    """Of the daemon's log: the refusal lines of a kind, the summary lines of that kind, and the
    refusals they count."""
    logged = summaries = counted = 0
    for line in daemon.log().splitlines():
        found = REFUSALS_COUNTED.match(line)
        if found and found[3] == kind:
            summaries, counted = summaries + 1, counted + int(found[1])
        elif line.startswith(line_start):
            logged += 1
    return logged, summaries, counted


def test_refusals_grow_the_log_by_a_bounded_number_of_lines_and_each_is_counted(project: Path, tmp_path: Path) -> None:
    """3,000 calls without the token and 300 requests uvicorn cannot parse: at most BURST lines
    of each kind a WINDOW are logged, the others counted in one line when their window ends —
    every refusal is logged or counted."""
    from beeuni.daemon.edge.refusals import BURST, WINDOW

    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        started = time.monotonic()
        with httpx.Client(timeout=60) as client:
            for _ in range(3000):
                assert client.post(f"{daemon.url}/beeuni/tools/count", content=b"{}").status_code == 401
        for _ in range(300):
            with connect(daemon) as connection:
                connection.sendall(b"NOT HTTP\r\n\r\n")
                assert connection.recv(65536).startswith(b"HTTP/1.1 400 ")
        windows = (time.monotonic() - started) // WINDOW + 2  # the windows the floods fell in, at most
        without_token = ("requests without the daemon's token", "[daemon] refused POST /beeuni/tools/count")
        invalid = ("Invalid HTTP request received.", "WARNING:  Invalid HTTP request received.")
        wait_until(lambda: sum(refusal_lines(daemon, *without_token)[::2]) == 3000, "the refusals' summary")
        wait_until(lambda: sum(refusal_lines(daemon, *invalid)[::2]) == 300, "the invalid requests' summary")
        for kind, total in ((without_token, 3000), (invalid, 300)):
            logged, summaries, _ = refusal_lines(daemon, *kind)
            print(f"{kind[0]}: {logged} lines and {summaries} summaries for {total}")
            assert logged <= BURST * windows and 1 <= summaries <= windows
        assert len(daemon.log().splitlines()) < 100
