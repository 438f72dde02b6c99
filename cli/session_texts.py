"""What the rules say about sessions (rules/sessions.rules): the session agent, which providers
count as no configuration, how much of an output the log shows, and every text printed."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..engine.lang.values import text
from ..engine.yaml.located import unwrap
from .shared import UsageError

if TYPE_CHECKING:
    from ..engine.project import ProjectRun


#: what the commands read of the rules (each an optional read-back value or function)
READ = (
    "SESSION_AGENT",
    "SESSION_MESSAGES",
    "PROVIDERS_WITHOUT_CONFIGURATION",
    "SESSION_LOG_LIMITS",
    "OPENCODE_PROJECT_FILES",
)


class SessionTexts:
    def __init__(self, run: ProjectRun) -> None:
        missing = [name for name in READ if name not in run.program["lets"]]
        if "session_model_ok" not in run.program["fns"]:
            missing.append("session_model_ok")
        if missing:
            raise UsageError(f"the rules define no {', '.join(missing)}, which `beeuni sessions` reads")
        self.session_agent = text(run.output("SESSION_AGENT"))
        self._messages = {str(key): text(value) for key, value in run.output("SESSION_MESSAGES").items()}
        self._exempt = [
            (text(entry["id"]), text(entry["source"])) for entry in run.output("PROVIDERS_WITHOUT_CONFIGURATION")
        ]
        limits = run.output("SESSION_LOG_LIMITS")
        self.output_characters = int(limits["characters"])
        self.output_lines = int(limits["lines"])
        self.prompt_characters = int(limits["prompt_characters"])
        self.opencode_project_files = [text(path) for path in run.output("OPENCODE_PROJECT_FILES")]
        settings = run.output("OPENCODE_TURN_SETTINGS") if "OPENCODE_TURN_SETTINGS" in run.program["lets"] else {}
        self.opencode_turn_settings: dict[str, Any] = {str(key): unwrap(value) for key, value in settings.items()}
        shells = run.output("COMMAND_SHELLS") if "COMMAND_SHELLS" in run.program["lets"] else []
        self.command_shells = [text(name) for name in shells]
        # the experimental harness's model providers (rules/turns.rules), plain
        lets = run.program["lets"]
        providers = run.output("MODEL_PROVIDERS") if "MODEL_PROVIDERS" in lets else {}
        packages = run.output("MODEL_PACKAGES") if "MODEL_PACKAGES" in lets else {}
        self.model_providers = {
            str(name): {str(k): None if v is None else text(v) for k, v in entry.items()}
            for name, entry in providers.items()
        }
        self.model_packages = {str(name): text(api) for name, api in packages.items()}

    def message(self, key: str, **blanks: Any) -> str:
        """The template ``key`` with its blanks filled in (a blank not given stays empty)."""
        return self._messages[key].format_map(defaultdict(str, blanks))

    def needs_no_configuration(self, provider: dict[str, Any]) -> bool:
        """Whether opencode offers this provider without the user configuring anything."""
        return (provider.get("id"), provider.get("source")) in self._exempt
