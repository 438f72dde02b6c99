"""The daemon's edges, for real (daemon on 127.0.0.1, Bun): strict input, bounded headers and
per-agent state, the Host allow-list, grants that only narrow, and the files it writes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_helpers import BUN, Daemon, running_daemon

COUNT = """import { appendFileSync } from 'node:fs'
export default {
  description: 'Counts its runs in calls.log, in the repository.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) { appendFileSync(`${context.cwd}/calls.log`, 'ran\\n'); return 'counted' },
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
    log = project / "calls.log"
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
    for size in (1025, 1024 * 1024):
        answer = post(daemon, b"{}", **{header: "a" * size})
        assert (answer.status_code, answer.json()) == (
            431,
            {"error": f"the {header.lower()} header is longer than 1024 bytes"},
        )
        listing = httpx.get(f"{daemon.url}/beeuni/tools", headers={**daemon.headers(), header: "a" * size}, timeout=60)
        assert listing.status_code == 431
    assert post(daemon, b"{}", **{"X-Beeuni-Agent": "a" * 1024}).status_code == 200  # undeclared: the default view


def test_per_agent_state_is_bounded_by_the_manifest(project: Path) -> None:
    """Whatever names the requests carry, the session remembers views only for the agents the
    manifest declares (and one for all undeclared ones)."""
    from beeuni.daemon.session import Session

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
