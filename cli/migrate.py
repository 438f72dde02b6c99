"""``beeuni tools migrate [PATH] [--dry-run]``: move a project's opencode custom tools to the daemon.

The rules name the folders and extensions to look in (``migrate_candidates``), decide what
becomes of each file and say every text (``migrate_plan``, ``migrate_report``,
``migrate_refusal`` in tools.rules). This module reads each tool file (``engine/edit/opencode_source.py``),
evaluates it in Bun — every export described, its zod ``args`` turned into JSON Schema by the zod
the file itself uses — and carries the plan out: the whole run is planned and every new text
made before the first write; the writes then go together (``tool_files.Changes``), and a refusal
changes nothing.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.edit.opencode_source import SourceFile, converted_module, read_tool_file
from ..engine.lang.values import text
from ..engine.printable import printable
from ..engine.project import open_project
from .progress import label_of, progress
from .shared import EXIT_FAILURE, EXIT_OK, bun
from .tool_files import Changes, Refusal, edited_manifest, writable

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun


def migrate(path: str, rules: str | None, dry_run: bool, limit: float) -> int:
    run = open_project(path, rules)

    def refuse(reason: str, detail: str = "") -> Refusal:
        return Refusal(text(run.call("migrate_refusal", reason, detail)))

    try:
        if run.merged.problems:
            raise refuse("broken", run.manifest)
        candidates: list[dict[str, Any]] = run.output("migrate_candidates")
        if not candidates:
            sys.stdout.write(printable(text(run.call("migrate_nothing"))) + "\n")
            return EXIT_OK
        files, sources = _read_candidates(run, candidates, limit)
        plan: dict[str, Any] = run.call("migrate_plan", files)
        changes = _changes(run, plan, sources, refuse)
        if not dry_run:
            changes.commit()
    except Refusal as refusal:
        sys.stderr.write(f"beeuni: {printable(str(refusal))}\n")
        return EXIT_FAILURE
    for line in run.call("migrate_report", plan, dry_run):
        sys.stdout.write(printable(text(line)) + "\n")
    return EXIT_OK


def _read_candidates(
    run: ProjectRun, candidates: list[dict[str, Any]], limit: float
) -> tuple[list[dict[str, Any]], dict[str, tuple[bytes, SourceFile, dict[str, Any]]]]:
    """Each candidate file as the rules' ``migrate_plan`` takes it, and for each file to convert
    its bytes, what reading it found and what Bun made of each export."""
    readers = [str(reader) for reader in run.output("ENV_READERS")]
    files, read, sources = [], {}, {}
    for candidate in candidates:
        path = str(candidate["path"])
        fact: dict[str, Any] = {**candidate, "problem": None, "detail": "", "error": "", "limit": f"{limit:g}"}
        fact.update(env=[], tools=[])
        files.append(fact)
        if not run.repo.inside(path):
            fact["problem"] = "outside"
        elif candidate["copy_of"] is None:
            with open(run.repo.absolute(path), "rb") as handle:
                data = handle.read()
            found = read_tool_file(data, readers)
            fact["problem"], fact["detail"], fact["env"] = found.problem, found.detail, found.env_reads
            if found.problem is None:
                read[path] = (data, found, fact)
    if read:
        for probed in _evaluate(run, list(read), limit):
            data, found, fact = read[probed["name"]]
            if not probed["loaded"]:
                fact["problem"], fact["error"] = probed["problem"], probed["error"] or ""
                continue
            fact["tools"] = _tools(fact, found, probed["exports"])
            if fact["problem"] is None:
                sources[fact["path"]] = (data, found, {e["export"]: e.get("parameters") for e in probed["exports"]})
    return files, sources


def _evaluate(run: ProjectRun, paths: list[str], limit: float) -> list[dict[str, Any]]:
    from ..daemon.host.probe import probe_modules

    zod = [{"package": str(s["package"]), "member": str(s["member"])} for s in run.output("OPENCODE_ZOD_SOURCES")]
    modules = [(path, run.repo.absolute(path)) for path in paths]
    with progress(lambda: label_of(run, "tools_migrate"), len(modules)) as probed:
        return probe_modules(bun(run), modules, run.repo.root, limit, {"zod": zod}, probed)


def _tools(fact: dict[str, Any], found: SourceFile, described: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exports as the rules take them; an export Bun saw as a tool that the text does not
    has in no form the rewrite knows (`export { x }`, an `args` built elsewhere) makes the file
    one to convert by hand."""
    spans = {exported.export: exported for exported in found.exports}
    tools = []
    for export in described:
        name = str(export["export"])
        exported = spans.get(name)
        if export["tool"] and (exported is None or exported.args is None) and fact["problem"] is None:
            fact["problem"], fact["detail"] = "export-form", f"`{name}`"
        tools.append(
            {
                "export": name,
                "tool": bool(export["tool"]),
                "problem": export.get("problem"),
                "error": str(export.get("error") or ""),
                "context": exported.context_fields if exported is not None else [],
            }
        )
    return tools


def _changes(
    run: ProjectRun,
    plan: dict[str, Any],
    sources: dict[str, tuple[bytes, SourceFile, dict[str, Any]]],
    refuse: Any,
) -> Changes:
    """Every write and deletion of the plan, each text made and each target checked."""
    repo = run.repo
    changes = Changes(repo)
    packages = [str(package) for package in plan["zod_packages"]]
    for converted in plan["convert"]:
        module, source_path = str(converted["module"]), str(converted["path"])
        data, found, parameters = sources[source_path]
        moved = (os.path.dirname(source_path), os.path.dirname(module))
        new = converted_module(data, found, str(converted["export"]), parameters[converted["export"]], moved, packages)
        changes.write(module, writable(repo, module, refuse), new)
    if plan["convert"]:
        entries = [(str(c["name"]), str(c["module"]), str(c["comment"])) for c in plan["convert"]]
        manifest_file, manifest = edited_manifest(run, plan, entries, refuse)
        changes.write(manifest_file, writable(repo, manifest_file, refuse), manifest)
    gone = [str(d["path"]) for d in plan["delete"]] + sorted({str(c["path"]) for c in plan["convert"]})
    for path in gone:
        changes.delete(path, repo.absolute(path))
    return changes
