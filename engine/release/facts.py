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
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ..yaml.located import LocatedStr
from .git_index import Release
from .module_imports import Import, read_module

if TYPE_CHECKING:
    from typing import Any

    from ..lang.builtins import Observer

#: how many files one run reads for imports (modules and the files they import), and how large
MAX_FILES = 500
MAX_FILE_BYTES = 1_000_000


def release_fact(
    release: Release, observer: Observer, modules: list[dict[str, Any]], resolution: dict[str, Any]
) -> dict[str, Any]:
    """``resolution``: the rules' ``IMPORT_RESOLUTION`` (``extensions`` tried, ``followed``)."""
    reader = _Reader(release, observer, list(resolution["extensions"]), tuple(resolution["followed"]))
    found_modules = []
    imports: list[dict[str, Any]] = []
    for entry in modules:
        path = str(entry["module"])
        found_modules.append({"name": str(entry["name"]), "module": path, "state": release.state(path)})
        imports.extend(reader.imports_of(str(entry["name"]), path))
    return {"git": True, "modules": found_modules, "imports": imports}


class _Reader:
    def __init__(self, release: Release, observer: Observer, extensions: list[str], followed: tuple[str, ...]) -> None:
        self.extensions = extensions
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
        return next((candidate for candidate in candidates if self.is_file(candidate)), None)

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
