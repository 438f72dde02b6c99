"""One release as a session serves it (``session.py`` makes them, ``changes.py`` compares two)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from ..engine.project import ProjectRun
    from ..engine.release.snapshot import Snapshot
    from ..engine.resolved import Harness, ResolvedToolSet
    from .grants import AgentKey, Grants
    from .host import ModuleHost


@dataclass
class Generation:
    """One release as the session serves it: its resolved tool set and the host that runs its
    modules, with the lookups calls need, made once."""

    snapshot: Snapshot | None  # None: the working tree (`beeuni tools call`)
    run: ProjectRun  # the rules over the release: its texts and functions
    resolved: ResolvedToolSet
    host: ModuleHost
    harness: Harness
    grants: Grants
    modules: dict[str, str]  # tool -> the absolute path of its module
    validators: dict[str, Validator]  # one per served tool: a module whose schema is invalid is not served
    argument_messages: dict[str, Any]
    view_outputs: dict[str, Validator]  # the overrides whose output a web UI view reads
    harness_modules: dict[str, str]  # a harness tool run in the daemon -> its module's key in the host
    harness_validators: dict[str, Validator]  # by that key: one per loaded module with a valid schema
    visible: dict[AgentKey, list[str]] = field(default_factory=dict)
    calls: int = 0  # calls running in this generation

    @property
    def release(self) -> str | None:
        return self.snapshot.commit if self.snapshot is not None else None

    @property
    def root(self) -> str | None:
        """Where the release's copy holds the project's folder (None: the working tree is served)."""
        return self.snapshot.root if self.snapshot is not None else None
