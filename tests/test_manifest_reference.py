"""docs/manifest-reference.md is what `beeuni rules doc` writes for the shipped rules (issue 8.5):
every rule, grouped as the rules files group them, with examples from its test cases."""

from __future__ import annotations

import json
import re

from conftest import ROOT, run_beeuni

REFERENCE = ROOT / "docs" / "manifest-reference.md"
REGENERATE = "make docs  (or: .venv/bin/beeuni rules doc > docs/manifest-reference.md)"


def test_the_committed_reference_is_not_stale() -> None:
    written = run_beeuni(["rules", "doc"], cwd=ROOT)
    assert written.code == 0, written.stderr
    assert REFERENCE.read_text() == written.stdout, f"docs/manifest-reference.md is stale: run `{REGENERATE}`"


def test_every_rule_is_documented_once_with_an_example_of_each_kind() -> None:
    listed = run_beeuni(["rules", "list", "--json"], cwd=ROOT)
    rule_ids = [rule["id"] for rule in json.loads(listed.stdout)]
    reference = REFERENCE.read_text()
    entries = re.split(r"^#### ", reference, flags=re.MULTILINE)[1:]
    assert sorted(entry.split("`")[1] for entry in entries) == sorted(rule_ids)
    for entry in entries:
        assert "\n# ✗ " in entry and "\n# ✓ " in entry, entry.splitlines()[0]
