"""A repository's view of paths (engine/paths.py): what is inside it, symbolic links followed."""

from __future__ import annotations

import os
from pathlib import Path

from beeuni.engine.paths import Repository


def make_repository(tmp_path: Path) -> Repository:
    """``parent/repo`` with files, a folder, links inside and out, and ``up -> ..`` (the parent)."""
    repo = tmp_path / "parent" / "repo"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "a.ts").write_text("")
    (tmp_path / "parent" / "other.ts").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "b.ts").write_text("")
    os.symlink("a.ts", repo / "tools" / "inner.ts")
    os.symlink(tmp_path / "outside" / "b.ts", repo / "tools" / "outer.ts")
    os.symlink(tmp_path / "outside", repo / "out")
    os.symlink("..", repo / "up")
    return Repository(str(repo))


def test_what_is_inside_the_repository(tmp_path: Path) -> None:
    repository = make_repository(tmp_path)
    inside = ["tools/a.ts", "tools/inner.ts", "tools/missing.ts", "./tools/a.ts", "up/repo", "up/repo/tools/a.ts"]
    outside = ["tools/outer.ts", "out/b.ts", "up/other.ts", "../other.ts", "/etc/passwd", ""]
    assert {path: repository.inside(path) for path in inside + outside} == {
        **dict.fromkeys(inside, True),
        **dict.fromkeys(outside, False),
    }
    assert repository.relative("up/repo") == "up/repo"  # the repository itself, by a link to its parent
    assert repository.relative("./tools//a.ts") == "tools/a.ts"


def test_files_and_what_exists(tmp_path: Path) -> None:
    repository = make_repository(tmp_path)
    assert [repository.is_file(path) for path in ("tools/a.ts", "tools/inner.ts", "tools", "tools/missing.ts")] == [
        True,
        True,
        False,
        False,
    ]
    assert [repository.exists(path) for path in ("tools", "tools/missing.ts", "tools/outer.ts")] == [True, False, False]
