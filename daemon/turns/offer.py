"""What a turn offers an agent's model: its view on the experimental harness — the served tools and
the harness's own — each with the description and schema its module declares, in view order.

A subagent is offered what both its own list and the list of the agent that started it allow
(the rules' subagent views); one started by a subagent, what its starter was offered at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..generation import Generation


@dataclass(frozen=True)
class Offered:
    """A tool as the model is offered it; ``module`` is the module host's key of the harness
    tool's module, None for a served tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    module: str | None


def offered_tools(
    generation: Generation, agent: str, parent: str | None, within: dict[str, Offered] | None
) -> dict[str, Offered] | None:
    """The tools offered to ``agent`` (``parent``'s subagent, if given), limited to ``within`` when
    given; None when ``parent`` cannot start subagents."""
    names = generation.grants.view(agent, parent)
    if names is None:
        return None
    loaded = generation.host.loaded
    found: dict[str, Offered] = {}
    for name in names:
        if within is not None and name not in within:
            continue
        module = generation.harness_modules.get(name)
        if name in generation.validators:
            key = None
        elif module is not None and module in generation.harness_validators:
            key = module
        else:
            continue  # not loaded: offered nowhere
        declared = loaded[key or name]
        found[name] = Offered(name, str(declared.get("description", "")), declared["parameters"], key)
    return found
