"""``beeuni tools new NAME [--path FILE]``: write a project tool's module skeleton and declare it.

The rules give the plan, the skeleton's text, every refusal and the summary (``new_tool_plan``,
``new_tool_source``, ``new_tool_refusal``, ``new_tool_summary`` in tools.rules); the files are
written as ``tools eject`` writes them — the same byte-exact manifest edit, the same refusals of
a path that leads out of the repository, and a refusal changes nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..engine.lang.values import text
from ..engine.project import open_project
from .tool_files import module_command, writable, write_module_and_manifest

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun
    from .tool_files import Refuse


def new_tool(name: str, path: str, rules: str | None, module: str | None) -> int:
    run = open_project(path, rules)
    return module_command(run, "new_tool", name, lambda refuse: _new_tool(run, name, module, refuse))


def _new_tool(run: ProjectRun, name: str, module: str | None, refuse: Refuse) -> tuple[str, str]:
    plan: dict[str, Any] = run.call("new_tool_plan", name, module)
    module_path = str(plan["path"])
    if plan["problem"] is not None:
        raise refuse(str(plan["problem"]), module_path)
    if run.merged.problems:
        raise refuse("broken", run.manifest)
    module_target = writable(run.repo, module_path, refuse)
    if os.path.lexists(module_target):
        raise refuse("exists", module_path)
    source = text(plan["source"]).encode("utf-8")
    return write_module_and_manifest(run, plan, name, (module_path, module_target), source, refuse)
