"""One tool call of a turn, run in the daemon's process: what the model reads back.

A served tool goes through ``Session.call`` — the generation the call starts in, the agent's view,
the argument check against its schema, the agent's secrets, the module host — and its output
through the same contract as an HTTP answer (``output.limit_output``: a large output spilled to a
file, its beginning and the file's path answered), so that the model of either harness reads the
same. A harness tool runs the same way in the same box (``Session.call_harness_tool``). Arguments
the model wrote as text are read as strict JSON, as an HTTP body is.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from ..host.module_host import CallOutcome
from ..host.output import SpillFolder, limit_output
from ..messages import say
from ..serving.session import CallRefused, Session


@dataclass(frozen=True)
class CallResult:
    """What the model reads of a call (``ok`` false: an error, read as its text)."""

    ok: bool
    text: str
    arguments: Any = None  # as the call was read (for the record)


def read_arguments(session: Session, tool: str, raw: str | dict[str, Any] | None) -> Any:
    """The call's arguments, read as the daemon reads an HTTP body; ``CallRefused`` when they
    are not strict JSON."""
    if raw is None or isinstance(raw, dict):
        return raw or {}
    return session.arguments(raw.encode("utf-8"), tool)


async def call_served(
    session: Session, spill: SpillFolder, tool: str, args: Any, agent: str, parent: str | None
) -> CallResult:
    return await _answered(session, spill, tool, args, agent, session.call(tool, args, agent, parent))


async def call_harness_tool(
    session: Session, spill: SpillFolder, tool: str, module: str, args: Any, agent: str
) -> CallResult:
    return await _answered(session, spill, tool, args, agent, session.call_harness_tool(tool, module, args, agent))


async def _answered(
    session: Session, spill: SpillFolder, tool: str, args: Any, agent: str, call: Awaitable[CallOutcome]
) -> CallResult:
    """What the model reads of ``call``: its output within the output contract (spilled when
    large), a refusal's or a failure's text."""
    try:
        outcome = await call
    except CallRefused as refused:
        return CallResult(False, refused.message, args)
    if outcome.ok:
        answer = limit_output(outcome.output, tool, session.messages()["spilled"], spill)
        return CallResult(True, str(answer["output"]), args)
    return CallResult(False, session.failure(outcome, tool, agent)[1], args)


def refusal(texts: dict[str, str], key: str, args: Any = None, **fields: str) -> CallResult:
    return CallResult(False, say(texts, key, **fields), shown_arguments(args))


def shown_arguments(raw: Any) -> Any:
    """The arguments as the record shows them: text the model wrote, read as JSON where it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw
