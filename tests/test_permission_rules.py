"""An opencode permission is a rules edit: a copy of the shipped rules with one more name in
`PERMISSION_ACTION_ONLY` checks it, resolves it and hands it to the harness — no Python
changes. (What opencode itself makes of the rules: tests/test_opencode_permissions.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_beeuni
from test_policy_in_rules import copy_of_rules

NEW = "codesearch"
MANIFEST = f"""agents:
  reviewer:
    permission:
      {NEW}: ask
      grep: {{"*.env": deny}}
  careful:
    permission:
      {NEW}: {{"*": ask}}
"""


def diagnostics(project: Path, *args: str) -> list[tuple[str, int]]:
    checked = run_beeuni(["validate", str(project), "--format", "json", *args], cwd=project)
    return [(d["rule"], d["line"]) for d in json.loads(checked.stdout)["diagnostics"]]


def test_a_new_permission_is_one_line_of_the_rules(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "beeuni.yaml").write_text(MANIFEST)
    # the shipped rules know no `codesearch`: a warning with what they know
    assert diagnostics(project) == [("permission/unknown-key", 4), ("permission/unknown-key", 8)]
    rules = copy_of_rules(tmp_path)
    source = (rules / "permissions.rules").read_text()
    old = 'let PERMISSION_ACTION_ONLY = ["todowrite", "question", "webfetch", "websearch", "doom_loop"'
    assert old in source
    (rules / "permissions.rules").write_text(source.replace(old, f'{old}, "{NEW}"'))
    # with it: an action is fine, patterns are not
    assert diagnostics(project, "--rules", str(rules)) == [("permission/patterns", 8)]
    resolved = json.loads(run_beeuni(["resolve", str(project), "--json", "--rules", str(rules)], cwd=project).stdout)
    agents = {agent["name"]: agent for agent in resolved["harnesses"][0]["agents"]}
    assert agents["reviewer"]["permission"] == [
        {"permission": NEW, "pattern": "*", "action": "ask"},
        {"permission": "grep", "pattern": "*.env", "action": "deny"},
    ]
    assert agents["careful"]["permission"] == []  # what does not validate is not handed on
