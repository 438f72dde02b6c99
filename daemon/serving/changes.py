"""What a convergence changed: the tools served and what each agent sees and is granted.

The daemon logs it (the rules' ``release_changes`` words it) and hands it to its starter, who
restarts the harness when a tool changed: the standard harness's plugin and the experimental
harness's runtime learn the tools when they start.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .generation import Generation

#: how many characters of a commit id the log and the starter's events give
SHORT = 12


@dataclass
class AgentChange:
    agent: str  # `*` for every agent the manifest does not declare
    gained: list[str]
    lost: list[str]
    secrets_before: Any  # "all" or names
    secrets_after: Any


@dataclass
class Changes:
    release: str | None  # the commit now served (None: a copy of a folder)
    was: str | None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # another module, description or parameters
    agents: list[AgentChange] = field(default_factory=list)

    @property
    def tools_changed(self) -> bool:
        """Whether a harness must restart to offer the tools now served."""
        return bool(self.added or self.removed or self.changed)

    def document(self) -> dict[str, Any]:
        """As the rules and the starter's event take it: commits shortened."""
        return {**asdict(self), "release": _short(self.release), "was": _short(self.was)}


def _short(commit: str | None) -> str | None:
    return commit[:SHORT] if commit is not None else None


def _served(generation: Generation) -> dict[str, tuple[Any, ...]]:
    """Each served tool as a convergence compares it: what its files hold, its description and
    its parameters."""
    loaded = generation.host.loaded
    digests = _digests(generation)
    return {
        name: (digests.get(name), loaded[name]["description"], loaded[name]["parameters"])
        for name in generation.validators
    }


def _digests(generation: Generation) -> dict[str, str]:
    """A digest of the files each served tool runs: its module and, for a module of the release,
    every file it imports relatively, followed as ``validate`` reads them (statically)."""
    files = {name: [path] for name, path in generation.modules.items()}
    snapshot = generation.snapshot
    if snapshot is not None:
        from ...engine.lang.builtins import Observer
        from ...engine.paths import Repository
        from ...engine.release.facts import release_fact
        from ...engine.release.git_index import Release

        root = snapshot.root
        released = [{"name": t.name, "module": t.module} for t in generation.resolved.tools if t.module]
        release = Release.given(root, sorted(snapshot.paths), [])
        resolution = generation.run.output("IMPORT_RESOLUTION")
        fact = release_fact(release, Observer(Repository(root)), released, resolution)
        for item in fact["imports"]:
            if item["relative"] and item["target"] is not None and item["name"] in files:
                files[item["name"]].append(os.path.join(root, item["target"]))
    found = {}
    for name, paths in files.items():
        digest = hashlib.sha256()
        for path in sorted(set(paths)):
            shown = os.path.relpath(path, snapshot.folder) if snapshot is not None else path
            try:
                with open(path, "rb") as handle:
                    digest.update(shown.encode() + b"\0" + handle.read())
            except OSError:
                continue
        found[name] = digest.hexdigest()
    return found


def changes_between(old: Generation, new: Generation) -> Changes:
    before, after = _served(old), _served(new)
    changes = Changes(new.release, old.release)
    changes.added = sorted(set(after) - set(before))
    changes.removed = sorted(set(before) - set(after))
    changes.changed = sorted(name for name in set(before) & set(after) if before[name] != after[name])
    # "": every agent the manifest does not declare (no declared agent has an empty name)
    for agent in [*sorted(set(old.grants.agents) | set(new.grants.agents)), ""]:
        seen_before = [tool for tool in old.grants.view(agent, None) or () if tool in before]
        seen_after = [tool for tool in new.grants.view(agent, None) or () if tool in after]
        change = AgentChange(
            agent or "*",
            [tool for tool in seen_after if tool not in seen_before],
            [tool for tool in seen_before if tool not in seen_after],
            old.grants.secrets_of(agent),
            new.grants.secrets_of(agent),
        )
        if change.gained or change.lost or change.secrets_before != change.secrets_after:
            changes.agents.append(change)
    return changes
