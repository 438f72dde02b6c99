"""docs/manifest-reference.md is what `beeuni rules doc` writes for the shipped rules:
every rule, grouped as the rules files group them, with examples from its test cases."""

from __future__ import annotations

import json
import re

from conftest import ROOT, run_beeuni

REFERENCE = ROOT / "docs" / "manifest-reference.md"
HELPERS = ROOT / "docs" / "helpers-reference.md"
REGENERATE = "make docs  (or: .venv/bin/beeuni rules doc > docs/manifest-reference.md)"


def test_the_committed_reference_is_not_stale() -> None:
    written = run_beeuni(["rules", "doc"], cwd=ROOT)
    assert written.code == 0, written.stderr
    assert REFERENCE.read_text() == written.stdout, f"docs/manifest-reference.md is stale: run `{REGENERATE}`"


def test_the_committed_helpers_reference_is_not_stale() -> None:
    written = run_beeuni(["rules", "doc", "--helpers"], cwd=ROOT)
    assert written.code == 0, written.stderr
    assert HELPERS.read_text() == written.stdout, "docs/helpers-reference.md is stale: run `make docs`"


def test_the_helpers_reference_holds_every_let_and_fn_with_its_doc_comment() -> None:
    reference = HELPERS.read_text()
    assert "### `did_you_mean`\n\n`fn`, manifest.rules:" in reference
    assert "fn did_you_mean(name, known) = suggestion(closest(name, known))" in reference
    assert "### `BEEUNI_TOOLS`\n\n`let`, tools.rules:" in reference
    entry = reference.split("### `fixed_key`", 1)[1].split("### ", 1)[0]
    assert 'The key a "did you mean" suggests, as a fix' in entry


def test_every_rule_is_documented_once_with_an_example_of_each_kind() -> None:
    listed = run_beeuni(["rules", "list", "--json"], cwd=ROOT)
    rule_ids = [rule["id"] for rule in json.loads(listed.stdout)]
    reference = REFERENCE.read_text()
    entries = re.split(r"^#### ", reference, flags=re.MULTILINE)[1:]
    assert sorted(entry.split("`")[1] for entry in entries) == sorted(rule_ids)
    for entry in entries:
        assert "\n# ✗ " in entry and "\n# ✓ " in entry, entry.splitlines()[0]
