"""``beeuni tools new NAME [--path FILE]``: write a project tool's module skeleton and declare it.

The rules give the plan, the skeleton's text, every refusal and the summary (``new_tool_plan``,
``new_tool_source``, ``new_tool_refusal``, ``new_tool_summary`` in tools.rules); the files are
written as ``tools eject`` writes them — the same byte-exact manifest edit, the same refusals of
a path that leads out of the repository, and a refusal changes nothing.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.lang.values import text
from ..engine.project import open_project
from .diagnostic_text import EXIT_FAILURE, EXIT_OK
from .tool_files import Refusal, edited_manifest, writable, write_module_and_manifest

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun


def new_tool(name: str, path: str, rules: str | None, module: str | None) -> int:
    run = open_project(path, rules)
    try:
        module_path, manifest_file = _new_tool(run, name, module)
    except Refusal as refusal:
        sys.stderr.write(f"beeuni: {refusal}\n")
        return EXIT_FAILURE
    for line in run.call("new_tool_summary", name, module_path, manifest_file):
        sys.stdout.write(text(line) + "\n")
    return EXIT_OK


def _new_tool(run: ProjectRun, name: str, module: str | None) -> tuple[str, str]:
    def refuse(reason: str, detail: str = "") -> Refusal:
        return Refusal(text(run.call("new_tool_refusal", reason, name, detail)))

    plan: dict[str, Any] = run.call("new_tool_plan", name, module)
    module_path = str(plan["path"])
    if plan["problem"] is not None:
        raise refuse(str(plan["problem"]), module_path)
    if run.merged.problems:
        raise refuse("broken", run.manifest)
    repo = run.repo
    module_target = writable(repo, module_path, refuse)
    if os.path.lexists(module_target):
        raise refuse("exists", module_path)
    manifest_file, new_manifest = edited_manifest(run, plan, [(name, module_path, str(plan["comment"]))], refuse)
    source = text(plan["source"]).encode("utf-8")
    write_module_and_manifest(repo, module_path, module_target, source, manifest_file, new_manifest)
    return module_path, manifest_file
