"""opencode's own server (``opencode serve``) and the few endpoints of its HTTP API a session
needs: the agents and models it knows, a new session, a prompt, an abort, and the session's
records (``GET /session/ID`` and its messages: what ``opencode export`` prints).

The server listens on 127.0.0.1 only, behind HTTP basic auth with a password made for this run
(``OPENCODE_SERVER_PASSWORD``), so that no other local user's process can drive it.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

#: seconds opencode may take to answer its health check after the start (a failure, not a wait)
START_LIMIT = 120.0
#: seconds a quick request (not a prompt) may take
REQUEST_LIMIT = 60.0
USERNAME = "opencode"
#: seconds between two looks for a permission question while a prompt runs
QUESTION_POLL = 0.25


class OpencodeError(Exception):
    """opencode's server did not answer, or answered with an error."""


def find_opencode() -> str | None:
    """opencode from the environment (``BEEUNI_OPENCODE``) or on PATH; None when it is not there."""
    configured = os.environ.get("BEEUNI_OPENCODE")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("opencode")


@dataclass(frozen=True)
class OpencodeServer:
    """How to reach one running ``opencode serve``."""

    url: str
    password: str

    @staticmethod
    def new() -> OpencodeServer:
        """On a port of 127.0.0.1 that nothing listens on now (opencode is told to take it)."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return OpencodeServer(f"http://127.0.0.1:{port}", secrets.token_urlsafe(24))

    def command(self, opencode: str) -> list[str]:
        port = self.url.rsplit(":", 1)[1]
        return [opencode, "serve", "--hostname", "127.0.0.1", "--port", port]

    def environment(self) -> dict[str, str]:
        return {"OPENCODE_SERVER_PASSWORD": self.password, "OPENCODE_SERVER_USERNAME": USERNAME}

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = REQUEST_LIMIT) -> Any:
        """One request; the JSON answer. ``timeout`` None waits as long as the answer takes."""
        data = None if body is None else json.dumps(body).encode()
        credentials = base64.b64encode(f"{USERNAME}:{self.password}".encode()).decode()
        headers = {"authorization": f"Basic {credentials}", "accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as err:
            raise OpencodeError(_error_text(err.code, err.read())) from None
        except (OSError, urllib.error.URLError) as err:
            raise OpencodeError(str(getattr(err, "reason", err))) from None
        return json.loads(raw) if raw.strip() else None

    def wait_ready(self, alive: Any) -> None:
        """Until the health check answers; ``alive()`` false (the process ended) or the limit
        passed is an ``OpencodeError``."""
        deadline = time.monotonic() + START_LIMIT
        while time.monotonic() < deadline:
            if not alive():
                raise OpencodeError("the server exited")
            try:
                if self.request("GET", "/global/health", timeout=5).get("healthy"):
                    return
            except OpencodeError:
                pass
            time.sleep(0.1)
        raise OpencodeError(f"no answer on {self.url} within {START_LIMIT:.0f} seconds")

    def agents(self) -> list[dict[str, Any]]:
        agents: list[dict[str, Any]] = self.request("GET", "/agent")
        return agents

    def configured_model(self) -> str | None:
        model = self.request("GET", "/config").get("model")
        return model if isinstance(model, str) and model else None

    def providers(self) -> list[dict[str, Any]]:
        providers: list[dict[str, Any]] = self.request("GET", "/config/providers")["providers"]
        return providers

    def create_session(self, agent: str) -> dict[str, Any]:
        session: dict[str, Any] = self.request("POST", "/session", {"agent": agent})
        return session

    def prompt(self, session_id: str, agent: str, model: str | None, text: str) -> dict[str, Any]:
        """Send the prompt and wait for the agent's last answer (``{info, parts}``)."""
        body: dict[str, Any] = {"agent": agent, "parts": [{"type": "text", "text": text}]}
        if model is not None:
            provider, model_id = model.split("/", 1)
            body["model"] = {"providerID": provider, "modelID": model_id}
        answered = threading.Event()
        refusing = threading.Thread(target=self._refuse_permission_questions, args=(answered,), daemon=True)
        refusing.start()
        try:
            answer: dict[str, Any] = self.request("POST", f"/session/{session_id}/message", body, timeout=None)
        finally:
            answered.set()
            refusing.join(timeout=REQUEST_LIMIT)
        return answer

    def _refuse_permission_questions(self, answered: threading.Event) -> None:
        """Reject every permission question opencode asks while a prompt runs (an agent's
        `permission` of `ask`): a session has nobody to answer it, and unanswered it would wait
        for ever. `opencode run` does the same; the tool call ends in opencode's rejection, which
        the session's log shows. This server serves one session, so every question is its."""
        while not answered.wait(QUESTION_POLL):
            try:
                pending = self.request("GET", "/permission", timeout=10)
                for question in pending if isinstance(pending, list) else []:
                    if isinstance(question, dict) and isinstance(question.get("id"), str):
                        self.request("POST", f"/permission/{question['id']}/reply", {"reply": "reject"}, timeout=10)
            except OpencodeError:
                continue  # (answered meanwhile, or the server is going away: the prompt says so)

    def abort(self, session_id: str) -> None:
        self.request("POST", f"/session/{session_id}/abort", timeout=10)

    def export(self, session_id: str) -> dict[str, Any]:
        """The session's records as ``opencode export`` prints them: ``{info, messages}``, each
        message ``{info, parts}``."""
        info = self.request("GET", f"/session/{session_id}")
        messages = self.request("GET", f"/session/{session_id}/message")
        return {"info": info, "messages": messages}


def _error_text(status: int, raw: bytes) -> str:
    """What an error answer says: its message when it is opencode's JSON error, else its status."""
    try:
        document = json.loads(raw)
    except ValueError:
        return f"HTTP {status}"
    if isinstance(document, dict):
        data = document.get("data")
        message = data.get("message") if isinstance(data, dict) else document.get("message")
        if isinstance(message, str) and message:
            return message
    return f"HTTP {status}: {raw[:200].decode('utf-8', 'replace')}"
