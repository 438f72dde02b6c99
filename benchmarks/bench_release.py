"""What the release view costs a run: reading git's index and answering for each module.

    .venv/bin/python benchmarks/bench_release.py [--runs 20] [--files 20000] [--libraries PYTHON]

Two repositories, each made with `git init` and `git add`: a copy of the starter, and one of
``--files`` tracked files whose manifest declares ten modules. For each, the median of the runs
of ``Release.of`` plus the ``release`` fact (``engine/release/facts.py``) in this process, as a
run of `validate` computes it; beside it, for comparison, `git ls-files -z` (a process, the
other way to ask the index) and a full parse of the index in Python.

With ``--libraries PYTHON`` (a Python where pygit2 and dulwich are installed: they are no
dependency of beeuni) the two maintained libraries are timed too, each in a new process per run
from its import to its answers for the modules, as a run of `validate` would pay for them.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from beeuni.engine.lang.builtins import Observer
from beeuni.engine.paths import Repository
from beeuni.engine.project import rules_only
from beeuni.engine.release.facts import release_fact
from beeuni.engine.release.git_index import Release

ROOT = Path(__file__).resolve().parent.parent


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def starter(base: Path) -> tuple[Path, list[dict[str, str]]]:
    folder = base / "starter"
    shutil.copytree(ROOT / "examples" / "starter", folder)
    git(folder, "init", "-q")
    git(folder, "add", ".")
    return folder, [{"name": "lookup_order", "module": "tools/lookup_order.ts"}]


def large(base: Path, files: int) -> tuple[Path, list[dict[str, str]]]:
    folder = base / "large"
    for index in range(files):
        path = folder / f"pkg{index // 500}" / f"sub{(index // 50) % 10}" / f"file_{index}.ts"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"export const v{index} = {index}\n")
    modules = [{"name": f"tool_{n}", "module": f"pkg{n}/sub0/file_{n * 500}.ts"} for n in range(10)]
    git(folder, "init", "-q")
    git(folder, "add", ".")
    return folder, modules


def median_ms(action: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def full_parse(index: Path) -> int:
    data = index.read_bytes()
    count, offset, paths = int.from_bytes(data[8:12], "big"), 12, set()
    for _ in range(count):
        head = 64 if data[offset + 60] & 0x40 else 62
        end = data.index(b"\0", offset + head)
        paths.add(data[offset + head : end])
        offset += (end - offset + 8) & ~7
    return len(paths)


#: in a new process: a library's import, its reading of the index and its answers, in ms
_LIBRARY_RUN = """
import sys, time
start = time.perf_counter()
library, index, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
if library == "pygit2":
    import pygit2
    tracked = pygit2.Index(index)
    answers = [path in tracked for path in paths]
else:
    from dulwich.index import Index
    tracked = Index(index)
    answers = [path.encode() in tracked for path in paths]
assert all(answers)
print((time.perf_counter() - start) * 1000)
"""


def library_ms(python: str, library: str, folder: Path, modules: list[dict[str, str]], runs: int) -> float:
    command = [python, "-c", _LIBRARY_RUN, library, str(folder / ".git" / "index"), *(m["module"] for m in modules)]
    times = [float(subprocess.run(command, capture_output=True, check=True, text=True).stdout) for _ in range(runs)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--libraries", metavar="PYTHON", help="a Python with pygit2 and dulwich, to time them too")
    options = parser.parse_args()
    resolution = rules_only().output("IMPORT_RESOLUTION")
    base = Path(tempfile.mkdtemp(prefix="beeuni-bench-release-"))
    try:
        libraries = ("pygit2", "dulwich") if options.libraries else ()
        heads = "".join(f" {name:>13}" for name in libraries)
        print(f"{'repository':<32} {'release view':>13} {'git ls-files':>13} {'full parse':>11}{heads}   (median ms)")
        for label, (folder, modules) in (
            ("examples/starter", starter(base)),
            (f"{options.files} tracked files", large(base, options.files)),
        ):

            def view(folder: Path = folder, modules: list[dict[str, str]] = modules) -> None:
                repo = Repository(str(folder))
                release_fact(Release.of(repo.root), Observer(repo), modules, resolution)

            def listed(folder: Path = folder) -> None:
                subprocess.run(["git", "ls-files", "-z"], cwd=folder, capture_output=True, check=True)

            ours = median_ms(view, options.runs)
            theirs = median_ms(listed, options.runs)
            parsed = median_ms(lambda folder=folder: full_parse(folder / ".git" / "index"), options.runs)
            timed = "".join(
                f" {library_ms(options.libraries, name, folder, modules, options.runs):13.2f}" for name in libraries
            )
            print(f"{label:<32} {ours:13.2f} {theirs:13.2f} {parsed:11.2f}{timed}")
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
