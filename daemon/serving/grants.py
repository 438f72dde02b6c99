"""What a tool set grants each agent: the tool names its view holds, and its secrets.

An agent the manifest does not declare sees the harness's default view and gets no secrets. A
session's grants change only when it converges on another release, which may widen them: it was
merged, as every release is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ...engine.resolved import Harness

SecretGrant = Literal["all"] | list[str]
#: an agent as grants know it: its name when a tool set declares it, else ``None`` (every
#: undeclared agent sees the default view); with the parent that started it, if any
AgentKey = tuple[str | None, str | None]


class Grants:
    def __init__(self, harness: Harness, secrets: dict[str, SecretGrant]) -> None:
        self.agents = {agent.name: agent for agent in harness.agents}
        self.views = {view.id: view.tools for view in harness.views}
        self.subagent_views = {(p.parent_view, p.child_view): p.view for p in harness.subagent_views}
        self.default_view = harness.default_view
        self.secrets = secrets

    def view(self, agent: str, parent: str | None) -> list[str] | None:
        """The names ``agent`` sees, in view order (as ``parent``'s subagent, if given); ``None``
        when ``parent`` is not declared or cannot start subagents."""
        view = self.agents[agent].view if agent in self.agents else self.default_view
        if parent is not None:
            starter = self.agents.get(parent)
            if starter is None or not starter.can_delegate:
                return None
            view = self.subagent_views.get((starter.view, view), view)
        return self.views[view]

    def secrets_of(self, agent: str) -> SecretGrant:
        return self.secrets.get(agent, [])
