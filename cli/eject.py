"""``beeuni tools eject NAME``: make the project's own copy of a Beeuni tool.

The rules say where the copy goes, which value means "the Beeuni tool" and every text the
command prints (``eject_plan``, ``eject_refusal``, ``eject_summary`` in tools.rules). This module
checks the preconditions, then writes the module and edits the manifest — each atomically, and
the module is taken back if the manifest cannot be written. A refusal changes nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..engine.project import open_project, rules_folder
from ..engine.shipped import shipped_module_file
from .tool_files import module_command, writable, write_module_and_manifest

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun
    from .tool_files import Refuse


def eject(name: str, path: str, rules: str | None, force: bool) -> int:
    run = open_project(path, rules)
    return module_command(run, "eject", name, lambda refuse: _eject(run, rules, name, force, refuse))


def _eject(run: ProjectRun, rules: str | None, name: str, force: bool, refuse: Refuse) -> tuple[str, str]:
    if name not in run.output("BEEUNI_TOOLS"):
        raise refuse("not-beeuni", "")
    if run.merged.problems:
        raise refuse("broken", run.manifest)
    plan: dict[str, Any] = run.call("eject_plan", name)
    module_path = str(plan["path"])
    module_target = writable(run.repo, module_path, refuse)
    if os.path.lexists(module_target) and not force:
        raise refuse("exists", module_path)
    if os.path.isdir(module_target):
        raise refuse("is-folder", module_path)
    declaration = plan["declaration"]
    current = declaration["value"] if declaration is not None else None
    if isinstance(current, str) and current not in (plan["beeuni_value"], module_path) and not force:
        raise refuse("points-elsewhere", current)

    # the module ships in the rules folder, where `shipped_module(name)` of the rules places it
    with open(shipped_module_file(*rules_folder(rules), run.program, plan["shipped"]), "rb") as handle:
        source = handle.read()
    return write_module_and_manifest(run, plan, name, (module_path, module_target), source, refuse)
