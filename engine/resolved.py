"""The resolved tool set: what the engine hands to the daemon, as a versioned pydantic model.

Everything here is computed by the rules (``resolve.py`` only reads their outputs into a plain
document of this shape); the daemon validates that document into this model and derives nothing
itself. Its JSON Schema is committed as ``docs/resolved-tool-set.schema.json``
(``beeuni resolve --schema``).

How to read a harness: every distinct set of tools an agent can see is a *view*, listed once.
An agent names its view. A subagent started by a parent sees its own view, except where
``subagent_views`` lists the (parent view, child view) pair: then it sees the listed view.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .resolve import VERSION


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tool(_Model):
    name: str
    kind: str
    source: str


class SessionTool(Tool):
    """A Beeuni or project tool the session gets: ``module`` is its repo-relative module path;
    ``builtin``, for a Beeuni tool served from the platform's own copy, that copy's path in the
    rules folder (``shipped_module(name)`` of the rules). One of the two is null."""

    module: str | None
    builtin: str | None


class View(_Model):
    id: str
    tools: list[str]


class PermissionRule(_Model):
    """One rule of an agent's ``permission``, in opencode's terms: calls of ``permission`` (a
    permission of opencode's vocabulary, a tool's name, or a wildcard over them: ``*``)
    whose input matches ``pattern`` (a command, a path, ...; ``*`` for any) get ``action``
    (``allow``, ``ask`` or ``deny``, the rules' ``PERMISSION_ACTIONS``). The rules are in order:
    the last one that matches a call decides. A tool outside the agent's view stays hidden and
    refused whatever they say."""

    permission: str
    pattern: str
    action: str


class AgentView(_Model):
    name: str
    view: str
    can_delegate: bool
    connectors: list[Tool]
    permission: list[PermissionRule]


class SubagentView(_Model):
    parent_view: str
    child_view: str
    view: str


class Harness(_Model):
    name: str
    harness_tools: list[Tool]
    subagents_limited_by_parent: bool
    views: list[View]
    default_view: str  # what an agent the manifest does not declare sees
    agents: list[AgentView]
    subagent_views: list[SubagentView]


class Diagnostic(_Model):
    rule: str
    severity: Literal["error", "warning", "info"]
    message: str
    file: str
    line: int
    column: int


class ResolvedToolSet(_Model):
    version: Literal[1] = VERSION
    manifest: str
    tools_key: bool
    tools: list[SessionTool]
    removed: list[str]
    harnesses: list[Harness]
    secrets: dict[str, Literal["all"] | list[str]]
    platform_env: list[str]
    messages: dict[str, str]
    diagnostics: list[Diagnostic]
    errors: int
