"""Each call's arguments are checked against the module's `parameters` in the daemon, before the
module runs: one validator per module, the texts from the rules; a module whose schema is not
valid JSON Schema does not load; what the standard harness cannot carry to its model is said at
load and by `validate --modules`."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_beeuni
from daemon_helpers import Daemon, running_daemon

# Writes a file when it runs, so a test sees whether a refused call ran the module.
RECORDING = """import { writeFileSync } from 'node:fs'
export default {
  description: 'Log the repository.',
  parameters: %s,
  async execute(args, context) { writeFileSync(context.cwd + '/out/ran.txt', JSON.stringify(args)); return 'ran' },
}
"""
GIT_LOG: dict[str, Any] = json.loads((Path(__file__).parent / "schema_zoo" / "git_log.json").read_text())
DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "label": {"type": "string", "id": "label"},
    },
    "title": "Old style",
}
BROKEN = {"type": "object", "properties": {"n": {"type": "nonsense"}}}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("arguments") / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "out").mkdir()  # where the module writes (it cannot create entries in the top folder)
    for name, schema in (("git_log", GIT_LOG), ("old_style", DRAFT4), ("broken", BROKEN)):
        (folder / "tools" / f"{name}.ts").write_text(RECORDING % json.dumps(schema))
    tools = "".join(f"  {name}: tools/{name}.ts\n" for name in ("git_log", "old_style", "broken"))
    (folder / "beeuni.yaml").write_text("tools:\n" + tools)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)  # a release holds the modules
    return folder


@pytest.fixture(scope="module")
def daemon(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(project, tmp_path_factory.mktemp("daemon"), "--harness", "standard") as running:
        yield running


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        ({"repo_path": ".", "mode": "LOUD"}, '`mode`: `"LOUD"` is not one of `loud`, `quiet`'),
        ({"mode": "loud"}, "`repo_path` is required"),
        ({"repo_path": ""}, '`repo_path`: `""` is shorter than `1` characters'),
        ({"repo_path": ".", "max_count": 0}, "`max_count`: `0` is less than the minimum `1`"),
        ({"repo_path": ".", "max_count": "3"}, '`max_count`: `"3"` is not of type `integer`'),
        ({"repo_path": ".", "colour": True}, "`colour` is not a parameter of this tool (its parameters: `max_count`, "),
        (
            {"repo_path": ".", "window": {"to": "x"}},
            "`window.to` is not a parameter of this tool (its parameters: `from`)",
        ),
    ],
)
def test_invalid_arguments_are_refused_before_the_module_runs(
    daemon: Daemon, project: Path, args: dict[str, object], refusal: str
) -> None:
    answer = daemon.call("git_log", args)
    assert answer.status_code == 422
    assert answer.json()["error"].startswith(f"invalid arguments for git_log: {refusal}")
    assert not (project / "out" / "ran.txt").exists()


def test_valid_arguments_run_the_module(daemon: Daemon, project: Path) -> None:
    answer = daemon.call("git_log", {"repo_path": ".", "mode": "quiet", "window": {"from": "x"}})
    assert answer.json() == {"output": "ran", "truncated": False}
    (project / "out" / "ran.txt").unlink()


def test_the_draft_a_schema_names_is_the_one_checked(daemon: Daemon, project: Path) -> None:
    # draft 4: a boolean exclusiveMinimum makes `minimum` exclusive
    answer = daemon.call("old_style", {"n": 0})
    assert answer.status_code == 422
    assert "`n`: `0` is less than the minimum `0`" in answer.json()["error"]
    assert daemon.call("old_style", {"n": 1}).status_code == 200
    (project / "out" / "ran.txt").unlink()


def test_a_module_whose_parameters_are_not_json_schema_does_not_load(daemon: Daemon) -> None:
    assert daemon.call("broken", {}).status_code == 404
    assert "broken" not in daemon.tools()
    log = daemon.log()
    assert "[tools] project tools that did not load" in log
    assert "  broken: its parameters are not valid JSON Schema: " in log


def test_what_the_standard_harness_cannot_carry_is_logged_at_load(daemon: Daemon) -> None:
    log = daemon.log()
    assert "[tools] old_style: the model is not offered its parameters as written: `title` at the top level" in log
    assert "[tools] old_style: the model is not offered its parameters as written: `id` at `properties/label`" in log
    assert "the boolean `exclusiveMinimum` at `properties/n` (draft 4's form) is dropped" in log
    assert "git_log:" not in log


def test_validate_modules_reports_what_the_standard_harness_cannot_carry(project: Path) -> None:
    shown = run_beeuni(["validate", "--modules", "--format", "json"], cwd=project)
    found = [d for d in json.loads(shown.stdout)["diagnostics"] if d["rule"] == "modules/schema-not-carried"]
    starts = (
        "`title` at the top level is not carried",
        "`id` at `properties/label` is taken by zod",
        "the boolean `exc",
    )
    assert sorted(d["message"].split("as written: ", 1)[1][:16] for d in found) == sorted(s[:16] for s in starts)
    assert all("tool `old_style`" in d["message"] for d in found)


def test_the_refusal_texts_are_the_rules(project: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    agents = rules / "agents.rules"
    text = agents.read_text()
    agents.write_text(text.replace("is not one of {allowed}", "must be one of {allowed}"))
    with running_daemon(project, tmp_path, "--rules", str(rules)) as edited:
        answer = edited.call("git_log", {"repo_path": ".", "mode": "LOUD"})
    assert answer.json()["error"] == 'invalid arguments for git_log: `mode`: `"LOUD"` must be one of `loud`, `quiet`'


def test_tools_call_prints_the_refusal(project: Path) -> None:
    called = run_beeuni(["tools", "call", "git_log", "--args", '{"repo_path": ".", "mode": "LOUD"}'], cwd=project)
    assert called.code != 0
    assert 'invalid arguments for git_log: `mode`: `"LOUD"` is not one of `loud`, `quiet`' in called.stderr


def test_what_the_standard_harness_carries_is_the_rules(project: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    modules = rules / "modules.rules"
    modules.write_text(modules.read_text().replace('property_reserved: ["id"]', "property_reserved: []"))
    shown = run_beeuni(["validate", "--modules", "--format", "json", "--rules", str(rules)], cwd=project)
    found = [d["message"] for d in json.loads(shown.stdout)["diagnostics"] if d["rule"] == "modules/schema-not-carried"]
    assert len(found) == 2 and not any("`id`" in message for message in found)
