"""The result cache (engine/cache/results.py): a `validate` or `resolve` of an unchanged project answers from the last
run's result — and never with a stale one. Every step below changes the project the way a user
or a checkout does, and the cached run's output must equal a `--no-cache` run's, byte for byte."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni

STARTER = ROOT / "examples" / "starter"
FORMS = [
    ["validate"],
    ["validate", "--format", "json"],
    ["validate", "--quiet"],
    ["validate", "--format", "concise", "--max-warnings", "0"],
    ["resolve"],
    ["resolve", "--json"],
]


def _tree(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` with what it is (a link's target, a file's bytes)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            found[str(path)] = path.read_bytes().hex()
        else:
            found[str(path)] = "folder"
    return found


def _same_as_uncached(project: Path, cache: Path, extra: list[str] | None = None, step: str = "") -> None:
    env = {"BEEUNI_CACHE_DIR": str(cache)}
    for form in FORMS:
        args = [form[0], str(project), *form[1:], *(extra or [])]
        before = _tree(project)
        cached = run_beeuni(args, cwd=project.parent, env=env)
        again = run_beeuni(args, cwd=project.parent, env=env)  # answered from the record just made
        checked = run_beeuni([*args, "--no-cache"], cwd=project.parent, env=env)
        assert cached.transcript() == checked.transcript(), (step, args)
        assert again.transcript() == checked.transcript(), (step, args)
        assert "Traceback" not in cached.stderr and "internal error" not in cached.stderr
        assert _tree(project) == before  # nothing written into the repository


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new, 1))


def _same_size_edit_keeping_mtime(path: Path) -> None:
    info = path.stat()
    text = path.read_text()
    path.write_text(text.replace("researcher", "reseArcher", 1))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def _steps(project: Path, outside: Path) -> list[tuple[str, Callable[[], None]]]:
    manifest, tools, search = project / "beeuni.yaml", project / "tools", project / "config" / "search.yaml"
    return [
        ("unchanged", lambda: None),
        ("a tool without its module", lambda: _edit(manifest, "tools:\n", "tools:\n  fresh: tools/fresh.ts\n")),
        ("the module added", lambda: (tools / "fresh.ts").write_text("export default {}\n")),
        ("the module renamed", lambda: (tools / "fresh.ts").rename(tools / "fresh2.ts")),
        ("a link to the renamed module", lambda: (tools / "fresh.ts").symlink_to("fresh2.ts")),
        ("the link out of the repository", lambda: _relink(tools / "fresh.ts", outside / "x.ts")),
        ("a link loop", lambda: _relink(tools / "fresh.ts", Path("fresh.ts"))),
        ("a folder instead of the module", lambda: _replace_by_folder(tools / "fresh.ts")),
        ("the import edited", lambda: _edit(search, "tools:\n", "tools:\n  Bad-Name: beeuni:web\n")),
        ("the import a link out, the same bytes", lambda: _move_out(project / "config" / "search.yaml", outside)),
        ("the same size, the same time", lambda: _same_size_edit_keeping_mtime(manifest)),
        ("the import removed", lambda: (project / "config" / "search.yaml").unlink()),
        ("a harness folder shadowing a tool", lambda: _harness_copy(project)),
        ("the harness copy removed", lambda: shutil.rmtree(project / ".opencode")),
        ("the tools folder a link inside", lambda: _tools_folder_linked(project)),
        ("the manifest a link", lambda: _manifest_linked(project)),
    ]


def _relink(link: Path, target: Path) -> None:
    link.unlink()
    link.symlink_to(target)


def _move_out(path: Path, outside: Path) -> None:
    """``path`` becomes a link to a copy of it outside the repository: the same bytes read."""
    shutil.copy(path, outside / path.name)
    path.unlink()
    path.symlink_to(outside / path.name)


def _replace_by_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _harness_copy(project: Path) -> None:
    (project / ".opencode" / "tools").mkdir(parents=True)
    (project / ".opencode" / "tools" / "memory.ts").write_text("export default {}\n")


def _tools_folder_linked(project: Path) -> None:
    (project / "tools").rename(project / "modules")
    (project / "tools").symlink_to("modules")


def _manifest_linked(project: Path) -> None:
    (project / "beeuni.yaml").rename(project / "real.yaml")
    (project / "beeuni.yaml").symlink_to("real.yaml")


def test_a_cached_run_equals_a_fresh_check_after_every_change(tmp_path: Path) -> None:
    project, outside, cache = tmp_path / "project", tmp_path / "outside", tmp_path / "cache"
    shutil.copytree(STARTER, project)
    outside.mkdir()
    (outside / "x.ts").write_text("export default {}\n")
    for step, change in _steps(project, outside):
        change()
        _same_as_uncached(project, cache, step=step)
    assert len(list(cache.glob("result-*"))) == 2  # validate's and resolve's: both were kept


def test_a_changed_rules_folder_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    project, rules, cache = tmp_path / "project", tmp_path / "rules", tmp_path / "cache"
    shutil.copytree(STARTER, project)
    _edit(project / "beeuni.yaml", "tools:\n", "tools:\n  fresh: tools/fresh.ts\n")
    shutil.copytree(ROOT / "rules", rules)
    _same_as_uncached(project, cache, ["--rules", str(rules)])
    tools_rules = rules / "tools.rules"
    text = tools_rules.read_text()
    assert "is not there" in text or "does not exist" in text or "missing" in text
    tools_rules.write_text(text.replace('"missing"', '"absent"', 1).replace("severity error", "severity warning", 1))
    _same_as_uncached(project, cache, ["--rules", str(rules)])
    (rules / "zz.rules").write_text("let UNUSED_BY_ANYONE = 1\n")
    _same_as_uncached(project, cache, ["--rules", str(rules)])


@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: data[: len(data) // 2],
        lambda data: b"",
        lambda data: b"\x00garbage\xff" * 10,
        lambda data: marshal.dumps({"key": "another"}),
        lambda data: marshal.dumps([1, 2, 3]),
        lambda data: data.replace(b"made_by", b"made_bx"),
    ],
    ids=["truncated", "empty", "garbage", "foreign", "not-a-record", "missing-field"],
)
def test_a_spoilt_record_is_a_miss(tmp_path: Path, spoil: Callable[[bytes], bytes]) -> None:
    project, cache = tmp_path / "project", tmp_path / "cache"
    shutil.copytree(STARTER, project)
    _edit(project / "beeuni.yaml", "tools:\n", "tools:\n  fresh: tools/fresh.ts\n")
    env = {"BEEUNI_CACHE_DIR": str(cache)}
    checked = run_beeuni(["validate", str(project), "--no-cache"], cwd=tmp_path, env=env)
    run_beeuni(["validate", str(project)], cwd=tmp_path, env=env)
    (record,) = cache.glob("result-*")
    record.write_bytes(spoil(record.read_bytes()))
    assert run_beeuni(["validate", str(project)], cwd=tmp_path, env=env).transcript() == checked.transcript()


def test_a_cache_folder_that_cannot_be_written_is_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"BEEUNI_CACHE_DIR": str(blocker / "cache")}
    checked = run_beeuni(["validate", str(STARTER), "--no-cache"], cwd=tmp_path, env=env)
    for _ in range(2):
        assert run_beeuni(["validate", str(STARTER)], cwd=tmp_path, env=env).transcript() == checked.transcript()


def test_turned_off_by_flag_or_environment(tmp_path: Path) -> None:
    for env, extra in (({"BEEUNI_NO_CACHE": "1"}, []), ({}, ["--no-cache"])):
        cache = tmp_path / f"cache{len(extra)}"
        run_beeuni(["validate", str(STARTER), *extra], cwd=tmp_path, env={"BEEUNI_CACHE_DIR": str(cache), **env})
        assert not list(cache.glob("result-*"))


@pytest.mark.parametrize(
    ("command", "light"),
    [
        # a line per diagnostic needs no more than the record: not even `re`
        ("validate", "('yaml', 'lark', 'typing', 'json', 're')"),
        ("resolve", "('yaml', 'lark', 'typing')"),
    ],
)
def test_a_hit_imports_neither_yaml_nor_the_rules(tmp_path: Path, command: str, light: str) -> None:
    """An unchanged project is answered without YAML, the evaluator, the project or the rules."""
    probe = (
        f"import sys; from beeuni.cli.main import main; sys.argv = ['beeuni', '{command}', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {light}"
        " or m in ('beeuni.engine.lang.evaluator', 'beeuni.engine.project', 'beeuni.engine.manifest',"
        " 'beeuni.cli.commands', 'beeuni.rules'))\n"
        "print(heavy, file=sys.stderr)"
    )
    env = {"BEEUNI_CACHE_DIR": str(tmp_path), "NO_COLOR": "1", "PATH": os.environ.get("PATH", "")}
    command_line = [sys.executable, "-c", probe, str(STARTER)]
    first = subprocess.run(command_line, capture_output=True, text=True, env=env, cwd=tmp_path)
    hit = subprocess.run(command_line, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "'yaml'" in first.stderr, first.stderr  # the first run checks
    assert hit.stderr.strip().endswith("[]"), hit.stderr
