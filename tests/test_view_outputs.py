"""The web UI's output contract: an override of web_search, image_search or scrape_webpage
whose output does not fit the JSON that tool's view reads is said — by `tools call` and, once per
tool and session, in the daemon's log (the view would show the raw output)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from conftest import ROOT, run_beeuni
from daemon_helpers import running_daemon

OTHER_SHAPE = "{ items: [{ name: 'Bees', link: 'https://bees.example' }] }"
FITTING = (
    "{ results: [{ query: args.query, results: [{ title: 'Bees', url: 'https://bees.example', snippet: 'b' }] }] }"
)


def ejected_web_search(tmp_path: Path, returned: str) -> Path:
    """A project whose ejected web_search returns ``returned`` instead of asking the platform."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "beeuni.yaml").write_text("tools:\n  web_search: beeuni:web_search\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    ejected = run_beeuni(["tools", "eject", "web_search"], cwd=project)
    assert ejected.code == 0, ejected.stderr
    module = project / "tools" / "web_search.ts"
    source = module.read_text()
    changed = re.sub(
        r"async execute\(args(.*?)\) \{", lambda m: m.group(0) + f"\n    return {returned}", source, count=1
    )
    assert changed != source
    module.write_text(changed)
    return project


def test_tools_call_warns_when_an_override_changed_the_output_the_view_reads(tmp_path: Path) -> None:
    project = ejected_web_search(tmp_path, OTHER_SHAPE)
    called = run_beeuni(["tools", "call", "web_search", "--args", '{"query": "bees"}'], cwd=project)
    assert called.code == 0, called.stderr
    assert '"items"' in called.stdout
    assert (
        "[tools] web_search: the output does not fit the web UI's web_search view, which shows it raw: "
        "`results` is required"
    ) in called.stderr


def test_the_daemon_logs_a_misfit_once_per_tool_and_session(tmp_path: Path) -> None:
    project = ejected_web_search(tmp_path, OTHER_SHAPE)
    with running_daemon(project, tmp_path) as daemon:
        for _ in range(3):
            assert daemon.call("web_search", {"query": "bees"}).status_code == 200
        log = daemon.log()
    assert log.count("[tools] web_search: the output does not fit the web UI's web_search view") == 1


def test_an_override_that_keeps_the_shape_is_not_reported(tmp_path: Path) -> None:
    project = ejected_web_search(tmp_path, FITTING)
    called = run_beeuni(["tools", "call", "web_search", "--args", '{"query": "bees"}'], cwd=project)
    assert called.code == 0, called.stderr
    assert "does not fit" not in called.stderr


def test_the_shapes_are_the_rules(tmp_path: Path) -> None:
    project = ejected_web_search(tmp_path, FITTING)
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    modules = rules / "modules.rules"
    modules.write_text(modules.read_text().replace('required: ["title", "url", "snippet"]', 'required: ["favicon"]'))
    called = run_beeuni(["tools", "call", "web_search", "--rules", str(rules), "--args", '{"query": "b"}'], cwd=project)
    assert "`results.0.results.0.favicon` is required" in called.stderr
