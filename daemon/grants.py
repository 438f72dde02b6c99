"""What a tool set grants each agent — the tool names its view holds and its secrets — and the
rule that grants never widen inside a session.

A reload may narrow what an agent gets; what the daemon grants never exceeds what it granted at
its start (the *ceiling*: the first tool set's grants). Precisely, for an agent (an undeclared
one counts as the harness's default view, and no secrets):

- tools: the names it sees now, kept only where it saw them at the start (as the same parent's
  subagent, for a subagent); a tool new in the session is granted to nobody until the next start;
- secrets: its grant now, cut to its grant at the start, where ``all`` holds every name.

A tool's module is no grant: a changed module file, or a tool declared with another module
under the same name, is an ordinary reload. A wider grant is logged once, at the reload that
brings it, and takes effect when the daemon next starts.
"""

from __future__ import annotations

from typing import Literal

from ..engine.resolved import Harness, ResolvedToolSet

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
        self._sets: dict[AgentKey, frozenset[str]] = {}  # bounded by the declared names

    @classmethod
    def of(cls, resolved: ResolvedToolSet, harness: Harness) -> Grants:
        return cls(harness, resolved.secrets)

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

    def tool_set(self, agent: str, parent: str | None) -> frozenset[str]:
        # an undeclared parent cannot start subagents: its key is apart from "no parent"
        key = (agent if agent in self.agents else None, parent if parent is None or parent in self.agents else "")
        found = self._sets.get(key)
        if found is None:
            found = self._sets[key] = frozenset(self.view(agent, parent) or ())
        return found

    def secrets_of(self, agent: str) -> SecretGrant:
        return self.secrets.get(agent, [])


def narrowed(grant: SecretGrant, ceiling: SecretGrant) -> SecretGrant:
    """``grant`` cut to ``ceiling``."""
    if ceiling == "all":
        return grant
    if grant == "all":
        return ceiling
    allowed = set(ceiling)
    return [name for name in grant if name in allowed]


def widenings(grants: Grants, ceiling: Grants) -> list[str]:
    """For each agent ``grants`` declares (and ``*``, the undeclared ones), what it grants beyond
    ``ceiling``: ``NAME: tools a, b; secrets X`` (or ``secrets all``), sorted."""
    found = []
    for agent in [*sorted(grants.agents), None]:
        name = agent if agent is not None else ""  # no declared agent has an empty name
        parts = []
        tools = [tool for tool in grants.view(name, None) or () if tool not in ceiling.tool_set(name, None)]
        if tools:
            parts.append("tools " + ", ".join(tools))
        grant, cap = grants.secrets_of(name), ceiling.secrets_of(name)
        wider = narrowed(grant, cap)
        if grant != wider:
            extra = "all" if grant == "all" else ", ".join(secret for secret in grant if secret not in wider)
            parts.append("secrets " + extra)
        if parts:
            found.append(f"{agent if agent is not None else '*'}: {'; '.join(parts)}")
    return found
