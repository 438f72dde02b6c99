"""The five Beeuni tools, run in real Bun against the stand-in platform API."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from platform_standin import TOKEN, PlatformStandIn

BUN = ROOT / "node_modules" / ".bin" / "bun"
SHIPPED = ROOT / "rules" / "beeuni_tools"
RUNNER = ROOT / "tests" / "bun" / "run_tool.ts"


@pytest.fixture(scope="module")
def platform() -> Iterator[PlatformStandIn]:
    with PlatformStandIn() as standin:
        yield standin


def call(tool: str, args: dict[str, Any], env: dict[str, str], cwd: Path | None = None) -> dict[str, Any]:
    context = {"env": env, **({"cwd": str(cwd)} if cwd else {})}
    done = subprocess.run(
        [str(BUN), str(RUNNER), str(SHIPPED / f"{tool}.ts"), json.dumps(args), json.dumps(context)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def env_for(platform: PlatformStandIn) -> dict[str, str]:
    return {"BEEUNI_API_URL": platform.url, "BEEUNI_TOKEN": TOKEN}


def test_modules_import_only_node_builtins() -> None:
    for module in sorted(SHIPPED.glob("*.ts")):
        imports = re.findall(r"^import .* from '([^']+)'", module.read_text(), re.MULTILINE)
        assert all(name.startswith("node:") for name in imports), (module.name, imports)
        assert "export default {" in module.read_text()


def test_web_search_runs_each_query(platform: PlatformStandIn) -> None:
    outcome = call("web_search", {"query": "bun runtime ||| lark parser", "max_results": 2}, env_for(platform))
    assert outcome["ok"], outcome
    results = outcome["result"]["results"]
    assert [entry["query"] for entry in results] == ["bun runtime", "lark parser"]
    assert results[0]["results"][0] == {
        "title": "bun runtime — result 1",
        "url": "https://example.com/1?q=bun runtime",
        "snippet": "About bun runtime.",
    }
    assert len(results[1]["results"]) == 2


def test_image_search(platform: PlatformStandIn) -> None:
    outcome = call("image_search", {"query": "bees"}, env_for(platform))
    assert outcome["result"]["query"] == "bees"
    assert outcome["result"]["results"][0]["thumbnail_url"] == "https://images.example.com/1-thumb.jpg"


def test_scrape_webpage(platform: PlatformStandIn) -> None:
    outcome = call("scrape_webpage", {"url": "https://example.com"}, env_for(platform))
    assert outcome["result"]["title"] == "Example Domain"
    assert outcome["result"]["url"] == "https://example.com/"
    refused = call("scrape_webpage", {"url": "file:///etc/passwd"}, env_for(platform))
    assert refused == {"ok": False, "error": "scrape_webpage: `file:///etc/passwd` is not an http or https URL."}


@pytest.mark.parametrize("tool", ["web_search", "image_search", "scrape_webpage"])
def test_platform_tools_say_what_is_missing(tool: str, platform: PlatformStandIn) -> None:
    args = {"url": "https://example.com"} if tool == "scrape_webpage" else {"query": "x"}
    missing = call(tool, args, {})
    assert not missing["ok"]
    assert missing["error"].startswith("BEEUNI_API_URL is not set: ")
    wrong_token = call(tool, args, {"BEEUNI_API_URL": platform.url, "BEEUNI_TOKEN": "wrong"})
    assert "the platform API answered 401" in wrong_token["error"]


def test_memory_commands(tmp_path: Path) -> None:
    def memory(**args: Any) -> dict[str, Any]:
        return call("memory", args, {}, cwd=tmp_path)

    assert (
        memory(command="create", path="memory/notes.md", file_text="one\nthree\n")["result"]
        == "created memory/notes.md"
    )
    assert memory(command="insert", path="notes.md", insert_line=1, insert_text="two")["ok"]
    assert memory(command="str_replace", path="memory/notes.md", old_str="three", new_str="3")["ok"]
    assert (tmp_path / "memory" / "notes.md").read_text() == "one\ntwo\n3\n"
    assert memory(command="view", path="memory/notes.md")["result"].splitlines()[:2] == ["     1\tone", "     2\ttwo"]
    assert memory(command="rename", path="memory/notes.md", new_path="memory/archive/notes.md")["ok"]
    assert memory(command="view", path="memory")["result"] == "memory/\n  archive/"
    assert memory(command="delete", path="memory/archive")["result"] == "deleted memory/archive"
    assert (
        memory(command="str_replace", path="memory/none.md", old_str="x")["error"]
        == "memory: memory/none.md does not exist"
    )


@pytest.mark.parametrize("path", ["../x", "memory/../../etc/passwd", "/memory/../secrets"])
def test_memory_refuses_paths_that_leave_memory(tmp_path: Path, path: str) -> None:
    outcome = call("memory", {"command": "view", "path": path}, {}, cwd=tmp_path)
    assert outcome == {"ok": False, "error": f"memory: {path} leaves memory/"}


def test_show_checks_what_it_names(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("# Report\n")

    def show(**args: Any) -> dict[str, Any]:
        return call("show", args, {}, cwd=tmp_path)

    assert show(type="file", path="report.md")["result"] == {"type": "file", "title": None, "path": "report.md"}
    assert show(type="url", url="https://example.com")["result"]["url"] == "https://example.com/"
    assert show(type="markdown", content="**hi**")["result"]["content"] == "**hi**"
    items = show(type="items", items=[{"title": "a", "path": "report.md"}, {"title": "b", "url": "https://x.org"}])
    assert items["result"]["items"][1] == {"title": "b", "url": "https://x.org/"}
    assert show(type="file", path="missing.md")["error"] == "show: missing.md does not exist"
    assert show(type="file", path="../outside")["error"] == "show: ../outside is outside the repository"
    assert show(type="chart")["error"] == "show: unknown type `chart`; types: file, image, url, markdown, items"


@pytest.fixture
def linked_memory(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose memory/ holds links out of it (to a file, a folder, nothing) and
    links that stay inside; and the folder outside that they point to."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "memory" / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (repo / "state.json").write_text("{}\n")
    (repo / "memory" / "notes.md").write_text("one\n")
    links = {
        "out_file": outside / "secret.txt",
        "out_dir": outside,
        "dangling": outside / "new.md",
        "up": Path("../state.json"),  # relative, by `..`: inside the repository, outside memory/
        "loop": Path("loop"),
        "in_file": Path("notes.md"),
        "in_dir": Path("sub"),
    }
    for name, target in links.items():
        (repo / "memory" / name).symlink_to(target)
    return repo, outside


REFUSED_THROUGH_LINKS = [
    {"command": "view", "path": "memory/out_file"},
    {"command": "view", "path": "memory/out_dir"},
    {"command": "view", "path": "memory/out_dir/secret.txt"},
    {"command": "view", "path": "memory/up"},
    {"command": "create", "path": "memory/dangling", "file_text": "x"},
    {"command": "create", "path": "memory/out_dir/new.md", "file_text": "x"},
    {"command": "create", "path": "memory/out_dir/deeper/new.md", "file_text": "x"},
    {"command": "str_replace", "path": "memory/out_file", "old_str": "secret", "new_str": "x"},
    {"command": "insert", "path": "memory/out_dir/secret.txt", "insert_line": 0, "insert_text": "x"},
    {"command": "insert", "path": "memory/up", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "memory/out_dir/secret.txt"},
    {"command": "rename", "path": "memory/out_file", "new_path": "memory/stolen.txt"},
    {"command": "rename", "path": "memory/notes.md", "new_path": "memory/out_dir/notes.md"},
    {"command": "rename", "path": "memory/notes.md", "new_path": "memory/dangling"},
]


@pytest.mark.parametrize("args", REFUSED_THROUGH_LINKS, ids=lambda a: f"{a['command']}-{a['path']}")
def test_memory_refuses_links_out_of_memory(linked_memory: tuple[Path, Path], args: dict[str, Any]) -> None:
    repo, outside = linked_memory
    before = {
        path: path.read_bytes() for path in (*outside.rglob("*"), repo / "state.json", repo / "memory" / "notes.md")
    }
    outcome = call("memory", args, {}, cwd=repo)
    moved = "new_path" in args and args["path"] == "memory/notes.md"
    culprit = args["new_path"] if moved else args["path"]
    assert outcome == {
        "ok": False,
        "error": f"memory: {culprit} leads out of memory/ through a symbolic link;"
        " name a file or folder that is inside memory/",
    }
    assert {
        path: path.read_bytes() for path in (*outside.rglob("*"), repo / "state.json", repo / "memory" / "notes.md")
    } == before
    assert sorted(p.name for p in (repo / "memory").iterdir()) == [
        "dangling",
        "in_dir",
        "in_file",
        "loop",
        "notes.md",
        "out_dir",
        "out_file",
        "sub",
        "up",
    ]


def test_memory_follows_links_that_stay_inside(linked_memory: tuple[Path, Path]) -> None:
    repo, _ = linked_memory

    def memory(**args: Any) -> dict[str, Any]:
        return call("memory", args, {}, cwd=repo)

    assert memory(command="view", path="memory/in_file")["result"] == "     1\tone\n     2\t"
    assert memory(command="create", path="memory/in_dir/plan.md", file_text="plan")["ok"]
    assert (repo / "memory" / "sub" / "plan.md").read_text() == "plan"
    assert memory(command="str_replace", path="memory/in_file", old_str="one", new_str="1")["ok"]
    assert (repo / "memory" / "notes.md").read_text() == "1\n"
    assert memory(command="rename", path="memory/in_dir/plan.md", new_path="memory/plan.md")["ok"]
    assert memory(command="delete", path="memory/in_file")["ok"]  # the link goes, its target stays
    assert (repo / "memory" / "notes.md").exists() and not (repo / "memory" / "in_file").is_symlink()
    assert memory(command="view", path="memory/loop")["error"].startswith("memory: ")


def test_memory_refuses_a_memory_folder_that_leads_out_of_the_repository(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "memory").symlink_to(outside)
    outcome = call("memory", {"command": "create", "path": "memory/x.md", "file_text": "x"}, {}, cwd=repo)
    assert outcome == {
        "ok": False,
        "error": "memory: memory/ is a symbolic link out of the repository; the memory tool works only inside it",
    }
    assert list(outside.iterdir()) == []
