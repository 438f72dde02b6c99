"""One project checked against one rule set: the engine's entry point.

    run = open_project("path/to/repo")        # or the manifest file itself
    run.diagnostics()                         # sorted Diagnostic list
    run.output("session_tools")               # a value the rules define

The engine reads these names of the rules — the contract between the two, documented in
``docs/rules-language.md`` — and checks when the rules are loaded that they are all defined.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING

from .lang import RulesError, load_program
from .lang.builtins import Observer
from .lang.evaluator import Diagnostic, Evaluation
from .manifest import load_manifest
from .paths import Repository

if TYPE_CHECKING:
    from typing import Any

MANIFEST_NAME = "beeuni.yaml"
FACT_NAMES = frozenset({"manifest", "files", "sections", "section_keys", "load_errors"})
#: values the rules must define
REQUIRED_NAMES = (
    "tools_key",
    "session_tools",
    "removed_beeuni_tools",
    "tools_ls_footer",
    "HARNESSES",
    "DEFAULT_HARNESS",
    "agent_names",
    "BEEUNI_TOOLS",
    "PLATFORM_ENV",
    "PROVIDER_KEYS",
    "DAEMON_MESSAGES",
)
#: functions the rules must define, with their number of parameters
REQUIRED_FUNCTIONS = {
    "agent_tools": 2,
    "subagent_tools": 3,
    "delegation_problem": 2,
    "agent_secrets": 1,
    "resolved_harness": 1,
    "eject_plan": 1,
    "eject_refusal": 3,
    "eject_summary": 3,
    "secret_name_problem": 1,
}


class ManifestNotFound(Exception):
    def __init__(self, looked_at: str) -> None:
        super().__init__(f"no manifest found: {looked_at} does not exist")
        self.looked_at = looked_at


def shipped_rules() -> str:
    from .. import rules

    return os.path.dirname(rules.__file__)


def locate(path: str | os.PathLike[str] = ".") -> tuple[Repository, str]:
    """The repository and the manifest's repo-relative path for a folder or a manifest file."""
    candidate = os.fspath(path)
    manifest = os.path.join(candidate, MANIFEST_NAME) if os.path.isdir(candidate) else candidate
    if not os.path.isfile(manifest):
        raise ManifestNotFound(manifest)
    return Repository(os.path.dirname(os.path.abspath(manifest))), os.path.basename(manifest)


class ProjectRun:
    def __init__(self, repo: Repository, manifest: str, program: dict[str, Any]) -> None:
        self.repo = repo
        self.manifest = manifest
        self.program = program
        self.merged = load_manifest(repo, manifest)
        self.evaluation = Evaluation(program, self.merged.facts(), Observer(repo), manifest)

    @cached_property
    def _diagnostics(self) -> list[Diagnostic]:
        return self.evaluation.diagnostics()

    def diagnostics(self) -> list[Diagnostic]:
        return self._diagnostics

    def count(self, severity: str) -> int:
        return sum(1 for diagnostic in self._diagnostics if diagnostic.severity == severity)

    def output(self, name: str) -> Any:
        return self.evaluation.get(name)

    def call(self, name: str, *args: Any) -> Any:
        return self.evaluation.call(name, list(args))


def load_rules(rules_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    folder = os.fspath(rules_dir) if rules_dir is not None else shipped_rules()
    # The shipped rules are named as they stand in beeuni's source tree, wherever installed.
    shown = os.fspath(rules_dir) if rules_dir is not None else "rules"
    program = load_program(folder, FACT_NAMES, display=shown)
    missing = [name for name in REQUIRED_NAMES if name not in program["lets"]]
    if missing:
        raise RulesError(shown, 1, 1, f"the rules define no `{missing[0]}`, which the engine reads")
    for name, arity in REQUIRED_FUNCTIONS.items():
        if program["fns"].get(name) != arity:
            raise RulesError(shown, 1, 1, f"the rules define no function `{name}` of {arity} parameters")
    return program


def open_project(path: str | os.PathLike[str] = ".", rules_dir: str | os.PathLike[str] | None = None) -> ProjectRun:
    repo, manifest = locate(path)
    return ProjectRun(repo, manifest, load_rules(rules_dir))
