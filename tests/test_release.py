"""The release view (engine/release/git_index.py, engine/release/facts.py, rules/release.rules): what git's
index holds, read from the index itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from beeuni.engine.release.git_index import IGNORED, TRACKED, UNTRACKED, Release
from conftest import ROOT, run_beeuni

MODULE = "export default { description: 'x', parameters: { type: 'object', properties: {} }, execute() {} }\n"


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


@pytest.fixture(params=["sha1", "sha256"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A repository of SHA-1 objects, or of SHA-256 ones (their index entries are 12 bytes longer)."""
    folder = tmp_path / "repo"
    (folder / "project" / "tools").mkdir(parents=True)
    (folder / "project" / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\n  a: tools/a.ts\n")
    (folder / "project" / "tools" / "a.ts").write_text(MODULE)
    (folder / "project" / "tools" / "b.ts").write_text(MODULE)
    (folder / "project" / "tools" / "c.ts").write_text(MODULE)
    (folder / ".gitignore").write_text("project/tools/c.ts\n")
    git(folder, "init", "-q", f"--object-format={request.param}")
    git(folder, "add", ".gitignore", "project/beeuni.yaml", "project/tools/a.ts")
    return folder


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_says_what_is_tracked(repo: Path, version: str) -> None:
    git(repo, "add", "-N", "project/tools/b.ts")  # intent to add: not in a commit yet
    git(repo, "update-index", "--index-version", version)
    release = Release.of(str(repo / "project"))
    assert release is not None and release.prefix == "project/"
    assert release.state("tools/a.ts") == TRACKED
    assert release.state("tools/b.ts") == UNTRACKED
    assert release.state("tools/c.ts") == IGNORED
    assert release.state("tools/a.t") == UNTRACKED  # a prefix of a tracked path is not tracked
    assert release.holds_under_top("project/tools") and not release.holds_under_top("project/tool")
    assert release.tracked_paths() == [".gitignore", "project/beeuni.yaml", "project/tools/a.ts"]


def test_no_git_repository_no_release(tmp_path: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\n  a: tools/a.ts\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.ts").write_text("import { z } from 'zod'\n" + MODULE)
    assert Release.of(str(tmp_path)) is None
    result = run_beeuni(["validate", "."], cwd=tmp_path)
    assert "release/" not in result.stdout and result.code == 0, result.stdout


def test_a_git_add_changes_the_answer(repo: Path) -> None:
    """Staging the module makes it part of the release."""
    project = repo / "project"
    (project / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\n  a: tools/a.ts\n  b: tools/b.ts\n")
    first = run_beeuni(["validate", "."], cwd=project)
    assert "release/module-not-tracked" in first.stdout and first.code == 1
    git(repo, "add", "project/tools/b.ts")
    after = run_beeuni(["validate", "."], cwd=project)
    assert "release/" not in after.stdout and after.code == 0, after.stdout


def test_imports_are_followed_and_located(repo: Path) -> None:
    project = repo / "project"
    (project / "tools" / "a.ts").write_text(
        "import fs from 'node:fs'\nimport { serve } from 'bun'\nimport { h } from './lib/h.js'\n" + MODULE
    )
    (project / "tools" / "lib").mkdir()
    (project / "tools" / "lib" / "h.ts").write_text("import { k } from '../k'\nimport { x } from '@scope/pkg/sub'\n")
    (project / "tools" / "k.ts").write_text("export const k = 1\n")
    git(repo, "add", "project/tools/a.ts", "project/tools/lib/h.ts")
    result = run_beeuni(["validate", ".", "--format", "concise"], cwd=project)
    lines = [line for line in result.stdout.splitlines() if "release/" in line]
    assert lines[0].startswith("tools/lib/h.ts:1:20: error[release/import-not-tracked] `../k` resolves to `tools/k.ts`")
    package = "tools/lib/h.ts:2:20: error[release/package-not-in-release] tool `a` imports the package `@scope/pkg`"
    assert lines[1].startswith(package)
    assert len(lines) == 2, result.stdout


def test_the_language_server_knows_the_release(repo: Path, tmp_path: Path) -> None:
    """An untracked module in the editor: the diagnostic at its declaration, gone after `git add`."""
    from lsp_client import LspClient

    project = repo / "project"
    text = "tools:\n  web_search: beeuni:web_search\n  a: tools/a.ts\n  b: tools/b.ts\n"
    client = LspClient(project, env={**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "cache")})
    try:
        client.initialize(project)
        uri = client.open(project / "beeuni.yaml", text)
        [diagnostic] = client.diagnostics(uri)
        assert diagnostic["code"] == "release/module-not-tracked"
        assert diagnostic["range"]["start"] == {"line": 3, "character": 5}
        assert "`git add tools/b.ts`" in diagnostic["message"]
        git(repo, "add", "project/tools/b.ts")
        client.change(uri, text + "\n")
        assert client.diagnostics(uri) == []
    finally:
        client.close()


def test_modules_load_in_a_copy_of_the_release(repo: Path) -> None:
    """`validate --modules` loads each module where only tracked files are: a package that an
    ignored node_modules supplies does not load there, as in every session; tracked, it does."""
    project = repo / "project"
    (project / "tools" / "a.ts").write_text(
        "import { z } from 'zod'\nexport default { description: 'x', parameters: z.toJSONSchema({}), execute() {} }\n"
    )
    package = repo / "node_modules" / "zod"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "zod", "type": "module", "main": "index.js"}\n')
    (package / "index.js").write_text("export const z = { toJSONSchema: () => ({ type: 'object', properties: {} }) }\n")
    (repo / ".gitignore").write_text("node_modules/\n")
    git(repo, "add", "-A")
    ignored = run_beeuni(["validate", ".", "--modules", "--format", "concise"], cwd=project)
    assert "error[modules/load] `tools/a.ts` does not load: Cannot find package 'zod'" in ignored.stdout, ignored.stdout
    assert "error[release/package-not-in-release]" in ignored.stdout
    git(repo, "add", "-f", "node_modules/zod")
    tracked = run_beeuni(["validate", ".", "--modules", "--format", "concise"], cwd=project)
    assert tracked.code == 0 and "error" not in tracked.stdout, tracked.stdout


ZOD = ROOT / "node_modules" / "zod"  # the set-up's, for opencode's plugin


@pytest.mark.parametrize(
    "module",
    [
        # the design document's way of writing it
        "import { z } from 'zod'\nexport default { description: 'x',\n"
        "  parameters: z.toJSONSchema(z.object({ id: z.string().describe('The id') })), execute() {} }\n",
        # a formatter's: double quotes, semicolons, the schema over several lines, an apostrophe
        'import { z } from "zod";\n\nexport default {\n  description: "x",\n  parameters: z.toJSONSchema(\n'
        '    z.object({\n      id: z.string().describe("The order\'s id"),\n    }),\n  ),\n  execute() {},\n};\n',
        # line comments, statements without semicolons and Windows line endings
        "import {\r\n  z, // schemas\r\n} from 'zod'\r\nexport default {\r\n  description: 'x',\r\n"
        "  parameters: z.toJSONSchema(z.object({\r\n    // the id\r\n    id: z.string()"
        ".refine((v) => {\r\n      const n = v.length\r\n      return n > 0\r\n    }).describe('The id'),\r\n  })),\r\n"
        "  execute() {},\r\n}\r\n",
    ],
)
def test_the_printed_schema_command_runs_in_a_shell(tmp_path: Path, module: str) -> None:
    """The fix of a package the release lacks, pasted into a shell in the manifest's folder where
    the package resolves (CI's ignored node_modules), prints the module's schema as plain JSON
    Schema, however the module is written."""
    (tmp_path / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\n  a: tools/a.ts\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.ts").write_text(module)
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "zod").symlink_to(ZOD)
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    result = run_beeuni(["validate", ".", "--format", "json"], cwd=tmp_path)
    [message] = [d["message"] for d in json.loads(result.stdout)["diagnostics"] if "zod" in d["message"]]
    command = message.split("folder, with ", 1)[1].rsplit(" and paste", 1)[0]
    bun_folder = str(Path(sys.executable).parent)  # the set-up links Bun there
    shell = subprocess.run(
        ["sh", "-c", command],
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bun_folder}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shell.returncode == 0, (command, shell.stderr)
    schema = json.loads(shell.stdout)
    assert schema["type"] == "object" and schema["required"] == ["id"], schema
    assert schema["properties"]["id"]["description"] in ("The id", "The order's id")
