"""The editor's view of projects: open buffers laid over the repository, checked by the engine.

A document belongs to the project whose ``beeuni.yaml`` is in its folder or the nearest folder
above. Each check runs the same engine as ``beeuni validate`` over the project, reading every
file that has an open buffer from the buffer (saved or not) and the others from the disk, so an
edit of an import shows at once in the files that depend on it.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, NamedTuple

from ...engine.lang.errors import Problem, RulesError
from ...engine.paths import MANIFEST_NAME, Repository, upward
from ...engine.project import ProjectRun, load_rules, rules_folder
from ...engine.yaml.spans import Sources, read_from

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ...engine.lang.evaluator import Diagnostic


class Analysis(NamedTuple):
    """One check of a project: the run, the sources it read, and its diagnostics per file."""

    root: str
    run: ProjectRun
    sources: Sources
    by_file: dict[str, list[Diagnostic]]


def find_project(path: str) -> str | None:
    """The folder of the manifest a file belongs to: its own folder's or the nearest above."""
    folders = upward(os.path.dirname(os.path.abspath(path)))
    return next((folder for folder in folders if os.path.isfile(os.path.join(folder, MANIFEST_NAME))), None)


#: how long what was read of a repository's folders is trusted between two checks, in seconds:
#: checks while typing reuse it; a file created outside the editor shows within this time
DISK_VIEW_SECONDS = 1.0


#: a folder modified less than this long before it was read may be modified again within the
#: same tick of the file system's clock, keeping its time: such a view is not trusted ("racy
#: git"), in nanoseconds
RACY_NANOSECONDS = 1_000_000_000


class DiskView(Repository):
    """A repository that can tell whether what it read of the folders still holds: each folder
    read, with its modification time from before it was read (a file added, removed or renamed
    in it changes that). A view that followed a symbolic link is not trusted (what the link
    leads to can change without its folder's time), nor one that read a folder just modified."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self._read_at: dict[str, int | None] = {}
        self._trusted = True

    def _folder(self, folder: str) -> tuple[dict[str, os.DirEntry[str]], str, bool]:
        if folder not in self._read_at:
            self._note(folder)
        return super()._folder(folder)

    def list_dir(self, path: str) -> list[str]:
        relative = self.relative(path)
        if relative is not None and relative not in self._read_at:
            self._note(relative)
        return super().list_dir(path)

    def _note(self, folder: str) -> None:
        modified = self._read_at[folder] = _modified(self.absolute(folder))
        if modified is not None and time.time_ns() - modified < RACY_NANOSECONDS:
            self._trusted = False

    def still_current(self) -> bool:
        if not self._trusted:
            return False
        if any(_modified(self.absolute(folder)) != when for folder, when in self._read_at.items()):
            return False
        if any(os.path.realpath(self.absolute(folder)) != real for folder, (_, real, _) in self._folders.items()):
            return False
        return not any(entry.is_symlink() for entries, _, _ in self._folders.values() for entry in entries.values())


def _modified(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


class Workspace:
    def __init__(self, rules_dir: str | None) -> None:
        self.rules_dir = rules_dir
        self._program: dict[str, Any] | None = None
        self._repositories: dict[str, tuple[float, DiskView]] = {}
        #: each project's last run: the next check keeps what did not change
        self._runs: dict[str, ProjectRun] = {}

    def repository(self, root: str) -> Repository:
        """The repository at ``root``, with what was read of its folders if that is recent or
        still holds (the same view: what the rules computed from it is kept)."""
        now = time.monotonic()
        found = self._repositories.get(root)
        if found is not None and now - found[0] <= DISK_VIEW_SECONDS:
            return found[1]
        view = found[1] if found is not None and found[1].still_current() else DiskView(root)
        self._repositories[root] = (now, view)
        return view

    def forget_disk(self) -> None:
        """Make the next check look at the folders again (a file was saved, opened or closed):
        a view whose folders did not change is kept, with what was computed from it."""
        self._repositories = {root: (float("-inf"), view) for root, (_, view) in self._repositories.items()}

    @property
    def program(self) -> dict[str, Any]:
        """The compiled rules (a broken rule set raises ``RulesError`` at each check)."""
        if self._program is None:
            self._program = load_rules(self.rules_dir)
        return self._program

    def analyse(self, root: str, buffers: Mapping[str, str]) -> Analysis:
        """Check the project at ``root``; ``buffers`` maps absolute paths to open documents' text."""
        repo = self.repository(root)
        overlay = {}
        for path, text in buffers.items():
            relative = os.path.relpath(os.path.realpath(path), repo.root)
            if not relative.startswith(".."):
                overlay[relative] = text.encode("utf-8")
        before = self._runs.get(repo.root)
        run = ProjectRun(repo, MANIFEST_NAME, self.program, overlay, before=before, incremental=True, release_view=True)
        self._runs[repo.root] = run
        by_file: dict[str, list[Diagnostic]] = {entry["path"]: [] for entry in run.merged.files}
        for diagnostic in run.diagnostics():
            by_file.setdefault(diagnostic.file, []).append(diagnostic)
        run.evaluation.forget_carried()
        disk = read_from(repo.root)
        sources = Sources(lambda file: overlay[file] if file in overlay else disk(file))
        return Analysis(repo.root, run, sources, by_file)

    def check_rules(self, folder: str, buffers: Mapping[str, str]) -> dict[str, list[Problem]]:
        """``beeuni rules check`` of a rules folder, open buffers read instead of the disk: each
        rules file's absolute path → its problems. When it is the folder of the rules in use, they
        are compiled again at the next check."""
        from ...engine.contract.rules_interface import RULES_INTERFACE
        from ...engine.lang import compile_sources, rules_files

        used, shown = rules_folder(self.rules_dir)
        in_use = os.path.realpath(used) == folder
        shown = shown if in_use else folder
        paths = rules_files(folder)
        sources = []
        for path in paths:
            if path in buffers:
                data = buffers[path].encode("utf-8")
            else:
                with open(path, "rb") as handle:
                    data = handle.read()
            sources.append((f"{shown}/{os.path.basename(path)}", data))
        try:
            problems = [
                Problem(*found) for found in compile_sources(sources, RULES_INTERFACE, folder, shown)["problems"]
            ]
        except RulesError as err:
            problems = err.problems
        found: dict[str, list[Problem]] = {path: [] for path in paths}
        for problem in problems:
            path = os.path.join(folder, os.path.basename(problem.file))
            found.setdefault(path, []).append(problem)
        if in_use:
            self._program = None
            self._runs.clear()
        return found
