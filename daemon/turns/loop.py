"""The turn loop: the model is asked with the conversation and the agent's offered tools, every
tool call it makes is run, and it is asked again, until it answers without a call.

A call of a tool the agent is not offered — hidden by its list, not loaded, or no tool at all —
answers the rules' ``tool_not_found`` ("Tool NAME not found"), as the design document says of
this harness. The rules' ``DELEGATION_TOOL`` (``task``) starts a subagent: a turn of its own, with
a fresh conversation, offered what both its list and its starter's allow; its final answer is the
call's output. The calls of one model answer run side by side, as opencode runs them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...engine.resolved import PermissionRule
from ..host.output import SpillFolder
from ..messages import say
from ..serving.session import CallRefused, Session
from .calls import CallResult, call_harness_tool, call_served, read_arguments, refusal, shown_arguments
from .model import ModelChoice, open_model
from .offer import Offered, offered_tools
from .permission import ALLOW, decision
from .record import TurnRecord, dump_history, load_history

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ToolCallPart
    from pydantic_ai.models import Model

    from ..serving.generation import Generation

#: an event for whoever drives the turn (``control.py`` sends it on the starter's channel)
Emit = Callable[[dict[str, Any]], None]


@dataclass
class TurnEnd:
    """How a turn ended: ``completed`` (``answer`` the model's last text) or ``error``."""

    status: str
    answer: str = ""
    error: str = ""
    history: list[Any] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Rules:
    """What the loop reads of the rules, once a turn."""

    texts: dict[str, str]
    delegation: str
    agent_argument: str
    prompt_argument: str
    requests: int
    depth: int
    permission_of_tool: dict[str, str]
    permission_input: dict[str, str]


#: what the loop reads of the rules (rules/turns.rules), each optional for a rule set
READ = (
    "TURN_MESSAGES",
    "DELEGATION_TOOL",
    "DELEGATION_ARGUMENTS",
    "TURN_LIMITS",
    "PERMISSION_INPUT",
    "PERMISSION_OF_TOOL",
)


class TurnLoop:
    def __init__(self, session: Session, spill: SpillFolder, choice: ModelChoice, emit: Emit) -> None:
        self.session = session
        self.spill = spill
        self.choice = choice
        self.emit = emit
        self._model: Model | None = None

    async def turn(self, agent: str, prompt: str, history: Any) -> TurnEnd:
        """One turn of ``agent`` on ``prompt``, continuing ``history`` (an earlier turn's)."""
        rules = self._rules()
        record = TurnRecord(self.choice)
        try:
            messages = load_history(history)
        except ValueError as err:
            return TurnEnd("error", error=say(rules.texts, "model_failed", detail=f"history: {err}"))
        self._model = open_model(self.choice)
        top = offered_tools(self._generation(), agent, None, None) or {}
        try:
            answer = await self._agent_turn(rules, agent, None, prompt, messages, top, 0, record)
        except _ModelFailed as failed:
            return TurnEnd("error", error=failed.text, history=dump_history(messages), messages=record.messages)
        return TurnEnd("completed", answer, history=dump_history(messages), messages=record.messages)

    def _generation(self) -> Generation:
        assert self.session.current is not None
        return self.session.current

    def _rules(self) -> _Rules:
        run = self._generation().run
        arguments = run.output("DELEGATION_ARGUMENTS")
        limits = run.output("TURN_LIMITS")
        return _Rules(
            texts=run.output("TURN_MESSAGES"),
            delegation=run.output("DELEGATION_TOOL"),
            agent_argument=arguments["agent"],
            prompt_argument=arguments["prompt"],
            requests=limits["requests"],
            depth=limits["subagent_depth"],
            permission_of_tool={str(k): str(v) for k, v in run.output("PERMISSION_OF_TOOL").items()},
            permission_input={str(k): str(v) for k, v in run.output("PERMISSION_INPUT").items()},
        )

    async def _agent_turn(
        self,
        rules: _Rules,
        agent: str,
        parent: str | None,
        prompt: str,
        history: list[ModelMessage],
        offered: dict[str, Offered],
        depth: int,
        record: TurnRecord | None,
    ) -> str:
        """Run ``agent``'s turn to its final answer, appending to ``history`` (and ``record``, the
        session agent's: a subagent's own messages are its conversation, not the session's)."""
        from pydantic_ai.messages import ModelRequest, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        assert self._model is not None
        tools = [
            ToolDefinition(name=t.name, description=t.description, parameters_json_schema=t.parameters, strict=False)
            for t in offered.values()
        ]
        parameters = ModelRequestParameters(function_tools=tools)
        history.append(ModelRequest(parts=[UserPromptPart(prompt)]))
        if record is not None:
            record.user(agent, prompt)
        for _ in range(rules.requests):
            message = record.assistant(agent) if record is not None else None
            try:
                response = await self._model.request(history, None, parameters)
            except Exception as err:  # the provider's client says why: an address, a key, a status
                text = say(rules.texts, "model_failed", detail=f"{type(err).__name__}: {err}")
                if message is not None:
                    TurnRecord.error(message, text)
                raise _ModelFailed(text) from None
            history.append(response)
            text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
            calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
            if message is not None:
                TurnRecord.text(message, text)
            if not calls:
                return text
            results = await asyncio.gather(*(self._call(rules, agent, parent, call, offered, depth) for call in calls))
            returns = []
            for call, result in zip(calls, results, strict=True):
                if message is not None:
                    TurnRecord.tool(message, call.tool_name, result.arguments, result.ok, result.text)
                self.emit({"event": "tool", "agent": agent, "tool": call.tool_name, "ok": result.ok})
                returns.append(ToolReturnPart(call.tool_name, result.text, tool_call_id=call.tool_call_id))
            history.append(ModelRequest(parts=returns))
        text = say(rules.texts, "too_many_requests", detail=str(rules.requests))
        if record is not None and record.messages:
            TurnRecord.error(record.messages[-1], text)
        raise _ModelFailed(text)

    async def _call(
        self, rules: _Rules, agent: str, parent: str | None, call: ToolCallPart, offered: dict[str, Offered], depth: int
    ) -> CallResult:
        name = call.tool_name
        tool = offered.get(name)
        if tool is None:  # hidden, not loaded, or no tool at all: the model reads the same
            return refusal(rules.texts, "tool_not_found", call.args, tool=name)
        try:
            args = read_arguments(self.session, name, call.args)
        except CallRefused as refused:
            return CallResult(False, refused.message, shown_arguments(call.args))
        action, matched = decision(
            self._permission(agent), name, args, rules.permission_of_tool, rules.permission_input
        )
        if action != ALLOW:  # deny, or ask — and nobody can be asked in a turn
            detail = "" if matched == "*" else f" ({matched})"
            key = "permission_ask" if action == "ask" else "permission_denied"
            return refusal(rules.texts, key, args, agent=agent, tool=name, detail=detail)
        if name == rules.delegation:
            return await self._delegate(rules, agent, args, offered, depth)
        if tool.module is not None:
            return await call_harness_tool(self.session, self.spill, name, tool.module, args, agent)
        return await call_served(self.session, self.spill, name, args, agent, parent)

    def _permission(self, agent: str) -> list[PermissionRule]:
        """The agent's permission rules on this harness (none for an agent the manifest does not
        declare)."""
        declared = self._generation().grants.agents.get(agent)
        return declared.permission if declared is not None else []

    async def _delegate(
        self, rules: _Rules, agent: str, args: Any, offered: dict[str, Offered], depth: int
    ) -> CallResult:
        """A subagent's turn: its final answer is the call's output."""
        child = args.get(rules.agent_argument) if isinstance(args, dict) else None
        prompt = args.get(rules.prompt_argument) if isinstance(args, dict) else None
        generation = self._generation()
        agents = generation.grants.agents
        if not isinstance(child, str) or child not in agents:
            names = ", ".join(sorted(agents)) or "none"
            return refusal(rules.texts, "unknown_subagent", args, agent=str(child), detail=names)
        if depth + 1 > rules.depth:
            return refusal(rules.texts, "subagent_too_deep", args, agent=child, detail=str(rules.depth))
        tools = offered_tools(generation, child, agent, offered)
        if tools is None:
            return CallResult(False, say(generation.resolved.messages, "not_delegating", agent=agent), args)
        answer = await self._agent_turn(rules, child, agent, str(prompt or ""), [], tools, depth + 1, None)
        return CallResult(True, answer, args)


class _ModelFailed(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
