"""`beeuni tools eject`, `tools new` and `tools migrate` golden cases: before and
after trees, byte for byte.

    tests/golden/eject-<case>/
        project/     the repository before
        outside/     (optional) a folder beside the repository, for links that leave it; it must
                     stay unchanged
        commands     the commands to run, in order, on a copy of project/
        git          (optional) the files of project/ to commit first, one a line, in a git
                     repository made there; the others stay untracked (`.git` is not compared)
        after/       the repository after, except the ejected module itself (it must be the
                     shipped module's bytes, checked apart); no after/ means "unchanged"
        <command>.out   each command's transcript

`make golden` rewrites after/ and the .out files.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni
from test_golden import UPDATE, output_name

GOLDEN = ROOT / "tests" / "golden"
SHIPPED = ROOT / "rules" / "beeuni_tools"
#: `tools new` and `tools migrate` change their project the same way
CASES = sorted(
    path
    for path in [*GOLDEN.glob("eject-*"), *GOLDEN.glob("tools-new-*"), *GOLDEN.glob("migrate-*")]
    if (path / "project").is_dir()
)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, and every symbolic link as ``-> target`` (a link must stay a link)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if ".git" in path.relative_to(folder).parts:
            continue
        if path.is_symlink():
            found[str(path.relative_to(folder))] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def write_tree(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if data.startswith(b"-> "):
            (folder / name).symlink_to(data[3:].decode())
        else:
            (folder / name).write_bytes(data)


def without_ejected(files: dict[str, bytes]) -> dict[str, bytes]:
    """The tree without the modules that are byte-for-byte copies of the shipped ones."""
    shipped = {path.read_bytes() for path in SHIPPED.glob("*.ts")}
    return {name: data for name, data in files.items() if data not in shipped}


def commit(work: Path, paths: list[str]) -> None:
    """A git repository at ``work`` whose one commit holds ``paths``."""
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "--", *paths], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "before the migration"], check=True)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_eject(case: Path, tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(case / "project", work, symlinks=True)
    if (case / "outside").is_dir():
        shutil.copytree(case / "outside", tmp_path / "outside", symlinks=True)
    # the packages a project's opencode tools import (`@opencode-ai/plugin`, `zod`), installed
    # beside it as `bun install` would: the pinned ones of package.json
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    if (case / "git").is_file():
        commit(work, (case / "git").read_text().split())
    transcripts = []
    for command in (case / "commands").read_text().splitlines():
        result = run_beeuni(command.split(), cwd=tmp_path)
        expected_file = case / output_name(command)
        transcripts.append((expected_file, result.transcript()))
    after = without_ejected(tree(work))
    if UPDATE:
        for expected_file, transcript in transcripts:
            expected_file.write_text(transcript)
        shutil.rmtree(case / "after", ignore_errors=True)
        if after != tree(case / "project"):
            write_tree(case / "after", after)
        return
    for expected_file, transcript in transcripts:
        assert expected_file.read_text() == transcript, expected_file.name
    expected = tree(case / "after") if (case / "after").is_dir() else tree(case / "project")
    assert after == expected
    if (case / "outside").is_dir():
        assert tree(tmp_path / "outside") == tree(case / "outside"), "a file outside the repository changed"
    for name, data in tree(work).items():
        if data in {path.read_bytes() for path in SHIPPED.glob("*.ts")}:
            assert filecmp.cmp(work / name, SHIPPED / os.path.basename(name), shallow=False)


def test_refusal_changes_nothing_even_in_timestamps(tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(GOLDEN / "eject-refuse-points-elsewhere" / "project", work)
    before = {path: path.stat().st_mtime_ns for path in work.rglob("*")}
    result = run_beeuni(["tools", "eject", "web_search", "project"], cwd=tmp_path)
    assert result.code == 2
    assert {path: path.stat().st_mtime_ns for path in work.rglob("*")} == before
