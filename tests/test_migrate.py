"""`beeuni tools migrate` beyond its golden cases (tests/golden/migrate-*, run
by test_eject.py): a dry run changes nothing, a run that fails half-way takes its writes back."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from beeuni.cli.tool_files import Changes
from beeuni.engine.edit.copies import content_digest
from beeuni.engine.paths import Repository
from conftest import ROOT, run_beeuni

SHAPES = ROOT / "tests" / "golden" / "migrate-docs-shapes" / "project"


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


def test_a_dry_run_changes_nothing_not_even_timestamps(tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(SHAPES, work)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    before = snapshot(work)
    result = run_beeuni(["tools", "migrate", "project", "--dry-run"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "convert  .opencode/tools/math.ts → tools/math_add.ts" in result.stdout
    assert snapshot(work) == before


def test_a_second_run_finds_only_what_it_could_not_convert(tmp_path: Path) -> None:
    work = tmp_path / "project"
    shutil.copytree(SHAPES, work)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    assert run_beeuni(["tools", "migrate", "project"], cwd=tmp_path).code == 0
    again = run_beeuni(["tools", "migrate", "project"], cwd=tmp_path)
    assert again.code == 0
    assert again.stdout.startswith("Nothing was changed:\n")
    assert "convert" not in again.stdout and "delete" not in again.stdout


def test_changes_that_fail_half_way_are_taken_back(tmp_path: Path) -> None:
    (tmp_path / "old.ts").write_bytes(b"old")
    (tmp_path / "kept.ts").write_bytes(b"kept")
    (tmp_path / "blocked").write_bytes(b"a file where a folder must be")
    repo = Repository(str(tmp_path))
    changes = Changes(repo)
    changes.write("new.ts", str(tmp_path / "new.ts"), b"new")
    changes.write("kept.ts", str(tmp_path / "kept.ts"), b"changed")
    changes.delete("old.ts", str(tmp_path / "old.ts"))
    changes.write("blocked/module.ts", str(tmp_path / "blocked" / "module.ts"), b"cannot be written")
    with pytest.raises(OSError):
        changes.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "kept.ts", "old.ts"]
    assert (tmp_path / "kept.ts").read_bytes() == b"kept" and (tmp_path / "old.ts").read_bytes() == b"old"


REAL = ROOT / "tests" / "golden" / "migrate-real-shapes" / "project"


def git(work: Path, *args: str) -> str:
    command = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def test_every_version_of_a_beeuni_tool_in_the_history_is_known_by_its_content() -> None:
    """Each source a Beeuni tool ever had in this repository's history is listed in the rules
    (`BEEUNI_TOOL_EARLIER_DIGESTS`): a project may hold a copy of any of them."""
    if not (ROOT / ".git").exists():
        pytest.skip("no git history here")
    rules = (ROOT / "rules" / "commands.rules").read_text()
    missing = []
    shipped = {content_digest(path.read_bytes()) for path in (ROOT / "rules" / "beeuni_tools").glob("*.ts")}
    # the versions main had (its first parents), the one shipped now aside: it is known by its file
    commits = git(
        ROOT, "log", "--first-parent", "--format=%H", "HEAD", "--", "daemon/beeuni_tools", "rules/beeuni_tools"
    )
    commits = commits.split()
    assert commits, "no version of a Beeuni tool found in the history"
    for commit in commits:
        for path in git(ROOT, "ls-tree", "-r", "--name-only", commit).split("\n"):
            if re.fullmatch(r"(daemon|rules)/beeuni_tools/[a-z_]+\.ts", path):
                data = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True).stdout
                if content_digest(data) not in rules and content_digest(data) not in shipped:
                    missing.append(f"{Path(path).stem}: {content_digest(data)} ({commit[:10]})")
    assert not missing, "add these to BEEUNI_TOOL_EARLIER_DIGESTS in rules/commands.rules: " + ", ".join(missing)


def test_a_copy_is_known_by_content_whatever_its_line_ends_and_a_changed_one_is_not() -> None:
    shipped = (ROOT / "rules" / "beeuni_tools" / "memory.ts").read_bytes()
    assert content_digest(shipped.replace(b"\n", b"\r\n")) == content_digest(b"\xef\xbb\xbf" + shipped)
    assert content_digest(shipped) != content_digest(shipped.replace(b"memory/", b"notes/"))


def project_in_git(tmp_path: Path, committed: list[str]) -> Path:
    work = tmp_path / "project"
    shutil.copytree(REAL, work)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    git(work, "init", "-q")
    git(work, "add", "--", *committed)
    git(work, "commit", "-q", "-m", "before")
    return work


def test_a_projects_own_memory_tool_is_never_deleted(tmp_path: Path) -> None:
    """The project's own `.opencode/tools/memory.ts` (its own args and helper, never committed)
    is no copy of the Beeuni tool memory: it stays, byte for byte, with its reason."""
    work = project_in_git(tmp_path, ["beeuni.yaml"])
    own = (work / ".opencode/tools/memory.ts").read_bytes()
    result = run_beeuni(["tools", "migrate", "project"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (work / ".opencode/tools/memory.ts").read_bytes() == own
    assert "keep     .opencode/tools/memory.ts: `memory` is a Beeuni tool's name" in result.stdout
    assert "copy of the Beeuni tool memory" not in result.stdout
    converted = sorted((work / "tools").glob("*.ts"))
    assert [p.name for p in converted] == ["deploy.ts", "github_issues.ts", "github_pull.ts"]
    for module in converted:  # a served module gets no harness package
        assert "@opencode-ai/plugin" not in module.read_text(), module.name
    assert "keep     .opencode/tools/check_json.ts: `check_json` would still use `@opencode-ai/plugin`" in result.stdout


def test_only_what_git_restores_is_deleted_and_git_restores_it(tmp_path: Path) -> None:
    work = project_in_git(
        tmp_path, ["beeuni.yaml", "harnesses/opencode/tools/web_search.ts", ".opencode/tools/github.ts"]
    )
    committed = (work / ".opencode/tools/github.ts").read_bytes()
    (work / "harnesses/opencode/tools/web_search.ts").write_bytes(
        (ROOT / "rules" / "beeuni_tools" / "web_search.ts").read_bytes().replace(b"\n", b"\r\n")
    )  # tracked, but not as git has it: moved aside, though still a copy by its content
    show = (work / "harnesses/opencode/tools/show.ts").read_bytes()
    result = run_beeuni(["tools", "migrate", "project"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "move     harnesses/opencode/tools/web_search.ts → harnesses/opencode/tools/web_search.ts.migrated-orig" in (
        result.stdout
    )
    assert "it differs from what git has" in result.stdout
    assert (work / "harnesses/opencode/tools/show.ts.migrated-orig").read_bytes() == show
    assert not (work / "harnesses/opencode/tools/show.ts").exists()
    assert not (work / ".opencode/tools/github.ts").exists()  # committed, unchanged: deleted ...
    git(work, "checkout", "--", ".opencode/tools/github.ts")
    assert (work / ".opencode/tools/github.ts").read_bytes() == committed  # ... and git gives it back


def test_an_ignored_file_is_moved_aside(tmp_path: Path) -> None:
    work = project_in_git(tmp_path, ["beeuni.yaml"])
    (work / ".gitignore").write_text(".opencode/tools/github.ts\n")
    result = run_beeuni(["tools", "migrate", "project", "--dry-run"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (
        "move     .opencode/tools/github.ts → .opencode/tools/github.ts.migrated-orig  (converted; git ignores it"
        in (result.stdout)
    )


def test_a_move_never_replaces_a_file(tmp_path: Path) -> None:
    work = project_in_git(tmp_path, ["beeuni.yaml"])
    (work / "harnesses/opencode/tools/show.ts.migrated-orig").write_bytes(b"an earlier run's")
    result = run_beeuni(["tools", "migrate", "project"], cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (
        "keep     harnesses/opencode/tools/show.ts: git does not track it, so it would be moved aside" in result.stdout
    )
    assert (work / "harnesses/opencode/tools/show.ts.migrated-orig").read_bytes() == b"an earlier run's"


def test_a_converted_output_result_gives_the_model_its_output(tmp_path: Path) -> None:
    """opencode showed the model the `output` of `{ output, metadata }`: so does the served module."""
    work = project_in_git(tmp_path, ["beeuni.yaml"])
    (work / ".opencode/tools/echo.ts").write_text(
        'import { tool } from "@opencode-ai/plugin"\n\n'
        "export default tool({\n"
        '  description: "Echo",\n'
        '  args: { text: tool.schema.string().default("hi") },\n'
        "  async execute(args) {\n"
        '    return { title: "echo", output: `said ${args.text}`, metadata: { n: 1 } }\n'
        "  },\n"
        "})\n"
    )
    assert run_beeuni(["tools", "migrate", "project"], cwd=tmp_path).code == 0
    git(work, "add", "-A")
    called = run_beeuni(["tools", "call", "echo", "project", "--args", '{"text": "yes"}'], cwd=tmp_path)
    assert called.code == 0, called.stderr
    assert "said yes" in called.stdout and "metadata" not in called.stdout
    assert "@opencode-ai/plugin" not in (work / "tools/echo.ts").read_text()


def test_every_environment_read_and_context_use_is_found() -> None:
    """The shapes real tools read their environment and context in, as the "left to you" list
    names them."""
    from beeuni.engine.edit.opencode_source import read_tool_file

    source = b"""import { tool } from "@opencode-ai/plugin"
import { helper } from "./lib"

const { env } = process
const alsoEnv = globalThis.process.env

export default tool({
  description: "d",
  args: {},
  async execute(args, ctx) {
    const a = globalThis.process.env.FROM_GLOBAL
    const b = env.FROM_DESTRUCTURED
    const c = alsoEnv["FROM_ALIAS"]
    const { FROM_PATTERN } = Bun.env
    const all = Object.keys(process.env)
    await helper(ctx)
    return `${a}${b}${c}${FROM_PATTERN}${all}${ctx.sessionID}${ctx.callID}${ctx.abort}`
  },
})
"""
    readers = ["process.env", "Bun.env", "import.meta.env", "globalThis.process.env"]
    found = read_tool_file(source, readers)
    assert found.problem is None
    assert found.env_reads == ["FROM_ALIAS", "FROM_DESTRUCTURED", "FROM_GLOBAL", "FROM_PATTERN"]
    assert [w.split(" ")[0] for w in found.env_whole] == ["15:29"]
    (exported,) = found.exports
    assert exported.context_fields == ["abort", "callID", "sessionID"]
    assert [p.split(" ")[0] for p in exported.context_passed] == ["16:18"]
