"""`beeuni lsp` end to end: the real server over stdio, driven by a JSON-RPC client as an editor
drives it (tests/lsp_client.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from lsp_client import LspClient

MANIFEST = """imports: [more/tools.yaml]
tools:
  web_search: beeuni:image_search
  lookup: tools/lookup.ts
agents:
  reviewer:
    tools: [read, lookup]
"""
FIXED = MANIFEST.replace("beeuni:image_search", "beeuni:web_search")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "more").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "beeuni.yaml").write_text(MANIFEST)
    (root / "more" / "tools.yaml").write_text("tools:\n  memory: beeuni:memory\n")
    (root / "tools" / "lookup.ts").write_text("export default {}\n")
    return root


@pytest.fixture
def client(project: Path, tmp_path: Path) -> Iterator[LspClient]:
    env = {**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache")}
    started = LspClient(project, env=env)
    started.initialize(project)
    yield started
    started.close()


def position(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


def test_initialize_offers_the_features(project: Path, tmp_path: Path) -> None:
    started = LspClient(project, env={**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache")})
    try:
        capabilities = started.initialize(project)["capabilities"]
    finally:
        started.close()
    assert capabilities["hoverProvider"]
    assert capabilities["completionProvider"]["triggerCharacters"]
    assert capabilities["textDocumentSync"]["change"] == 2  # incremental


def test_diagnostics_follow_the_unsaved_buffer_at_the_value_s_range(client: LspClient, project: Path) -> None:
    uri = client.open(project / "beeuni.yaml", MANIFEST)
    [diagnostic] = client.diagnostics(uri)
    assert diagnostic["code"] == "tools/beeuni-ref"
    assert diagnostic["severity"] == 1
    assert diagnostic["source"] == "beeuni"
    # `  web_search: beeuni:image_search` — the value, as `beeuni validate` reports it (3:15)
    assert diagnostic["range"] == {"start": position(2, 14), "end": position(2, 33)}

    client.change(uri, FIXED)
    assert client.diagnostics(uri) == []
    assert (project / "beeuni.yaml").read_text() == MANIFEST  # nothing was saved: the buffer was read

    client.edit(uri, {"start": position(6, 18), "end": position(6, 24)}, "lokup")
    [typo] = client.diagnostics(uri)
    assert typo["code"] == "agents/unknown-tool"
    assert typo["range"] == {"start": position(6, 18), "end": position(6, 23)}


def test_an_import_s_buffer_is_checked_with_its_manifest(client: LspClient, project: Path) -> None:
    manifest = client.open(project / "beeuni.yaml", FIXED)
    imported = (project / "more" / "tools.yaml").as_uri()
    assert client.diagnostics(manifest) == []
    assert client.diagnostics(imported) == []  # every file of the project is published
    client.open(project / "more" / "tools.yaml", "tools:\n  extra: beeuni:memroy\n")
    [diagnostic] = client.diagnostics(imported)
    assert diagnostic["code"] == "tools/unknown-beeuni-tool"
    assert diagnostic["range"] == {"start": position(1, 9), "end": position(1, 22)}
    assert "did you mean `memory`" in diagnostic["message"]


def test_ranges_count_utf_16_code_units(client: LspClient, project: Path) -> None:
    uri = client.open(project / "beeuni.yaml", 'tools:\n  "a\U0001f600": beeuni:nope\n')
    found = {d["code"]: d["range"] for d in client.diagnostics(uri)}
    # the emoji is one code point and two UTF-16 units: the value starts at code point 8, unit 9
    assert found["tools/unknown-beeuni-tool"] == {"start": position(1, 9), "end": position(1, 20)}
    assert found["tools/name-format"] == {"start": position(1, 2), "end": position(1, 7)}


def test_hover_shows_a_tool_s_kind_source_and_description_and_a_diagnostic_s_rule(
    client: LspClient, project: Path
) -> None:
    uri = client.open(project / "beeuni.yaml", MANIFEST.replace("beeuni:image_search", "beeuni:web_search"))
    client.diagnostics(uri)
    tool = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(2, 5)})
    text = tool["contents"]["value"]
    assert "**web_search** — beeuni tool, `beeuni:web_search`" in text
    assert "Search the web." in text
    project_tool = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(6, 20)})
    assert "**lookup** — project tool, `tools/lookup.ts`" in project_tool["contents"]["value"]
    harness = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(6, 14)})
    assert "harness tool (standard, experimental)" in harness["contents"]["value"]

    client.change(uri, MANIFEST)
    client.diagnostics(uri)
    rule = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(2, 20)})
    assert "**tools/beeuni-ref** (error)" in rule["contents"]["value"]
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(0, 0)}) is None


def completion_labels(client: LspClient, uri: str, line: int, character: int) -> list[str]:
    found = client.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position(line, character)}
    )
    return [item["label"] for item in found["items"]]


def test_completion_offers_the_rules_data_where_it_fits(client: LspClient, project: Path) -> None:
    text = FIXED + "    secrets: all\n  writer:\n    tools: {exclude: [we]}\n    \n"
    uri = client.open(project / "beeuni.yaml", text)
    client.diagnostics(uri)
    in_list = completion_labels(client, uri, 6, 17)  # `tools: [read, |lookup]`
    assert {"read", "bash", "web_search", "memory", "lookup"} <= set(in_list)
    assert "image_search" not in in_list  # the project does not load it
    in_exclude = completion_labels(client, uri, 9, 24)  # `exclude: [we|]`
    assert "web_search" in in_exclude and "webfetch" in in_exclude
    beeuni_value = client.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position(2, 24)}
    )  # `web_search: beeuni:w|eb_search`
    [item] = [item for item in beeuni_value["items"] if item["label"] == "beeuni:web_search"]
    assert item["textEdit"]["range"] == {"start": position(2, 14), "end": position(2, 31)}
    assert set(completion_labels(client, uri, 10, 4)) >= {"tools", "secrets", "connectors"}  # an agent's keys


def test_rules_files_get_the_diagnostics_of_rules_check(tmp_path: Path, project: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("tests"))
    started = LspClient(
        project, "--rules", str(rules), env={**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache")}
    )
    try:
        started.initialize(project)
        source = (rules / "tools.rules").read_text()
        broken = source.replace("let BEEUNI_PREFIX = ", "let BEEUNI_PREFIX = = ", 1)
        uri = started.open(rules / "tools.rules", broken)
        found = started.diagnostics(uri)
        line = broken[: broken.index("let BEEUNI_PREFIX = = ")].count("\n")
        assert any(d["severity"] == 1 and d["range"]["start"]["line"] == line for d in found), found
        started.change(uri, source)
        assert [d for d in started.diagnostics(uri) if d["severity"] == 1] == []
    finally:
        started.close()


def apply(text: str, edits: list[dict[str, Any]]) -> str:
    """The text with LSP text edits applied (UTF-16 positions; the lines here are ASCII)."""
    lines = text.split("\n")
    offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]

    def offset(at: dict[str, int]) -> int:
        return offsets[at["line"]] + at["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]
    return text


def test_code_actions_fix_or_silence_the_diagnostic_and_it_clears(client: LspClient, project: Path) -> None:
    uri = client.open(project / "beeuni.yaml", MANIFEST)
    [diagnostic] = client.diagnostics(uri)
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    fix, silence = actions
    assert fix["kind"] == "quickfix" and fix["isPreferred"]
    assert fix["title"] == "Change to `beeuni:web_search` (tools/beeuni-ref)"
    [edit] = fix["edit"]["changes"][uri]
    assert edit == {"range": diagnostic["range"], "newText": "beeuni:web_search"}
    client.change(uri, apply(MANIFEST, [edit]))
    assert client.diagnostics(uri) == []

    client.change(uri, MANIFEST)
    client.diagnostics(uri)
    suppressed = apply(MANIFEST, silence["edit"]["changes"][uri])
    assert "# beeuni: ignore[tools/beeuni-ref]" in suppressed
    client.change(uri, suppressed)
    assert client.diagnostics(uri) == []


def test_a_rules_value_of_the_wrong_shape_is_a_rules_error_not_a_crash(tmp_path: Path, project: Path) -> None:
    """`hover_tool` of a broken copy of the rules gives a number for one name (`rules check`
    tries it with the Beeuni tools' names only, so the copy loads): hovering over that name
    shows the error[rules] at the function's definition and answers nothing; the server goes on."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("tests"))
    source = (rules / "editors.rules").read_text()
    broken = '  return if tool == "lookup" then 5 else if record != null then ['
    (rules / "editors.rules").write_text(source.replace("  return if record != null then [", broken, 1))
    started = LspClient(
        project, "--rules", str(rules), env={**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache")}
    )
    try:
        started.initialize(project)
        uri = started.open(project / "beeuni.yaml", FIXED)
        started.diagnostics(uri)
        started.next_id += 1
        hover = {"textDocument": {"uri": uri}, "position": position(6, 20)}  # over `lookup`
        started.send({"id": started.next_id, "method": "textDocument/hover", "params": hover})
        seen: list[dict[str, Any]] = []
        answer = started.wait_for(lambda m: seen.append(m) or (m.get("id") == started.next_id and "method" not in m))
        assert answer["result"] is None
        [shown] = [m["params"]["message"] for m in seen if m.get("method") == "window/showMessage"]
        line = next(i for i, text in enumerate(source.splitlines(), 1) if text.startswith("fn hover_tool("))
        assert shown.startswith(f'{rules}/editors.rules:{line}:1: error[rules] `hover_tool("lookup")` must be null')
        tool = started.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position(2, 5)})
        assert "**web_search** — beeuni tool" in tool["contents"]["value"]
    finally:
        started.close()


def test_a_long_editing_session_does_not_grow_the_server(tmp_path: Path) -> None:
    """The server collects its cycles (a command runs without the collector, cli/main.py):
    without it each check of this 500-tool manifest left some 2.5 MB behind, 370 MB over these
    edits."""
    root = tmp_path / "large"
    root.mkdir()
    lines = ["tools:"] + [f"  tool_{i:03d}: tools/tool_{i:03d}.ts" for i in range(500)]
    text = "\n".join(lines) + "\n"
    (root / "beeuni.yaml").write_text(text)
    client = LspClient(root, env={**os.environ, "BEEUNI_CACHE_DIR": str(tmp_path / "rule-cache")})
    try:
        client.initialize(root)
        uri = client.open(root / "beeuni.yaml", text)
        client.diagnostics(uri)

        def edit_many(count: int) -> None:
            for i in range(count):
                client.change(uri, text.replace("tool_001:", f"tool_{i % 9}01:", 1))
                client.diagnostics(uri)

        edit_many(20)
        before = _resident_mib(client.process.pid)
        edit_many(150)
        assert _resident_mib(client.process.pid) - before < 60
    finally:
        client.close()


def _resident_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024
