"""`beeuni schema`: the JSON Schema of beeuni.yaml built from the rules' data, committed as
docs/beeuni.schema.json for editors that read `# yaml-language-server: $schema=`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from beeuni.engine.project import rules_only
from conftest import ROOT, run_beeuni

COMMITTED = ROOT / "docs" / "beeuni.schema.json"


def current_schema() -> dict[str, Any]:
    result = run_beeuni(["schema"], cwd=ROOT)
    assert result.code == 0, result.stderr
    schema: dict[str, Any] = json.loads(result.stdout)
    return schema


def test_the_committed_schema_is_what_the_rules_give() -> None:
    result = run_beeuni(["schema"], cwd=ROOT)
    assert COMMITTED.read_text() == result.stdout, "stale: run `beeuni schema > docs/beeuni.schema.json`"


def test_it_is_a_valid_draft_7_schema() -> None:
    jsonschema.Draft7Validator.check_schema(current_schema())


def test_its_keys_are_the_keys_the_rules_know() -> None:
    run = rules_only()
    schema = current_schema()
    properties = schema["properties"]
    agent = schema["definitions"]["agent"]
    assert list(properties) == list(run.output("TOP_LEVEL_KEYS"))
    assert schema["propertyNames"] == {"enum": list(run.output("TOP_LEVEL_KEYS"))}
    assert list(agent["properties"]) == list(run.output("AGENT_KEYS"))


def test_every_clean_golden_manifest_and_the_starter_example_satisfy_it() -> None:
    validator = jsonschema.Draft7Validator(current_schema())
    manifests = [ROOT / "examples" / "starter" / "beeuni.yaml"]
    for case in ("agents-visibility", "agents-subagents", "imported-tools"):
        manifests.append(ROOT / "tests" / "golden" / case / "project" / "beeuni.yaml")
    for manifest in manifests:
        errors = list(validator.iter_errors(yaml.safe_load(manifest.read_text())))
        assert not errors, (manifest, [error.message for error in errors])


@pytest.mark.parametrize(
    "manifest",
    [
        "tool:\n  lookup: tools/lookup.ts\n",
        "tools:\n  Lookup: tools/lookup.ts\n",
        "tools:\n  lookup: beeuni:lookup\n",
        "tools:\n  lookup: tools/lookup.py\n",
        "agents:\n  a: {tools: some}\n",
        "agents:\n  a: {tools: {include: [read]}}\n",
        "agents:\n  a: {tool: all}\n",
        "agents:\n  a: {secrets: [lower_case]}\n",
    ],
)
def test_it_refuses_what_validate_reports(manifest: str) -> None:
    validator = jsonschema.Draft7Validator(current_schema())
    assert list(validator.iter_errors(yaml.safe_load(manifest)))


def test_beeuni_tool_docs_are_the_descriptions_of_the_shipped_modules() -> None:
    """Hover shows a Beeuni tool's doc from the rules; it must say what the module says."""
    docs = rules_only().output("BEEUNI_TOOL_DOCS")
    modules = ROOT / "rules" / "beeuni_tools"
    assert set(docs) == {path.stem for path in modules.glob("*.ts")}
    for name, doc in docs.items():
        source = " ".join((modules / f"{name}.ts").read_text().split())
        assert json.dumps(doc)[1:-1].replace('\\"', '"') in source.replace("\\'", "'"), name


def test_schema_without_the_rules_value_is_refused(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "beeuni_tools", rules / "beeuni_tools")  # the Beeuni tools' modules
    for path in (ROOT / "rules").glob("*.rules"):
        (rules / path.name).write_text(path.read_text().replace("let MANIFEST_SCHEMA =", "let OTHER_SCHEMA ="))
    result = run_beeuni(["schema", "--rules", str(rules)], cwd=tmp_path)
    assert result.code == 2
    assert "the rules define no `MANIFEST_SCHEMA`" in result.stderr


def test_the_manifests_shape_is_declared_once_for_the_schema_and_rules_check(tmp_path: Path) -> None:
    """MANIFEST_SHAPE (manifest.rules) is what `beeuni schema` lists and what `rules check` holds
    every field read of manifest data against: a key added there is known to both."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("tests", "*.py", "__pycache__"))
    agents = rules / "agents.rules"
    source = agents.read_text()
    misspelt = 'fn connectors_of(a) = [c for c in agent_settings(a).conectors if type(c) == "string"]'
    agents.write_text(source.replace(misspelt.replace("conectors", "connectors"), misspelt, 1))
    checked = run_beeuni(["rules", "check", "rules"], cwd=tmp_path)
    line = next(i for i, text in enumerate(agents.read_text().splitlines(), 1) if "conectors" in text)
    column = agents.read_text().splitlines()[line - 1].index("agent_settings(a).conectors") + 1
    assert checked.code == 0, checked.stdout  # a warning: the rules still run
    assert checked.stdout == (
        f"rules/agents.rules:{line}:{column}: warning[rules] the data here has no field `conectors` in "
        "`MANIFEST_SHAPE` (tools, secrets, permission, connectors, description, model, prompt); "
        "did you mean `connectors`?\n"
    )
    manifest = rules / "manifest.rules"
    manifest.write_text(
        manifest.read_text().replace('    prompt: "string",\n', '    prompt: "string",\n    conectors: "any",\n')
    )
    assert run_beeuni(["rules", "check", "rules"], cwd=tmp_path).stdout == ""
    schema = json.loads(run_beeuni(["schema", "--rules", "rules"], cwd=tmp_path).stdout)
    assert "conectors" in schema["definitions"]["agent"]["propertyNames"]["enum"]
