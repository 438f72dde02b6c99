"""One project checked against one rule set: the engine's entry point.

    run = open_project("path/to/repo")        # or the manifest file itself
    run.diagnostics()                         # sorted Diagnostic list
    run.output("session_tools")               # a value the rules define

The engine hands the rules the facts and reads back the names of ``contract/rules_interface.py`` (documented in
``docs/rules-language.md``); the rules are checked against it when they are compiled, and each
value read back is checked against its shape (``contract/readback.py``) when it is read.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .contract.readback import FUNCTIONS, OPTIONAL_FUNCTIONS, OPTIONAL_VALUES, VALUES, WrongShape, describe
from .contract.rules_interface import RULES_INTERFACE
from .lang import RulesError, load_program
from .lang.builtins import Observer
from .lang.evaluator import Diagnostic, Evaluation, LateFact, LazyFact
from .manifest import MergedManifest, load_manifest
from .paths import MANIFEST_NAME, Repository, git_top, manifest_path
from .suppress import Suppressions, Syntax
from .yaml.loader import MAX_FILE_BYTES

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from .edit.text_edit import TextEdit
    from .release.facts import ReleaseView
    from .yaml.located import LocatedStr


class ManifestNotFound(Exception):
    def __init__(self, looked_at: str) -> None:
        there = "is not a file" if os.path.lexists(looked_at) else "does not exist"
        super().__init__(f"no manifest found: {looked_at} {there}")
        self.looked_at = looked_at


def shipped_rules() -> str:
    """The folder of the shipped rules, ``beeuni/rules`` beside this module's ``beeuni/engine``
    (not imported to be found: a run needs its files, not the package)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules")


def locate(path: str | os.PathLike[str] = ".") -> tuple[Repository, str]:
    """The repository and the manifest's repo-relative path for a folder or a manifest file."""
    candidate = os.fspath(path)
    manifest = manifest_path(candidate)
    if not os.path.isfile(manifest):
        raise ManifestNotFound(manifest)
    return Repository(os.path.dirname(os.path.abspath(manifest))), os.path.basename(manifest)


class ProjectRun:
    """``overlay``: repo-relative path → the bytes to read for that file instead of the disk's
    (an editor's unsaved buffers); ``merged``: the manifest already read (none: read it);
    ``before``: the run over an earlier version of the same project with the same rules (an
    editor's last check), from which what did not change is kept (``lang/carry.py``);
    ``incremental``: keep what the next such run may need; ``release_view``: check what a config
    release holds (``validate`` and the language server do; a session's daemon, which runs in a
    release, and the commands that list or edit the manifest do not)."""

    def __init__(
        self,
        repo: Repository,
        manifest: str,
        program: dict[str, Any],
        overlay: Mapping[str, bytes] | None = None,
        merged: MergedManifest | None = None,
        before: ProjectRun | None = None,
        incremental: bool = False,
        release_view: bool = False,
    ) -> None:
        self.repo = repo
        self.manifest = manifest
        self.program = program
        if before is not None and before.program is not program:
            before = None
        if merged is None:
            merged = load_manifest(repo, manifest, overlay, before.merged if before is not None else None)
        self.merged: MergedManifest = merged
        facts = self.merged.facts()
        # `modules` (what loading each module in Bun showed) stays empty unless `add_module_facts` fills it
        facts["modules"] = []
        facts["rule_ids"] = [rule["id"] for rule in program["rules"]]
        facts["suppressions"] = LazyFact(lambda: self.suppressions.records)
        facts["unused_suppressions"] = LateFact()
        facts["release"] = LazyFact(self._release)
        facts["json_files"] = LazyFact(self._json_files)
        self.observer: Observer = Observer(repo, before.observer if before is not None else None)
        self.evaluation: Evaluation = Evaluation(
            program,
            facts,
            self.observer,
            manifest,
            settle=lambda found: self.suppressions.settle(found),
            carried=before.evaluation.carry() if before is not None else None,
            incremental=incremental,
        )
        self._outputs: dict[str, Any] = {}
        self._release_view = release_view
        self._given_release: ReleaseView | None = None  # (``set_release``: not git's index)
        self._suppressions: Suppressions | None = None
        self._diagnostics: list[Diagnostic] | None = None

    def _release(self) -> dict[str, Any]:
        """The ``release`` fact (``release/facts.py``): what the release holds of the manifest's
        files, of the modules the rules would load and of their imports; nothing to say outside
        git (asked first: outside git, which modules would load is not worked out at all)."""
        if not self._release_view or "IMPORT_RESOLUTION" not in self.program["lets"]:
            return no_release()  # (rules that do not say how imports resolve: no release view)
        release = self._given_release
        found = git_top(self.repo.root) if release is None else None
        if release is None and found is None:
            return no_release()
        from .release.facts import release_fact
        from .release.git_index import Release

        if release is None:
            assert found is not None  # (outside git returned above)
            release = Release(found[0], found[1], self.repo.root)  # (reads the index: only now it is needed)
        elsewhere = getattr(release, "elsewhere", None)
        modules = list(self.output("modules_to_load"))
        if elsewhere is not None:  # a commit's view: the modules it lacks that the working tree has
            listed = {str(m["module"]) for m in modules}
            for tool in self.output("session_tools"):
                module = tool["module"]
                if module is not None and module not in listed and elsewhere(module):
                    listed.add(module)
                    modules.append({"name": tool["name"], "module": module})
        resolution = self.output("IMPORT_RESOLUTION") if modules else None
        return release_fact(release, self.observer, modules, resolution, self._manifest_files(elsewhere), elsewhere)

    def _manifest_files(self, elsewhere: Callable[[str], bool] | None) -> list[LocatedStr]:
        """The manifest's files, each where it is named (the root at its start), and those
        imports a commit's view lacks that the working tree has."""
        from .yaml.located import LocatedStr

        found = [LocatedStr(self.manifest, (self.manifest, 1, 1))]
        for file in self.merged.files:
            if file["imported_at"] is not None:
                found.append(LocatedStr(file["path"], file["imported_at"].loc))
        if elsewhere is not None:
            for problem in self.merged.problems:
                path = str(problem.extra.get("path"))
                if problem.kind == "import-missing" and elsewhere(path):
                    found.append(LocatedStr(path, problem.loc))
        return found

    def _json_files(self) -> list[dict[str, Any]]:
        """The ``json_files`` fact: each file of the rules' ``JSON_FILES`` that the repository
        holds, read as JSON with comments (``jsonc.py``) — its located root, or the problem that
        stopped the reading. None named (or no ``JSON_FILES``): empty."""
        if "JSON_FILES" not in self.program["lets"]:
            return []
        from .jsonc import JsonProblem, load_jsonc
        from .yaml.located import LocatedConst

        found = []
        for path in self.output("JSON_FILES"):
            if not self.repo.is_file(path):
                continue
            data = self.repo.read(path, MAX_FILE_BYTES + 1)
            if not isinstance(data, bytes):
                continue  # (unreadable: opencode would not read it either)
            try:
                found.append({"path": path, "root": load_jsonc(data, path), "problem": None, "at": None})
            except JsonProblem as problem:
                found.append(
                    {"path": path, "root": None, "problem": problem.detail, "at": LocatedConst(None, problem.loc)}
                )
        return found

    def set_release(self, release: ReleaseView | None) -> None:
        """The release to check against instead of git's index (None: no git repository), before
        anything has read the ``release`` fact: a rules test case's (``cli/rule_tests.py``), or
        a commit a session serves (``release/commit_view.py``)."""
        assert "release" not in self.evaluation.values, "the release fact was read before it was set"
        self._release_view = release is not None
        self._given_release = release

    def add_module_facts(self, modules: list[dict[str, Any]]) -> None:
        """Hand the rules the ``modules`` fact (``beeuni validate --modules``); before anything
        has read it, so no value was computed without it."""
        assert "modules" not in self.evaluation.values, "the modules fact was read before it was given"
        self.evaluation.facts["modules"] = modules

    @property
    def suppressions(self) -> Suppressions:
        """The suppression comments of the files read (``engine/suppress.py``), found when first asked."""
        if self._suppressions is None:
            syntax = Syntax(self.output("SUPPRESSION"))
            self._suppressions = Suppressions(self.merged.sources, self.merged.stopped, syntax)
        return self._suppressions

    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic the suppressions leave, sorted; each with its ``fix`` (a
        ``TextEdit``) when its rule gives one that can be made."""
        found = self._diagnostics
        if found is None:
            found = self.evaluation.diagnostics()
            if any(diagnostic.fix_value is not None for diagnostic in found):
                from .edit.fixes import resolve_fixes

                resolve_fixes(found, self.merged.sources, self.suppressions.verbatim)
            self._diagnostics = found
        return found

    def suppression_edit(self, diagnostic: Diagnostic) -> TextEdit | None:
        """The edit that adds a suppression comment for ``diagnostic`` (an editor's quick fix)."""
        return self.suppressions.edit(diagnostic)

    def count(self, severity: str) -> int:
        return sum(1 for diagnostic in self.diagnostics() if diagnostic.severity == severity)

    def output(self, name: str) -> Any:
        """A value the rules define. One the engine reads back (``readback.VALUES``) is checked
        against its shape and made of plain values; any other comes as the rules made it."""
        try:
            return self._outputs[name]
        except KeyError:
            pass
        value = self.evaluation.get(name)
        shape = VALUES.get(name) or OPTIONAL_VALUES.get(name)
        try:
            checked = self._outputs[name] = value if shape is None else shape.plain(value)
        except WrongShape as err:
            raise self._wrong("let", name, name, err) from None
        return checked

    def call(self, name: str, *args: Any) -> Any:
        """What a function of the rules gives for ``args``, checked like ``output``."""
        value = self.evaluation.call(name, list(args))
        found = FUNCTIONS.get(name) or OPTIONAL_FUNCTIONS.get(name)
        if found is None:
            return value
        try:
            return found[1].plain(value)
        except WrongShape as err:
            shown = ", ".join(_argument(arg) for arg in args)
            raise self._wrong("fn", name, f"{name}({shown})", err) from None

    def _wrong(self, kind: str, name: str, subject: str, err: WrongShape) -> RulesError:
        file, line, column = self.program["defined"][f"{kind}:{name}"]
        return RulesError(file, line, column, describe(subject, err))


def _argument(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def rules_folder(rules_dir: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """The rules folder to read (the shipped one by default), and its name in messages: the
    shipped rules are named as they stand in beeuni's source tree, wherever installed."""
    if rules_dir is None:
        return shipped_rules(), "rules"
    return os.fspath(rules_dir), os.fspath(rules_dir)


def load_rules(rules_dir: str | os.PathLike[str] | None = None, shown: str | None = None) -> dict[str, Any]:
    """``shown``: how messages name the folder (a copy's, by the user's own path)."""
    folder, named = rules_folder(rules_dir)
    return load_program(folder, RULES_INTERFACE, display=shown or named, shipped=rules_dir is None)


def open_project(
    path: str | os.PathLike[str] = ".", rules_dir: str | os.PathLike[str] | None = None, release_view: bool = False
) -> ProjectRun:
    repo, manifest = locate(path)
    return ProjectRun(repo, manifest, load_rules(rules_dir), release_view=release_view)


def rules_only(rules_dir: str | os.PathLike[str] | None = None) -> ProjectRun:
    """A run over no manifest at all, for the values of the rules alone (``beeuni schema``)."""
    repo = Repository(os.getcwd())
    return ProjectRun(repo, MANIFEST_NAME, load_rules(rules_dir), merged=MergedManifest(repo, MANIFEST_NAME))


def no_release() -> dict[str, Any]:
    """The ``release`` fact where there is nothing to say: outside git, or no module to load."""
    return {"git": False, "modules": [], "imports": [], "files": []}
