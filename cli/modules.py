"""``beeuni validate --modules``: load every declared module in Bun and hand the rules what that
showed (the ``modules`` fact); the checks themselves are rules (tools.rules, ``modules/...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .shared import bun

if TYPE_CHECKING:
    from ..engine.project import ProjectRun


def add_module_facts(run: ProjectRun, limit: float) -> None:
    from ..daemon.carried import uncarried
    from ..daemon.probe import probe_modules

    wanted = [(str(entry["name"]), run.repo.absolute(str(entry["module"]))) for entry in run.output("modules_to_load")]
    facts = probe_modules(bun(run), wanted, run.repo.root, limit)
    carried = run.output("SCHEMA_CARRIED")
    for fact in facts:
        fact["limit"] = f"{limit:g}"
        fact["uncarried"] = [u for h, c in carried.items() for u in uncarried(fact["parameters"], c, h)]
    run.add_module_facts(facts)
