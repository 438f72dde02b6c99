"""The resolved tool set: the document the daemon consumes."""

from __future__ import annotations

import json

from conftest import ROOT, run_beeuni


def test_committed_schema_is_the_models_schema() -> None:
    """docs/resolved-tool-set.schema.json is generated from the pydantic model; regenerate it with
    `beeuni resolve --schema > docs/resolved-tool-set.schema.json` when the model changes."""
    generated = run_beeuni(["resolve", "--schema"], cwd=ROOT)
    committed = (ROOT / "docs" / "resolved-tool-set.schema.json").read_text()
    assert json.loads(generated.stdout) == json.loads(committed)


def test_starter_resolves_for_both_harnesses() -> None:
    result = run_beeuni(["resolve", "--json"], cwd=ROOT / "examples" / "starter")
    document = json.loads(result.stdout)
    assert document["version"] == 1
    assert [h["name"] for h in document["harnesses"]] == ["standard", "experimental"]
    assert document["secrets"] == {"beeuni": "all", "researcher": ["ORDERS_API_KEY"]}
    for harness in document["harnesses"]:
        views = {view["id"]: view["tools"] for view in harness["views"]}
        researcher = next(agent for agent in harness["agents"] if agent["name"] == "researcher")
        assert views[researcher["view"]] == ["read", "grep", "web_search", "lookup_order"]  # the list's order
    assert result.code == 0
