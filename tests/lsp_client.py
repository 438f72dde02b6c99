"""A small LSP client for the tests: JSON-RPC over a child process's standard input and output,
with the framing of the Language Server Protocol (``Content-Length`` headers)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from conftest import BEEUNI

WAIT = 60.0  # seconds for any one answer: bounded, never a hang


class LspClient:
    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [BEEUNI, "lsp", *args],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.versions: dict[str, int] = {}

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                header = stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        answer = self.wait_for(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in answer, answer
        return answer.get("result")

    def wait_for(self, wanted: Any) -> dict[str, Any]:
        """The next message that ``wanted`` accepts (others are dropped); answers the server's
        own requests (``workspace/applyEdit`` and the like) with null."""
        while True:
            message = self.messages.get(timeout=WAIT)
            if wanted(message):
                return message
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The next diagnostics published for ``uri``."""
        message = self.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        found: list[dict[str, Any]] = message["params"]["diagnostics"]
        return found

    def initialize(self, root: Path) -> dict[str, Any]:
        result: dict[str, Any] = self.request(
            "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        """Replace the whole buffer (a change with no range), unsaved."""
        self.versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self.versions[uri]}, "contentChanges": [{"text": text}]},
        )

    def edit(self, uri: str, range_: dict[str, Any], text: str) -> None:
        """Change part of the buffer, as an editor sends a keystroke."""
        self.versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": range_, "text": text}],
            },
        )

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
