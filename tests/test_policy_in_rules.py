"""Policy lives in rules/ only: a maintainer changes it by editing a copy of the rules, and the
installed commands follow with no Python changed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_beeuni
from shipped_texts import filled

SIXTH_TOOL = "code_search"
TMP_CHECK = """
rule tools/no-tmp-names {
  severity error
  doc "Tool names may not start with `tmp_`: temporary tools do not belong in a manifest."
  for t in tools
  when starts_with(t.name, "tmp_")
  at t.name
  message f"`{t.name}` starts with `tmp_`; give the tool a lasting name"
}
"""


def copy_of_rules(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return rules


@pytest.fixture
def edited_rules(tmp_path: Path) -> Path:
    """A copy of the shipped rules with a sixth Beeuni tool (its name and its module) and a new check."""
    rules = copy_of_rules(tmp_path)
    (rules / "beeuni_tools" / f"{SIXTH_TOOL}.ts").write_text("export default {}\n")
    tools_rules = rules / "tools.rules"
    source = tools_rules.read_text()
    old = 'let BEEUNI_TOOLS = ["web_search", "image_search", "scrape_webpage", "memory", "show"]'
    assert old in source
    source = source.replace(old, old[:-1] + f', "{SIXTH_TOOL}"]')
    tools_rules.write_text(source + TMP_CHECK)
    return rules


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "scratch.ts").write_text("export default {}\n")
    manifest = ["tools:", "  web_search: beeuni:web_search", f"  {SIXTH_TOOL}: beeuni:{SIXTH_TOOL}"]
    (folder / "beeuni.yaml").write_text("\n".join([*manifest, "  tmp_scratch: tools/scratch.ts", ""]))
    return folder


def test_shipped_rules_reject_what_the_edited_rules_accept(project: Path) -> None:
    result = run_beeuni(["validate", str(project)], cwd=project)
    assert result.code == 1
    reported = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if "[tools/unknown-beeuni-tool]" in line]
    assert [filled("tools/unknown-beeuni-tool", message)[0] for message in reported] == [SIXTH_TOOL]
    assert "tools/no-tmp-names" not in result.stdout


def test_validate_follows_edited_rules(project: Path, edited_rules: Path) -> None:
    result = run_beeuni(["validate", str(project), "--rules", str(edited_rules), "--format", "json"], cwd=project)
    document = json.loads(result.stdout)
    assert [(d["rule"], d["line"], d["column"]) for d in document["diagnostics"]] == [("tools/no-tmp-names", 4, 3)]
    assert document["diagnostics"][0]["message"] == "`tmp_scratch` starts with `tmp_`; give the tool a lasting name"
    assert result.code == 1


def test_tools_ls_follows_edited_rules(project: Path, edited_rules: Path) -> None:
    result = run_beeuni(["tools", "ls", str(project), "--rules", str(edited_rules), "--json"], cwd=project)
    document = json.loads(result.stdout)
    assert {"name": SIXTH_TOOL, "kind": "beeuni", "source": f"beeuni:{SIXTH_TOOL}"} in document["tools"]
    assert document["removed"] == ["image_search", "scrape_webpage", "memory", "show"]


def test_no_tools_key_gives_the_sixth_tool_too(tmp_path: Path, edited_rules: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text("agents: {}\n")
    result = run_beeuni(["tools", "ls", "--rules", str(edited_rules)], cwd=tmp_path)
    assert result.stdout.splitlines()[-1] == f"{SIXTH_TOOL:<16}beeuni  beeuni:{SIXTH_TOOL}"


def test_rules_list_and_explain_follow_edited_rules(edited_rules: Path) -> None:
    listed = run_beeuni(["rules", "list", "--rules", str(edited_rules)], cwd=edited_rules)
    assert "tools/no-tmp-names" in listed.stdout
    explained = run_beeuni(["rules", "explain", "tools/no-tmp-names", "--rules", str(edited_rules)], cwd=edited_rules)
    assert "temporary tools do not belong in a manifest" in explained.stdout


POLICY_WORDS = re.compile(
    r"\b(web_search|image_search|scrape_webpage|memory|show|apply_patch|bash|pty_\w+)\b|\.mts\b|a-z0-9_|snake_case"
)


def test_python_names_no_tool_pattern_or_extension() -> None:
    """The engine, CLI and daemon name no Beeuni or harness tool, no name pattern, no extension."""
    offenders = []
    for folder in ("engine", "cli", "daemon"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if POLICY_WORDS.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_agents_follow_a_new_harness_tool_and_group(tmp_path: Path) -> None:
    """A harness tool and a group added to a copy of agents.rules show up in `tools ls --agent`."""
    rules = copy_of_rules(tmp_path)
    agents_rules = rules / "agents.rules"
    source = agents_rules.read_text()
    old_tools = '"pty_spawn", "pty_write", "pty_read", "pty_list", "pty_kill", "pty_wait",\n  ],'
    old_group = "    edit: EDIT_GROUP, write: EDIT_GROUP, apply_patch: EDIT_GROUP,\n"
    assert old_tools in source and old_group in source
    source = source.replace(old_tools, old_tools.replace("],", '"notebook_read", "notebook_edit",\n  ],'))
    source = source.replace(old_group, old_group + '    notebook_read: ["notebook_read", "notebook_edit"],\n')
    agents_rules.write_text(source)
    project = tmp_path / "project"
    project.mkdir()
    (project / "beeuni.yaml").write_text("agents:\n  analyst:\n    tools: [read, notebook_read]\n")

    listed = run_beeuni(["tools", "ls", "--agent", "analyst", "--rules", str(rules), "--json"], cwd=project)
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["read", "notebook_read", "notebook_edit"]
    shipped = run_beeuni(["validate"], cwd=project)
    assert "warning[agents/unknown-tool] `notebook_read` is no harness, Beeuni or project tool" in shipped.stdout
    edited = run_beeuni(["validate", "--rules", str(rules)], cwd=project)
    assert edited.code == 0  # known now; added to one harness only, which the rules say
    assert edited.stdout == (
        "beeuni.yaml:3:19: warning[agents/harness-only-tool] `notebook_read` exists only on the standard harness: "
        "agent `analyst` will not have it on the experimental harness\n"
    )
