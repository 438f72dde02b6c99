"""Adding a Beeuni tool is one data line, one module and one test case: the three
blocks of "Adding a Beeuni tool" in docs/rules-language.md, applied to a copy of the rules, give a
tool that `rules check` and `rules test` accept and that validate, tools ls, resolve, the real
daemon (with real Bun, against the platform stand-in) and tools eject all know."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from conftest import ROOT, run_beeuni
from daemon_helpers import running_daemon
from platform_standin import TOKEN, PlatformStandIn

GUIDE = ROOT / "docs" / "rules-language.md"


def guide_blocks() -> list[str]:
    """The code blocks of the guide's section "Adding a Beeuni tool", in order."""
    text = GUIDE.read_text()
    section = text[text.index("## Adding a Beeuni tool") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"^```[a-z]*\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def rules_with_translate(tmp_path: Path) -> Path:
    data_line, module, case = guide_blocks()
    rules = tmp_path / "my-rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    tools_rules = rules / "tools.rules"
    lines = tools_rules.read_text().splitlines(keepends=True)
    [index] = [i for i, line in enumerate(lines) if line.startswith("let BEEUNI_TOOLS =")]
    lines[index] = data_line
    tools_rules.write_text("".join(lines))
    (rules / "beeuni_tools" / "translate.ts").write_text(module)
    (rules / "tests" / "translate").mkdir()
    (rules / "tests" / "translate" / "beeuni.yaml").write_text(case)
    return rules


def test_the_guides_translate_tool_end_to_end(tmp_path: Path) -> None:
    rules = rules_with_translate(tmp_path)
    checked = run_beeuni(["rules", "check", "my-rules"], cwd=tmp_path)
    assert (checked.code, checked.stdout) == (0, ""), checked.stdout + checked.stderr
    tested = run_beeuni(["rules", "test", "my-rules"], cwd=tmp_path)
    assert tested.code == 0, tested.stdout
    assert "rules with no" not in tested.stdout
    assert tested.stdout.endswith(" passed, 0 failed\n")

    project = tmp_path / "project"
    project.mkdir()
    manifest = "tools:\n  translate: beeuni:translate\n  web_search: beeuni:web_search\n"
    (project / "beeuni.yaml").write_text(manifest)
    rules_option = ["--rules", str(rules)]
    validated = run_beeuni(["validate", *rules_option], cwd=project)
    assert (validated.code, validated.stdout) == (0, "")
    listed = json.loads(run_beeuni(["tools", "ls", "--json", *rules_option], cwd=project).stdout)
    assert listed["tools"][0] == {"name": "translate", "kind": "beeuni", "source": "beeuni:translate"}
    resolved = json.loads(run_beeuni(["resolve", "--json", *rules_option], cwd=project).stdout)
    assert resolved["tools"][0]["builtin"] == "beeuni_tools/translate.ts"

    (tmp_path / "daemon").mkdir()
    with PlatformStandIn() as platform:
        env = {"BEEUNI_API_URL": platform.url, "BEEUNI_TOKEN": TOKEN}
        with running_daemon(project, tmp_path / "daemon", *rules_option, env=env) as daemon:
            answer = daemon.call("translate", {"text": "good morning", "target": "de"})
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.json()["output"]) == {"text": "[de] good morning", "source": "en"}
    assert ("/v1/translate", {"text": "good morning", "target": "de"}) in platform.requests

    ejected = run_beeuni(["tools", "eject", "translate", *rules_option], cwd=project)
    assert ejected.code == 0, ejected.stderr
    assert (project / "tools" / "translate.ts").read_bytes() == (rules / "beeuni_tools" / "translate.ts").read_bytes()
    assert "  translate: tools/translate.ts  # ejected from beeuni:translate\n" in (project / "beeuni.yaml").read_text()
