"""The fact ``release``: what a config release holds of each declared module and its imports.

For each module the rules would load (``modules_to_load``), whether git tracks it; for each of
its imports (``module_imports.py``), where it resolves as Bun resolves it: a relative one to a
file (the path itself, with an extension in place of or after its own, or a folder's ``index``:
the extensions are the rules' ``IMPORT_RESOLUTION``), followed on transitively (at
most ``MAX_FILES`` files a run); a package to the first ``node_modules`` beside or above the
importing file, up to the git work tree's top, that the release holds. A file imported by
several modules has its imports listed once, for the first. Which specifiers are
built into the runtime, and what is wrong, the rules say (``rules/release.rules``). Outside a git
repository the fact says so and lists nothing.

Also, for each file of the manifest (the root and every import), whether the release holds it.

The view is validate's — git's index over the working tree — or a session's: a commit, read from
its copy (``commit_view.py``). A commit's view also knows the files the working tree has that the
commit lacks (``elsewhere``): a module or a manifest import declared but not committed, a relative
import that resolves only in the working tree. Those are listed with why the commit lacks them, so
that what is reported is the user's own path and its reason, never a path of the copy.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Protocol

from ..yaml.located import LocatedStr
from .module_imports import Import, read_module

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..lang.builtins import Observer


class ReleaseView(Protocol):
    """What the fact asks of a release: ``git_index.Release`` (the index) or ``CommitView``."""

    prefix: str

    def state(self, relative: str) -> str: ...

    def holds_under_top(self, folder: str) -> bool: ...


#: how many files one run reads for imports (modules and the files they import), and how large
MAX_FILES = 500
MAX_FILE_BYTES = 1_000_000


def release_fact(
    release: ReleaseView,
    observer: Observer,
    modules: list[dict[str, Any]],
    resolution: dict[str, Any] | None,
    files: list[LocatedStr] | None = None,
    elsewhere: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """``resolution``: the rules' ``IMPORT_RESOLUTION`` (``extensions`` tried, ``followed``;
    None: imports are not read); ``files``: the manifest's files, each located where it is
    named (the root at its start); ``elsewhere``: whether the working tree has a file the release
    lacks (a commit's view), where a relative import that resolves to nothing in the release is
    resolved again."""
    extensions, followed = (list(resolution["extensions"]), tuple(resolution["followed"])) if resolution else ([], ())
    reader = _Reader(release, observer, extensions, followed, elsewhere)
    found_modules = []
    imports: list[dict[str, Any]] = []
    for entry in modules:
        path = str(entry["module"])
        state = release.state(path)
        found_modules.append({"name": str(entry["name"]), "module": path, "state": state})
        if resolution is not None:  # (of a module the release lacks too: `cr open` adds what it imports)
            imports.extend(reader.imports_of(str(entry["name"]), path))
    found_files = [{"path": str(file), "at": file, "state": release.state(str(file))} for file in files or []]
    return {"git": True, "modules": found_modules, "imports": imports, "files": found_files}


class _Reader:
    def __init__(
        self,
        release: ReleaseView,
        observer: Observer,
        extensions: list[str],
        followed: tuple[str, ...],
        elsewhere: Callable[[str], bool] | None,
    ) -> None:
        self.extensions = extensions
        self.elsewhere = elsewhere
        self.followed = followed
        self.release = release
        self.observer = observer
        self.repo = observer.repo
        self.read_count = 0
        self._imports: dict[str, list[Import] | None] = {}  # by file; None: not read
        self._listed: set[str] = set()  # files whose imports are listed (once, for the first module)

    def imports_in(self, path: str) -> list[Import] | None:
        """The imports of the file ``path``, read once; None past the run's bounds."""
        if path in self._imports:
            return self._imports[path]
        found = None
        if self.read_count < MAX_FILES:
            self.read_count += 1
            data = self.repo.read(path, MAX_FILE_BYTES)
            if isinstance(data, bytes) and len(data) <= MAX_FILE_BYTES:
                found = read_module(data)
        self._imports[path] = found
        return found

    def is_file(self, path: str) -> bool:
        known = self.observer.known["is_file"]
        answer = known.get(path)
        if answer is None:
            answer = known[path] = self.repo.is_file(path)
        return bool(answer)

    def imports_of(self, name: str, module: str) -> list[dict[str, Any]]:
        found = []
        queue, seen = [module], {module}
        while queue:
            file = queue.pop(0)
            if file != module and file in self._listed:
                continue
            self._listed.add(file)
            imports = self.imports_in(file)
            if imports is None:
                continue
            for item in imports:
                relative = item.specifier.startswith(("./", "../")) or item.specifier in (".", "..")
                entry: dict[str, Any] = {
                    "name": name,
                    "module": module,
                    "file": file,
                    "specifier": LocatedStr(item.specifier, (file, item.line, item.column)),
                    "relative": relative,
                    "package": None if relative else _package_name(item.specifier),
                    "target": None,
                    "state": None,
                }
                if relative:
                    target = self._resolve_file(posixpath.join(posixpath.dirname(file), item.specifier))
                    if target is not None:
                        entry["target"] = target
                        entry["state"] = self.release.state(target)
                        if target.endswith(self.followed) and target not in seen:
                            seen.add(target)
                            queue.append(target)
                else:
                    entry["target"] = self._package_folder(file, entry["package"])
                    entry["state"] = "tracked" if entry["target"] is not None else None
                found.append(entry)
        return found

    def _resolve_file(self, joined: str) -> str | None:
        base = posixpath.normpath(joined)
        if base.startswith("../") or base == "..":
            return None
        stem, extension = posixpath.splitext(base)
        candidates = [base, *(base + ext for ext in self.extensions)]
        if extension:  # `./x.js` written for `./x.ts`
            candidates += [stem + ext for ext in self.extensions]
        candidates += [posixpath.join(base, "index" + ext) for ext in self.extensions]
        found = next((candidate for candidate in candidates if self.is_file(candidate)), None)
        if found is None and self.elsewhere is not None:  # the working tree's file the release lacks
            found = next((candidate for candidate in candidates if self.elsewhere(candidate)), None)
        return found

    def _package_folder(self, file: str, package: str) -> str | None:
        """The first ``node_modules/<package>`` the release holds, from the importing file's
        folder up to the top of the git work tree, as a path from that top."""
        folder = posixpath.dirname(self.release.prefix + file)
        while True:
            candidate = posixpath.join(folder, "node_modules", package)
            if self.release.holds_under_top(candidate):
                return candidate
            if not folder:
                return None
            folder = posixpath.dirname(folder)


def _package_name(specifier: str) -> str:
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") and len(parts) > 1 else parts[0]
