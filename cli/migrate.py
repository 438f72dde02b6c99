"""``beeuni tools migrate [PATH] [--dry-run]``: move a project's opencode custom tools to the daemon.

The rules name the folders and extensions to look in (``migrate_candidates``), say which files
are copies of a Beeuni tool by the digest of their content (``migrate_copy_of``), decide what
becomes of each file and say every text (``migrate_plan``, ``migrate_report``,
``migrate_refusal`` in commands.rules). This module reads each tool file
(``engine/edit/opencode_source.py``), asks git which files it could restore
(``engine/release/restorable.py``: only those are ever deleted, the others are moved aside),
evaluates the files in Bun — every export described, its zod ``args`` turned into JSON Schema
by the zod the file itself uses — and carries the plan out: the whole run is planned and every
new text made before the first write; the changes then go together (``tool_files.Changes``),
and a refusal changes nothing.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.edit.copies import content_digest
from ..engine.edit.opencode_source import Converted, SourceFile, converted_module, read_tool_file
from ..engine.lang.values import text
from ..engine.printable import printable
from ..engine.project import open_project, rules_folder
from ..engine.release.restorable import git_states
from ..engine.shipped import shipped_module_file
from .progress import label_of, progress
from .shared import EXIT_FAILURE, EXIT_OK, bun
from .tool_files import Changes, Refusal, edited_manifest, writable

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun

#: each converted export's module, by (file, export)
Modules = dict[tuple[str, str], Converted]


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
        files, modules = _read_candidates(run, _shipped_digests(run, rules), candidates, limit)
        plan: dict[str, Any] = run.call("migrate_plan", files)
        changes = _changes(run, plan, modules, refuse)
        if not dry_run:
            changes.commit()
    except Refusal as refusal:
        sys.stderr.write(f"beeuni: {printable(str(refusal))}\n")
        return EXIT_FAILURE
    for line in run.call("migrate_report", plan, dry_run):
        sys.stdout.write(printable(text(line)) + "\n")
    return EXIT_OK


def _shipped_digests(run: ProjectRun, rules: str | None) -> dict[str, str]:
    """The digest of each Beeuni tool's source as these rules ship it."""
    digests = {}
    for name in run.output("BEEUNI_TOOLS"):
        with open(shipped_module_file(*rules_folder(rules), run.program, run.call("shipped_module", name)), "rb") as f:
            digests[str(name)] = content_digest(f.read())
    return digests


def _read_candidates(
    run: ProjectRun, shipped: dict[str, str], candidates: list[dict[str, Any]], limit: float
) -> tuple[list[dict[str, Any]], Modules]:
    """Each candidate file as the rules' ``migrate_plan`` takes it, and the served module of
    each export of a file that can be converted."""
    readers = [str(reader) for reader in run.output("ENV_READERS")]
    files, read, modules = [], {}, {}
    inside = [str(c["path"]) for c in candidates if run.repo.inside(str(c["path"]))]
    states = git_states(run.repo.root, inside)
    for candidate in candidates:
        path = str(candidate["path"])
        fact: dict[str, Any] = {**candidate, "problem": None, "detail": "", "error": "", "limit": f"{limit:g}"}
        fact.update(env=[], env_whole=[], tools=[], copy_of=None, digest="", git=states.get(path, "none"))
        files.append(fact)
        if path not in states:
            fact["problem"] = "outside"
            continue
        with open(run.repo.absolute(path), "rb") as handle:
            data = handle.read()
        fact["digest"] = content_digest(data)
        fact["copy_of"] = run.call("migrate_copy_of", fact["digest"], shipped)
        if fact["copy_of"] is not None:
            continue
        found = read_tool_file(data, readers)
        fact["problem"], fact["detail"] = found.problem, found.detail
        fact["env"], fact["env_whole"] = found.env_reads, found.env_whole
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
                for tool in fact["tools"]:
                    parameters = next(e.get("parameters") for e in probed["exports"] if e["export"] == tool["export"])
                    if tool["tool"] and tool["problem"] is None:
                        made = _module(
                            run, fact["path"], data, found, tool["export"], parameters, run.output("MIGRATED_FOLDER")
                        )
                        modules[(fact["path"], tool["export"])] = made
                        tool["harness"] = made.harness
                        tool["imports"] = [{"specifier": name, "path": where} for name, where in made.imports]
                        tool["types"] = made.types
    return files, modules


def _module(run: ProjectRun, path: str, data: bytes, found: SourceFile, export: str, parameters: Any,
            folder: str) -> Converted:  # fmt: skip
    packages = ([str(s["package"]) for s in run.output("OPENCODE_ZOD_SOURCES")],
                [str(p) for p in run.output("OPENCODE_HARNESS_PACKAGES")])  # fmt: skip
    wrapper = run.output("MIGRATE_OUTPUT_WRAPPER")
    moved = (os.path.dirname(path), folder)
    return converted_module(
        data, found, export, parameters, moved, packages, (str(wrapper["name"]), str(wrapper["source"]))
    )


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
                "context_passed": exported.context_passed if exported is not None else [],
                "output": found.builds_output,
                "harness": None,
                "imports": [],
                "types": [],
            }
        )
    return tools


def _changes(run: ProjectRun, plan: dict[str, Any], modules: Modules, refuse: Any) -> Changes:
    """Every write, deletion and move of the plan, each text made and each target checked."""
    repo = run.repo
    changes = Changes(repo)
    for converted in plan["convert"]:
        module = str(converted["module"])
        new = modules[(str(converted["path"]), str(converted["export"]))].text
        changes.write(module, writable(repo, module, refuse), new)
    if plan["convert"]:
        entries = [(str(c["name"]), str(c["module"]), str(c["comment"])) for c in plan["convert"]]
        manifest_file, manifest = edited_manifest(run, plan, entries, refuse)
        changes.write(manifest_file, writable(repo, manifest_file, refuse), manifest)
    for path in [str(d["path"]) for d in plan["delete"]] + [str(p) for p in plan["gone"]]:
        changes.delete(path, repo.absolute(path))
    for aside in plan["aside"]:
        to = str(aside["to"])
        changes.move(str(aside["path"]), repo.absolute(str(aside["path"])), writable(repo, to, refuse))
    return changes
