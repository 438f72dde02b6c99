"""Writing tool modules and the manifest entries that declare them — shared by ``tools eject``,
``tools new`` and ``tools migrate`` — and writing files together (``Changes``, also ``--fix``'s).

Every write lands inside the repository (a symbolic link is followed only when its target is
inside), each file is written atomically, and a command's writes go together: when one fails,
the ones made before it are taken back. The manifest is edited with ``engine/edit/entries.py``, which
keeps every other byte.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.edit.entries import add_section, set_entry
from ..engine.lang.values import text
from ..engine.printable import printable
from ..engine.yaml.source_text import EditRefused, SourceText
from .shared import EXIT_FAILURE, EXIT_OK

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..engine.paths import Repository
    from ..engine.project import ProjectRun

    #: a command's refusal for a reason and its detail (a path, a value)
    Refuse = Callable[[str, str], "Refusal"]


class Refusal(Exception):
    """The command refuses; nothing was changed. The message comes from the rules."""


def writable(repo: Repository, relative: str, refuse: Refuse) -> str:
    """Where writing ``relative`` lands — a symbolic link inside the repository is followed —
    or a refusal: the path leaves the repository (by ``..`` or as an absolute path), leads out of
    it through a symbolic link, or a file stands where a folder must."""
    normal = os.path.normpath(relative)
    if os.path.isabs(relative) or normal == os.pardir or normal.startswith(os.pardir + os.sep):
        raise refuse("leaves", relative)
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


def edited_manifest(
    run: ProjectRun, plan: dict[str, Any], entries: list[tuple[str, str, str]], refuse: Refuse
) -> tuple[str, bytes]:
    """The manifest file to change and its new bytes: each ``(name, value, comment)`` set under
    the plan's ``section`` — in the file that declares the name, else in the file whose
    ``tools:`` key comes first (``tools_file``), else a new section (``new_section``) in the root
    manifest."""
    section = str(plan["section"])
    declaration = plan.get("declaration")
    if declaration is not None:
        manifest_file = str(declaration["file"])
    elif plan["tools_file"] is not None:
        manifest_file = str(plan["tools_file"])
    else:
        manifest_file = run.manifest
    with open(writable(run.repo, manifest_file, refuse), "rb") as handle:
        original = handle.read()
    try:
        manifest = SourceText.read(original)
        if declaration is None and plan["tools_file"] is None:
            listed = [(str(entry["name"]), str(entry["value"])) for entry in plan["new_section"]]
            comments = {name: comment for name, _, comment in entries}
            return manifest_file, manifest.encode(add_section(manifest.text, section, listed, comments))
        text = manifest.text
        for name, value, comment in entries:
            text = set_entry(text, section, name, value, comment)
        return manifest_file, manifest.encode(text)
    except EditRefused as err:
        raise Refusal(f"{refuse('edit', manifest_file)} ({err})") from None


def module_command(run: ProjectRun, command: str, name: str, write: Callable[[Refuse], tuple[str, str]]) -> int:
    """Run a command that writes the module of the tool ``name``: ``write`` makes the changes and
    returns the module's path and the manifest file, or raises its refusal (``<command>_refusal``
    of the rules) before changing anything. Print that refusal, or the rules' summary
    (``<command>_summary``)."""

    def refuse(reason: str, detail: str = "") -> Refusal:
        return Refusal(text(run.call(f"{command}_refusal", reason, name, detail)))

    try:
        module_path, manifest_file = write(refuse)
    except Refusal as refusal:
        sys.stderr.write(f"beeuni: {printable(str(refusal))}\n")
        return EXIT_FAILURE
    for line in run.call(f"{command}_summary", name, module_path, manifest_file):
        sys.stdout.write(printable(text(line)) + "\n")
    return EXIT_OK


def write_module_and_manifest(
    run: ProjectRun, plan: dict[str, Any], name: str, module: tuple[str, str], source: bytes, refuse: Refuse
) -> tuple[str, str]:
    """Declare the module (its path, and its ``writable`` target) as the tool ``name``
    (``edited_manifest``), then write the module and the manifest, each atomically; the module is
    taken back (removed, or its old bytes restored) when the manifest cannot be written. The
    module's path and the manifest file."""
    module_path, module_target = module
    manifest_file, manifest = edited_manifest(run, plan, [(name, module_path, str(plan["comment"]))], refuse)
    changes = Changes(run.repo)
    changes.write(module_path, module_target, source)
    changes.write(manifest_file, run.repo.real_target(manifest_file) or "", manifest)
    changes.commit()
    return module_path, manifest_file


class Changes:
    """Writes, deletions and moves made together: ``commit`` makes them in order, and takes
    back the ones made when a later one fails. A move never replaces a file: where its target
    exists, it fails (and everything before it is taken back)."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        #: (relative, target, bytes; None: delete; a str: move to that path)
        self._planned: list[tuple[str, str, bytes | str | None]] = []

    def write(self, relative: str, target: str, data: bytes) -> None:
        self._planned.append((relative, target, data))

    def delete(self, relative: str, target: str) -> None:
        self._planned.append((relative, target, None))

    def move(self, relative: str, target: str, to: str) -> None:
        self._planned.append((relative, target, to))

    def commit(self) -> None:
        done: list[tuple[str, str, bytes | str | None]] = []  # (relative, target, the bytes before / moved to)
        try:
            for relative, target, data in self._planned:
                if isinstance(data, str):
                    _move_without_replacing(target, data)
                    done.append((relative, target, data))
                    continue
                previous = read_if_there(target)
                if data is None:
                    os.unlink(target)
                else:
                    self.repo.write_atomically(relative, data)
                done.append((relative, target, previous))
        except BaseException:
            for relative, target, before in reversed(done):
                if isinstance(before, str):
                    os.rename(before, target)
                elif before is None:
                    os.unlink(target)
                else:
                    self.repo.write_atomically(relative, before)
            raise


def _move_without_replacing(source: str, target: str) -> None:
    """Rename ``source`` to ``target``, failing where ``target`` exists (a rename would replace
    it): a hard link, then the old name removed; a link itself moves, not what it leads to."""
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
    else:
        try:
            os.link(source, target)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: checked, then renamed
            if os.path.lexists(target):
                raise FileExistsError(target) from None
            os.rename(source, target)
            return
    os.unlink(source)


def read_if_there(path: str) -> bytes | None:
    """The bytes of ``path``; ``None`` when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None
