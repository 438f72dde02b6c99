"""``beeuni validate --modules``: load every declared module in Bun and hand the rules what that
showed (the ``modules`` fact); the checks themselves are rules (tools.rules, ``modules/...``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .shared import bun

if TYPE_CHECKING:
    from ..engine.project import ProjectRun


def add_module_facts(run: ProjectRun, limit: float) -> None:
    """In a git repository the modules are loaded in a copy of the release (what git tracks:
    ``engine/release/linked_copy.py``), so that none loads there that a session could not load; one
    that git does not track is not loaded (the release rules report it)."""
    from ..daemon.host.probe import probe_modules
    from ..daemon.host.schema_offer import uncarried
    from ..engine.release.linked_copy import release_copy

    declared = [(str(entry["name"]), str(entry["module"])) for entry in run.output("modules_to_load")]
    with release_copy(run.repo.root) as copy:
        root = run.repo.root if copy is None else copy
        wanted = [(name, os.path.join(root, module)) for name, module in declared]
        if copy is not None:
            wanted = [(name, path) for name, path in wanted if os.path.isfile(path)]
        facts = probe_modules(bun(run), wanted, root, limit) if wanted else []
    carried = run.output("SCHEMA_CARRIED")
    for fact in facts:
        fact["limit"] = f"{limit:g}"
        fact["uncarried"] = [u for h, c in carried.items() for u in uncarried(fact["parameters"], c, h)]
    run.add_module_facts(facts)
