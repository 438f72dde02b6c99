"""A session's conversation on the experimental harness, kept between turns, and its record.

The conversation is pydantic-ai's message history as JSON (what the model is sent again at the
next turn). The record is what `sessions log` reads, in the shape of opencode's export — each
message ``{info: {role, agent, providerID, modelID, error}, parts}``, a part ``{type: "text",
text}`` or ``{type: "tool", tool, state: {status, input, output | error}}`` — so that one log
serves both harnesses.
"""

from __future__ import annotations

from typing import Any

from .model import ModelChoice


def load_history(document: Any) -> list[Any]:
    """The message history of an earlier turn (``[]`` for none); ``ValueError`` when it is not
    one pydantic-ai wrote."""
    if not document:
        return []
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return list(ModelMessagesTypeAdapter.validate_python(document))


def dump_history(history: list[Any]) -> list[Any]:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    dumped: list[Any] = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    return dumped


class TurnRecord:
    """The messages of one turn, as `sessions log` reads them."""

    def __init__(self, choice: ModelChoice) -> None:
        self.choice = choice
        self.messages: list[dict[str, Any]] = []

    def user(self, agent: str, text: str) -> None:
        info = {"role": "user", "agent": agent}
        self.messages.append({"info": info, "parts": [{"type": "text", "text": text}]})

    def assistant(self, agent: str) -> dict[str, Any]:
        """A new assistant message of ``agent``; its parts are added as the model's answer is run."""
        info = {"role": "assistant", "agent": agent, "providerID": self.choice.provider, "modelID": self.choice.model}
        message: dict[str, Any] = {"info": info, "parts": []}
        self.messages.append(message)
        return message

    @staticmethod
    def text(message: dict[str, Any], text: str) -> None:
        if text:
            message["parts"].append({"type": "text", "text": text})

    @staticmethod
    def tool(message: dict[str, Any], tool: str, args: Any, ok: bool, body: str) -> None:
        state = (
            {"status": "completed", "input": args, "output": body}
            if ok
            else {
                "status": "error",
                "input": args,
                "error": body,
            }
        )
        message["parts"].append({"type": "tool", "tool": tool, "state": state})

    @staticmethod
    def error(message: dict[str, Any], text: str) -> None:
        message["info"]["error"] = {"name": "TurnError", "data": {"message": text}}
