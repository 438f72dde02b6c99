"""A scripted stand-in for the model: a small OpenAI-compatible chat-completions server on
127.0.0.1 that answers each request from a script and records every request it got.

A test says, per conversation, what the model does at each of its turns — call these tools with
these arguments, or answer this text — and reads afterwards exactly what the harness sent: the
messages (tool results included) and the tools it offered, with their schemas.

A conversation is found by a *key*: the first script key contained in the request's first user
message (the prompt of ``opencode run``, or the ``prompt`` a ``task`` call gave a subagent). Its
turn is the number of assistant messages already in the request, so the server keeps no state
between requests and a retried request gets the same answer. A request no script matches (a
title or summary the harness asks for on its own) is answered with ``FALLBACK_TEXT``.

    with scripted_model({"case-a": [call("echo", {"text": "hi"}), say("done")]}) as model:
        ... run opencode against model.base_url ...
        model.conversation("case-a")[0].tools["echo"]   # the schema offered for `echo`
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from platform_standin import JSONHandler, serving

FALLBACK_TEXT = "ok"
MODEL_ID = "scripted"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] | str  # a string is sent as written (arguments that are not valid JSON)


@dataclass(frozen=True)
class Turn:
    """One answer of the model: tool calls (answered by the harness, then the next turn), or a
    final text."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""


def call(name: str, arguments: dict[str, Any] | str, *more: tuple[str, dict[str, Any] | str]) -> Turn:
    """A turn that calls ``name`` (and the ``more`` tools, in the same turn) with these arguments."""
    return Turn(calls=(ToolCall(name, arguments), *(ToolCall(n, a) for n, a in more)))


def say(text: str) -> Turn:
    return Turn(text=text)


@dataclass
class Request:
    """One chat-completions request as the harness sent it; when it arrived and when its answer
    was sent (``time.monotonic``, for benchmarks: tests assert no timings)."""

    body: dict[str, Any]
    received: float = field(default_factory=time.monotonic)
    answered: float = 0.0

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body.get("messages", [])
        return messages

    @property
    def tools(self) -> dict[str, dict[str, Any]]:
        """The offered tools by name: each one's JSON Schema of parameters."""
        offered = {}
        for tool in self.body.get("tools") or []:
            function = tool.get("function", {})
            offered[function["name"]] = function.get("parameters", {})
        return offered

    @property
    def descriptions(self) -> dict[str, str]:
        return {t["function"]["name"]: t["function"].get("description", "") for t in self.body.get("tools") or []}

    def first_user_text(self) -> str:
        for message in self.messages:
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    def turn(self) -> int:
        return sum(1 for message in self.messages if message.get("role") == "assistant")

    def tool_results(self) -> dict[str, str]:
        """The harness's answers to the model's tool calls so far, by call id."""
        return {m["tool_call_id"]: _text_of(m.get("content")) for m in self.messages if m.get("role") == "tool"}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


@dataclass
class ScriptedModel:
    script: dict[str, list[Turn]]
    requests: list[Request] = field(default_factory=list)
    base_url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key_of(self, request: Request) -> str | None:
        prompt = request.first_user_text()
        return next((key for key in self.script if key in prompt), None)

    def answer(self, request: Request) -> tuple[str | None, Turn]:
        with self._lock:
            self.requests.append(request)
        key = self.key_of(request)
        if key is None:
            return None, say(FALLBACK_TEXT)
        turns = self.script[key]
        index = request.turn()
        return key, turns[index] if index < len(turns) else say(FALLBACK_TEXT)

    def conversation(self, key: str) -> list[Request]:
        """The requests of one scripted conversation, in the order they came."""
        with self._lock:
            return [request for request in self.requests if self.key_of(request) == key]

    def call_id(self, key: str, turn: int, index: int = 0) -> str:
        return _call_id(key, turn, index)

    def result_of(self, key: str, turn: int, index: int = 0) -> str:
        """What the harness answered the model for the ``index``-th tool call of ``turn``."""
        wanted = _call_id(key, turn, index)
        for request in self.conversation(key):
            results = request.tool_results()
            if wanted in results:
                return results[wanted]
        raise AssertionError(f"no result for call {wanted}; requests: {len(self.conversation(key))}")

    def config(self) -> dict[str, Any]:
        """The opencode provider entry that sends every request of a session here."""
        return {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted model",
            "options": {"baseURL": self.base_url, "apiKey": "scripted"},
            "models": {MODEL_ID: {"name": "Scripted", "tool_call": True, "limit": {"context": 200000, "output": 8192}}},
        }


def _call_id(key: str, turn: int, index: int) -> str:
    digest = "".join(ch if ch.isalnum() else "_" for ch in key)
    return f"call_{digest}_{turn}_{index}"


def _chunks(key: str | None, turn_index: int, turn: Turn) -> Iterator[dict[str, Any]]:
    """The streamed chunks of one answer, as OpenAI's chat-completions API sends them."""
    base = {"id": f"chatcmpl-{turn_index}", "object": "chat.completion.chunk", "created": 0, "model": MODEL_ID}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    yield chunk({"role": "assistant", "content": ""})
    if turn.calls:
        for index, tool_call in enumerate(turn.calls):
            arguments = tool_call.arguments
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            function = {"name": tool_call.name, "arguments": text}
            call_id = _call_id(key or "", turn_index, index)
            yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]})
        finish = "tool_calls"
    else:
        yield chunk({"content": turn.text})
        finish = "stop"
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    yield chunk({}, finish, usage=usage)


class _Handler(JSONHandler):
    scripted: ScriptedModel  # the model it answers for (``scripted_model`` sets it)
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no such path {self.path}"}})
            return
        request = Request(body)
        key, turn = self.scripted.answer(request)
        chunks = list(_chunks(key, request.turn(), turn))
        if not body.get("stream"):
            self._json(200, _completion(chunks))
            request.answered = time.monotonic()
            return
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        request.answered = time.monotonic()


def _completion(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The same answer, not streamed."""
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    finish = "stop"
    for chunk in chunks:
        choice = chunk["choices"][0]
        delta = choice["delta"]
        message["content"] += delta.get("content") or ""
        if "tool_calls" in delta:
            message.setdefault("tool_calls", []).extend(
                {key: value for key, value in c.items() if key != "index"} for c in delta["tool_calls"]
            )
        finish = choice["finish_reason"] or finish
    return {
        "id": chunks[0]["id"],
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@contextmanager
def scripted_model(script: dict[str, list[Turn]]) -> Iterator[ScriptedModel]:
    """Serve ``script`` on an ephemeral 127.0.0.1 port for the duration of the block."""
    model = ScriptedModel(script)

    class Handler(_Handler):
        scripted = model

    with serving(Handler) as url:
        model.base_url = f"{url}/v1"
        yield model
