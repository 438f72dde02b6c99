"""The model a turn talks to, from the starter's choice.

pydantic-ai's model clients speak the providers' protocols (OpenAI's chat completions, for every
OpenAI-compatible provider, and Anthropic's messages), and carry the conversation as typed
messages that serialise to JSON and back — what a session keeps between turns. The loop only
calls ``Model.request``: the tool loop, the texts and the permission checks stay ours (an agent
framework's own loop would answer an unknown tool in its own words, where the design document
has "Tool NAME not found"). pydantic-ai is imported when a turn starts, never by a daemon that
only serves HTTP calls.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.models import Model


@dataclass(frozen=True)
class ModelChoice:
    """The model of a turn, as the starter resolved it: ``api`` (the rules' ``MODEL_PROVIDERS``
    API names: ``openai`` or ``anthropic``), the model's id, where to send requests (None: the
    provider's own address) and the key (or the variable that holds it in the daemon's
    environment)."""

    provider: str
    model: str
    api: str
    base_url: str | None = None
    api_key: str | None = None
    key_variable: str | None = None

    @staticmethod
    def of(document: Any) -> ModelChoice:
        """From the starter's request (a JSON object); ``ValueError`` when it is not one."""
        if not isinstance(document, dict):
            raise ValueError("model must be an object")
        fields: dict[str, str | None] = {}
        for name in ("provider", "model", "api", "base_url", "api_key", "key_variable"):
            value = document.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"model.{name} must be a string")
            fields[name] = value
        provider, model, api = fields.pop("provider"), fields.pop("model"), fields.pop("api")
        if not provider or not model or not api:
            raise ValueError("model needs a provider, a model and an api")
        return ModelChoice(provider, model, api, **fields)

    def key(self) -> str | None:
        if self.api_key:
            return self.api_key
        return os.environ.get(self.key_variable) if self.key_variable else None

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"


class UnknownApi(Exception):
    """The choice names an API the loop does not speak."""


def open_model(choice: ModelChoice) -> Model:
    """The pydantic-ai model for ``choice``. Its profile keeps each tool's schema as the module
    declares it: pydantic-ai would otherwise rewrite schemas for a provider's strict mode (drop
    ``$schema``, add ``additionalProperties``), and the model is offered what the module says, on
    both harnesses."""
    from pydantic_ai.profiles import ModelProfile

    as_declared = ModelProfile(json_schema_transformer=None)
    if choice.api == "openai":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(base_url=choice.base_url, api_key=choice.key())
        return OpenAIChatModel(choice.model, provider=provider, profile=as_declared)
    if choice.api == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        provider_a = AnthropicProvider(api_key=choice.key(), base_url=choice.base_url)
        return AnthropicModel(choice.model, provider=provider_a, profile=as_declared)
    raise UnknownApi(choice.api)
