"""A session's messages as `sessions log` shows them, read from opencode's own records
(``{info, messages}``, each message ``{info, parts}``: what ``opencode export`` prints).

Each message keeps its role, agent, model and error; of its parts, the texts the model or the
user wrote and every tool call — its tool, arguments, status (``completed`` or ``error``), its
output or error, and the file holding the whole output when the daemon spilled it.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from ..engine.printable import printable
from .session_texts import SessionTexts

#: how much of the end of opencode's saved output is searched for the daemon's note
NOTE_WINDOW = 64 * 1024


def messages_of(export: dict[str, Any] | None, spilled_note: str) -> list[dict[str, Any]]:
    """The messages of opencode's records, in order, reduced to what the log shows."""
    found = export.get("messages") if isinstance(export, dict) else None
    return [_message(m, spilled_note) for m in found or [] if isinstance(m, dict)]


def _message(message: dict[str, Any], spilled_note: str) -> dict[str, Any]:
    info = message.get("info") or {}
    parts: list[dict[str, Any]] = []
    for part in message.get("parts") or []:
        if part.get("type") == "text" and not part.get("synthetic") and part.get("text"):
            parts.append({"type": "text", "text": str(part["text"])})
        elif part.get("type") == "tool":
            parts.append(_tool_call(part, spilled_note))
    return {
        "role": info.get("role"),
        "agent": info.get("agent"),
        "model": _model_of(info),
        "error": error_message(info["error"]) if info.get("error") else None,
        "parts": parts,
    }


def error_message(error: Any) -> str:
    """An opencode message's error (``{name, data: {message}}``) in words."""
    if isinstance(error, dict):
        data = error.get("data")
        if isinstance(data, dict) and data.get("message"):
            return str(data["message"])
        return str(error.get("name") or json.dumps(error))
    return str(error)


def _model_of(info: dict[str, Any]) -> str | None:
    if info.get("providerID") and info.get("modelID"):
        return f"{info['providerID']}/{info['modelID']}"
    model = info.get("model")
    if isinstance(model, dict) and model.get("providerID") and model.get("modelID"):
        return f"{model['providerID']}/{model['modelID']}"
    return None


def _tool_call(part: dict[str, Any], spilled_note: str) -> dict[str, Any]:
    state = part.get("state") or {}
    status = state.get("status")
    call: dict[str, Any] = {"type": "tool", "tool": part.get("tool"), "arguments": state.get("input"), "status": status}
    if status == "completed":
        output = str(state.get("output", ""))
        call.update(output=output, spilled=_spilled(output, state.get("metadata"), spilled_note))
    elif status == "error":
        call["error"] = str(state.get("error", ""))
    return call


def _spilled(output: str, metadata: Any, note: str) -> str | None:
    """Where the whole output is: the daemon's spill file, named by its note in the output —
    or, when opencode cut the output itself (its own limits; the note may be in the part it cut),
    in the file opencode saved the output it got to, which is then itself the answer when it
    holds no note."""
    found = spill_path(output, note)
    if found is not None or not isinstance(metadata, dict) or not metadata.get("truncated"):
        return found
    saved = metadata.get("outputPath")
    if not isinstance(saved, str) or not saved:
        return None
    try:
        end = file_end(saved, NOTE_WINDOW)
    except OSError:
        return saved
    return spill_path(end, note) or saved


def file_end(path: str, size: int) -> str:
    """The last ``size`` bytes of the file at ``path``, as text."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - size))
        return handle.read().decode("utf-8", "replace")


def spill_path(output: str, note: str) -> str | None:
    """The file the daemon stored a too-large output in, read from the note it appended (the
    rules' ``DAEMON_MESSAGES.spilled``: ``…{size}…{lines}…{path}…``); None for an output whole."""
    before, marker, after = note.partition("{path}")
    lead = before.split("{", 1)[0]
    just_before = before.rsplit("}", 1)[-1]
    if not marker or not lead or lead not in output:
        return None
    tail = output[output.rindex(lead) :]
    if just_before not in tail:
        return None
    path = tail[tail.rindex(just_before) + len(just_before) :].rstrip()
    if after and path.endswith(after.rstrip()):
        path = path[: len(path) - len(after.rstrip())]
    return path or None


def log_lines(record: dict[str, Any], messages: list[dict[str, Any]], texts: SessionTexts) -> list[str]:
    """The log as text: a header, then each message and its parts, outputs shortened."""
    lines = [
        texts.message(
            "log_header",
            id=record["id"],
            status=record["status"],
            agent=printable(str(record.get("agent"))),
            model=printable(str(record.get("model") or texts.message("unknown_model_name"))),
            created=started(record.get("created")),
        )
    ]
    for message in messages:
        if message["role"] == "user":
            for part in message["parts"]:
                if part["type"] == "text":
                    lines.append(texts.message("log_user", detail=_one_line(part["text"])))
            continue
        model = message["model"] or texts.message("unknown_model_name")
        lines.append(texts.message("log_assistant", agent=printable(str(message["agent"])), model=printable(model)))
        for part in message["parts"]:
            lines.extend(_part_lines(part, texts))
        if message["error"]:
            lines.append(texts.message("log_assistant_error", detail=_one_line(message["error"])))
    return lines


def _part_lines(part: dict[str, Any], texts: SessionTexts) -> list[str]:
    if part["type"] == "text":
        return [texts.message("log_text", detail=printable(line)) for line in part["text"].splitlines() or [""]]
    arguments = json.dumps(part["arguments"], ensure_ascii=False) if part["arguments"] is not None else "{}"
    lines = [
        texts.message("log_tool", tool=printable(str(part["tool"])), detail=printable(arguments), status=part["status"])
    ]
    body = part.get("output") if part["status"] == "completed" else part.get("error")
    if body:
        lines.extend(texts.message("log_tool_output", detail=line) for line in shortened(body, texts))
    if part.get("spilled"):
        lines.append(texts.message("log_tool_spilled", path=printable(part["spilled"])))
    return lines


def shortened(body: str, texts: SessionTexts) -> list[str]:
    """The first lines of ``body`` (within the rules' limits), each made visible; a last line
    saying how long the whole was when it was cut."""
    head = body[: texts.output_characters]
    head_lines = head.splitlines()
    shown = [printable(line) for line in head_lines[: texts.output_lines]]
    if len(head) < len(body) or len(head_lines) > texts.output_lines:
        shown.append(texts.message("log_shortened", detail=len(body)))
    return shown


def started(created: Any) -> str:
    """A session's start time (milliseconds since the epoch), in UTC."""
    if not isinstance(created, int):
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(created / 1000))


def _one_line(text: str) -> str:
    return printable(text.strip())
