"""``beeuni tools eject NAME``: make the project's own copy of a Beeuni tool (S-C3).

The rules say where the copy goes, which value means "the Beeuni tool" and every text the
command prints (``eject_plan``, ``eject_refusal``, ``eject_summary`` in tools.rules). This module
checks the preconditions, then writes the module and edits the manifest — each atomically, and
the module is taken back if the manifest cannot be written. A refusal changes nothing.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.edit import EditRefused, ManifestText, add_section, set_entry
from ..engine.lang.values import text
from ..engine.project import open_project, rules_folder
from ..engine.shipped import shipped_module_file
from ..engine.visible import visible
from .commands import EXIT_FAILURE, EXIT_OK

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..engine.paths import Repository
    from ..engine.project import ProjectRun


class Refusal(Exception):
    pass


def eject(name: str, path: str, rules: str | None, force: bool) -> int:
    run = open_project(path, rules)
    try:
        module_path, manifest_file = _eject(run, rules, name, force)
    except Refusal as refusal:
        sys.stderr.write(f"beeuni: {visible(str(refusal))}\n")
        return EXIT_FAILURE
    for line in run.call("eject_summary", name, module_path, manifest_file):
        sys.stdout.write(visible(text(line)) + "\n")
    return EXIT_OK


def _eject(run: ProjectRun, rules: str | None, name: str, force: bool) -> tuple[str, str]:
    def refuse(reason: str, detail: str = "") -> Refusal:
        return Refusal(text(run.call("eject_refusal", reason, name, detail)))

    if name not in run.output("BEEUNI_TOOLS"):
        raise refuse("not-beeuni")
    if run.merged.problems:
        raise refuse("broken", run.manifest)
    plan: dict[str, Any] = run.call("eject_plan", name)
    module_path = str(plan["path"])
    repo = run.repo
    module_target = _writable(repo, module_path, refuse)
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
    manifest_file, new_manifest = _edited_manifest(run, plan, name, module_path, refuse)

    write_module_and_manifest(repo, module_path, module_target, source, manifest_file, new_manifest)
    return module_path, manifest_file


def write_module_and_manifest(
    repo: Repository, module_path: str, module_target: str, source: bytes, manifest_file: str, manifest: bytes
) -> None:
    """Write the module, then the manifest, each atomically; the module is taken back (removed,
    or its old bytes restored) when the manifest cannot be written."""
    previous = _read(module_target)
    repo.write_atomically(module_path, source)
    try:
        repo.write_atomically(manifest_file, manifest)
    except BaseException:
        if previous is None:
            os.unlink(module_target)
        else:
            repo.write_atomically(module_path, previous)
        raise


def _writable(repo: Repository, relative: str, refuse: Callable[[str, str], Refusal]) -> str:
    """Where writing ``relative`` lands — a symbolic link inside the repository is followed —
    or a refusal: the path leads out of the repository, or a file stands where a folder must."""
    target = repo.real_target(relative)
    if target is None:
        raise refuse("outside", relative)
    if os.path.islink(target):  # a link that resolves to itself: a loop
        raise refuse("link-loop", relative)
    folder = os.path.dirname(target)
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise refuse("not-folder", os.path.relpath(folder, repo.root))
    return target


def _edited_manifest(
    run: ProjectRun, plan: dict[str, Any], name: str, module_path: str, refuse: Callable[[str, str], Refusal]
) -> tuple[str, bytes]:
    section, comment = str(plan["section"]), str(plan["comment"])
    declaration = plan["declaration"]
    if declaration is not None:
        manifest_file = str(declaration["file"])
    elif plan["tools_file"] is not None:
        manifest_file = str(plan["tools_file"])
    else:
        manifest_file = run.manifest
    with open(_writable(run.repo, manifest_file, refuse), "rb") as handle:
        original = handle.read()
    try:
        manifest = ManifestText.decode(original)
        if declaration is None and plan["tools_file"] is None:
            entries = [(str(entry["name"]), str(entry["value"])) for entry in plan["new_section"]]
            return manifest_file, manifest.encode(add_section(manifest.text, section, entries, {name: comment}))
        return manifest_file, manifest.encode(set_entry(manifest.text, section, name, module_path, comment))
    except EditRefused as err:
        detail = text(run.call("eject_refusal", "edit", name, manifest_file))
        raise Refusal(f"{detail} ({err})") from None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
