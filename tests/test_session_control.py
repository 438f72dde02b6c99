"""The runner's control socket (`sessions converge` while a turn runs): only a request with the
key is passed on, and a connection that sends nothing does not hold up the next."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from beeuni.cli import session_control
from beeuni.cli.session_control import ControlServer, ask


def test_a_request_with_the_key_is_answered_one_without_it_is_not() -> None:
    asked: list[str | None] = []

    def converge(release: str | None) -> dict[str, Any]:
        asked.append(release)
        return {"event": "converged", "release": release}

    server = ControlServer(converge)
    try:
        assert ask({**server.address, "key": "not-the-key"}, "abc") is None
        assert ask(server.address, "abc") == {"event": "converged", "release": "abc"}
        assert asked == ["abc"]
    finally:
        server.close()


def test_a_silent_connection_does_not_hold_up_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_control, "REQUEST_LIMIT", 0.2)
    server = ControlServer(lambda release: {"event": "converged", "release": release})
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.connect("\0" + server.address["socket"])  # any process may; it sends nothing
            assert ask(server.address, None) == {"event": "converged", "release": None}
    finally:
        server.close()
