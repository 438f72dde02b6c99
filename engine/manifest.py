"""The merged manifest: the root file and every file it imports, as facts for the rules.

The engine knows one key of the manifest, ``imports``, because it must follow it to find the
other files. Everything else is generic: each top-level key whose value is a mapping becomes a
*section* (``tools``, ``agents``, ...) whose entries, from every file, are listed in load order —
the root file first, then each import where it is listed (depth first). What the sections mean
is the rules' business.

Facts handed to the rules (see ``docs/rules-language.md``):

``manifest``       the root file's repo-relative path
``files``          ``[{path, root, imported_at}]`` — every file read, with its root value
``sections``       ``{key: [{name, value, file}]}`` — the entries of every mapping-valued key
``section_keys``   ``{key: [located key]}`` — where each top-level key appears, whatever its value
``load_errors``    ``[{kind, at, file, detail, ...}]`` — what stopped or disturbed the reading
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .paths import MISSING, Repository
from .yaml.loader import MAX_FILE_BYTES, LoadProblem
from .yaml.located import LocatedMap, LocatedStr
from .yaml.reparse import Parsed, parse

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

IMPORTS_KEY = "imports"


class MergedManifest:
    """``before``: the same manifest read a moment ago (an editor's last check), whose files and
    entries are kept where they did not change — the same objects, so the rules' results that
    depend on them are kept too (``lang/carry.py``)."""

    def __init__(self, repo: Repository, manifest: str, before: MergedManifest | None = None) -> None:
        self.repo = repo
        self.manifest = manifest
        self.files: list[dict[str, Any]] = []
        self.sections: dict[str, list[dict[str, Any]]] = {}
        self.section_keys: dict[str, list[LocatedStr]] = {}
        self.problems: list[LoadProblem] = []
        #: the bytes of every file read, as they were parsed (suppressions and fixes read them)
        self.sources: dict[str, bytes] = {}
        #: the files whose reading stopped at a problem (a YAML syntax error, say): their
        #: comments are not read, so nothing can suppress that problem
        self.stopped: set[str] = set()
        #: each file as parsed; each (file, section key) → the section's mapping and its entries
        self.parsed: dict[str, Parsed] = {}
        self.entries: dict[tuple[str, str], tuple[LocatedMap, list[dict[str, Any]]]] = {}
        self.before = before

    def facts(self) -> dict[str, Any]:
        return {
            "manifest": self.manifest,
            "files": self.files,
            "sections": self.sections,
            "section_keys": self.section_keys,
            "load_errors": [problem.as_fact() for problem in self.problems],
        }

    def add_file(self, path: str, root: Any, imported_at: LocatedStr | None) -> None:
        self.files.append({"path": path, "root": root, "imported_at": imported_at})
        if not isinstance(root, LocatedMap):
            return
        for key, value in root.items():
            self.section_keys.setdefault(key, []).append(key)
            if isinstance(value, LocatedMap):
                self.sections.setdefault(key, []).extend(self._entries(path, key, value))

    def _entries(self, path: str, key: str, section: LocatedMap) -> list[dict[str, Any]]:
        """The entries of one file's section, those that did not change kept from ``before``."""
        found = self.before.entries.get((path, key)) if self.before is not None else None
        if found is not None and found[0] is section:
            entries = found[1]
        elif found is None:
            entries = [{"name": name, "value": item, "file": path} for name, item in section.items()]
        else:
            old = {(id(entry["name"]), id(entry["value"])): entry for entry in found[1]}
            entries = [
                old.get((id(name), id(item))) or {"name": name, "value": item, "file": path}
                for name, item in section.items()
            ]
        self.entries[(path, key)] = (section, entries)
        return entries


def load_manifest(
    repo: Repository,
    manifest: str,
    overlay: Mapping[str, bytes] | None = None,
    before: MergedManifest | None = None,
) -> MergedManifest:
    """Read ``manifest`` (repo-relative) and, depth first, every file it imports; a file in
    ``overlay`` (an editor's unsaved buffer) is read from there instead of the disk. From
    ``before`` (the last reading) what did not change is kept."""
    merged = MergedManifest(repo, manifest, before)
    loaded: set[str] = set()
    # Each entry: (path, where it was imported, the chain of files that led to it).
    pending: list[tuple[str, LocatedStr | None, tuple[str, ...]]] = [(manifest, None, ())]
    while pending:
        path, imported_at, chain = pending.pop()
        if path in loaded:
            continue
        loaded.add(path)
        if overlay is not None and path in overlay:
            data: bytes | None = overlay[path]
        else:
            data = _read(repo, path, imported_at, merged.problems)
        if data is None:
            continue
        parsed = merged.parsed[path] = parse(data, path, before.parsed.get(path) if before is not None else None)
        root, problems = parsed.root, parsed.problems
        merged.problems.extend(problems)
        merged.sources[path] = data
        if root is None and problems:
            merged.stopped.add(path)
        merged.add_file(path, root, imported_at)
        chain = (*chain, path)
        imports = root.get(IMPORTS_KEY) if isinstance(root, LocatedMap) else None
        if not isinstance(imports, list):
            continue
        found: list[tuple[str, LocatedStr | None, tuple[str, ...]]] = []
        for item in imports:
            if not isinstance(item, LocatedStr) or not item:
                continue  # a wrong type or an empty path: the rules say so
            target = _import_target(repo, item, chain, merged.problems)
            if target is not None:
                found.append((target, item, chain))
        pending.extend(reversed(found))
    merged.before = None  # kept from it what was kept; no chain of earlier readings
    return merged


def _import_target(
    repo: Repository, item: LocatedStr, chain: tuple[str, ...], problems: list[LoadProblem]
) -> str | None:
    target = repo.relative(item)
    if target is None:
        problems.append(LoadProblem("import-outside-repo", item.loc, path=str(item)))
        return None
    if target in chain:
        cycle = " -> ".join((*chain[chain.index(target) :], target))
        problems.append(LoadProblem("import-cycle", item.loc, path=target, cycle=cycle))
        return None
    return target


def _read(repo: Repository, path: str, imported_at: LocatedStr | None, problems: list[LoadProblem]) -> bytes | None:
    where = imported_at.loc if imported_at is not None else (path, 1, 1)
    found = repo.read(path, MAX_FILE_BYTES)
    if isinstance(found, bytes):
        return found
    if found == MISSING:
        problems.append(LoadProblem("import-missing", where, path=path))
    else:
        problems.append(LoadProblem("import-unreadable", where, found, path=path))
    return None
