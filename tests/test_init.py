"""`beeuni init`: a new project's manifest, as the design document's first example; never over
another one."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_beeuni
from test_policy_in_rules import SIXTH_TOOL, edited_rules  # noqa: F401 (a fixture)

EXAMPLE = """tools:
  web_search: beeuni:web_search      # maintained by Beeuni, updated automatically
  image_search: beeuni:image_search
  scrape_webpage: beeuni:scrape_webpage
  memory: beeuni:memory
  show: beeuni:show
  # lookup_order: tools/lookup_order.ts   # your own tool: a module in your repo

agents:
  beeuni:
    tools: all                                    # every tool (the default)
"""


def test_writes_the_documents_first_example(tmp_path: Path) -> None:
    result = run_beeuni(["init", "project"], cwd=tmp_path)
    assert (result.stderr, result.code) == ("", 0)
    assert result.stdout.splitlines()[0] == (
        "  ✓  Wrote project/beeuni.yaml: the 5 Beeuni tools under `tools:`, and the session agent `beeuni`"
    )
    assert (tmp_path / "project" / "beeuni.yaml").read_text() == EXAMPLE


def test_the_written_manifest_validates_clean_and_serves_the_five_tools(tmp_path: Path) -> None:
    assert run_beeuni(["init"], cwd=tmp_path).code == 0
    validated = run_beeuni(["validate"], cwd=tmp_path)
    assert (validated.stdout, validated.code) == ("", 0)
    listed = json.loads(run_beeuni(["tools", "ls", "--json"], cwd=tmp_path).stdout)
    assert [tool["name"] for tool in listed["tools"]] == [
        "web_search",
        "image_search",
        "scrape_webpage",
        "memory",
        "show",
    ]
    assert listed["removed"] == []


def test_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text("tools: {}\n")
    result = run_beeuni(["init"], cwd=tmp_path)
    assert (result.stdout, result.code) == ("", 2)
    assert result.stderr == (
        "beeuni: beeuni.yaml exists already: `beeuni init` never overwrites a manifest;"
        " edit it, or move it away first\n"
    )
    assert (tmp_path / "beeuni.yaml").read_text() == "tools: {}\n"


def test_a_link_at_the_manifests_name_is_not_followed(tmp_path: Path) -> None:
    """A dangling link counts as a manifest there: nothing is written through it."""
    (tmp_path / "beeuni.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    assert run_beeuni(["init"], cwd=tmp_path).code == 2
    assert not (tmp_path / "elsewhere.yaml").exists()


def test_a_file_where_the_folder_should_be(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    result = run_beeuni(["init", "taken"], cwd=tmp_path)
    assert (result.stderr, result.code) == (
        "beeuni: taken is a file, where `beeuni init` needs a folder for the manifest\n",
        2,
    )


def test_the_tools_come_from_the_rules(tmp_path: Path, edited_rules: Path) -> None:  # noqa: F811
    """A sixth Beeuni tool added to a copy of the rules is in the new manifest."""
    assert run_beeuni(["init", "--rules", str(edited_rules)], cwd=tmp_path).code == 0
    assert f"  {SIXTH_TOOL}: beeuni:{SIXTH_TOOL}\n" in (tmp_path / "beeuni.yaml").read_text()
