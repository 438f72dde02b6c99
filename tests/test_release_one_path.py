"""Start and convergence are one path: a release either serves — the tools that load, the others
skipped under `[tools] project tools that did not load` — or is refused (no manifest, a file of
the manifest that does not parse or is not in the release, the rules' limits), the same for a new
session and a running one. And every refusal names the user's own path and why, never one inside
the daemon's private copy of the release.

The real daemon and Bun over real git repositories: a daemon started on one release and
converged on the next is held equal to one started on that next release.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
from conftest import ROOT, run_beeuni
from daemon_helpers import Daemon, daemon_refused, running_daemon
from test_release_served import HELPER, LOOKUP, MANIFEST, commit, git, released_project

#: what a daemon's private folder is named: no message may show a path inside it
PRIVATE = "beeuni-daemon-"
DID_NOT_LOAD = "[tools] project tools that did not load"
GONE = "export function gone() { return 'gone' }\n"
IMPORTS_GONE = """import { gone } from './gone.ts'
export default {
  description: 'Imports a helper the release lacks.',
  parameters: { type: 'object', properties: {} },
  async execute() { return gone() },
}
"""
ZODDED = """import { z } from 'zod'
export default {
  description: 'Imports a package only an ignored node_modules supplies.',
  parameters: { type: 'object', properties: {} },
  async execute() { return String(typeof z) },
}
"""
THROWS = """throw new Error('this module fails as it loads')
export default { description: 'Never loads.', parameters: { type: 'object', properties: {} }, execute() {} }
"""
FRESH = """export default {
  description: 'Never committed.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'fresh' },
}
"""


def place(tmp_path: Path, name: str) -> Path:
    """A folder of its own for one daemon's state and log."""
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    return folder


def project(tmp_path: Path) -> Path:
    tools = {"lookup_order.ts": LOOKUP, "helper.ts": HELPER, "rewrite.ts": LOOKUP.replace("Looks", "Rewrites")}
    return released_project(tmp_path, tools, MANIFEST, "ORDERS_API_KEY", "a-secret")


def served(daemon: Daemon) -> list[dict[str, Any]]:
    """Every tool the daemon serves, as the harness's plugin reads them at its start."""
    answer = httpx.get(f"{daemon.url}/beeuni/tools?all=true", headers=daemon.headers(), timeout=60)
    assert answer.status_code == 200, answer.text
    tools: list[dict[str, Any]] = answer.json()["tools"]
    return sorted(tools, key=lambda tool: tool["name"])


def skipped_lines(log: str) -> list[str]:
    """The last `[tools] project tools that did not load` block of a log: one line per tool."""
    lines = log.splitlines()
    start = max(index for index, line in enumerate(lines) if line == DID_NOT_LOAD)
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def commit_a_release_where_some_tools_do_not_load(folder: Path) -> str:
    """The next release: the tools `imports_gone` (its helper untracked), `zodded` (zod only in an
    ignored node_modules), `throws` (fails as it loads) and `fresh` (never committed) do not load;
    `lookup_order` changed its description and loads."""
    (folder / "node_modules" / "zod").mkdir(parents=True)
    (folder / "node_modules" / "zod" / "package.json").write_text('{"name": "zod", "main": "index.js"}')
    (folder / "node_modules" / "zod" / "index.js").write_text("exports.z = {}\n")
    (folder / ".gitignore").write_text("node_modules/\n")
    for name, source in {"imports_gone": IMPORTS_GONE, "zodded": ZODDED, "throws": THROWS, "fresh": FRESH}.items():
        (folder / "tools" / f"{name}.ts").write_text(source)
    (folder / "tools" / "gone.ts").write_text(GONE)
    (folder / "tools" / "lookup_order.ts").write_text(LOOKUP.replace("Looks an order up", "Finds an order"))
    declared = "".join(f"  {name}: tools/{name}.ts\n" for name in ("imports_gone", "zodded", "throws", "fresh"))
    (folder / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n" + declared, 1))
    git(folder, "add", ".gitignore", "beeuni.yaml", "tools/imports_gone.ts", "tools/zodded.ts", "tools/throws.ts")
    git(folder, "add", "tools/lookup_order.ts")
    git(folder, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "four tools")
    return git(folder, "rev-parse", "HEAD")


def test_a_new_daemon_and_a_converged_one_serve_a_release_with_tools_that_do_not_load_alike(tmp_path: Path) -> None:
    folder = project(tmp_path)
    with running_daemon(folder, place(tmp_path, "a"), "--harness", "experimental") as converged:
        release = commit_a_release_where_some_tools_do_not_load(folder)
        event = converged.converge()
        assert event["event"] == "converged", event
        assert event["release"] == release and event["changes"]["changed"] == ["lookup_order"]
        with running_daemon(folder, place(tmp_path, "b"), "--harness", "experimental") as started:
            assert started.document["release"] == release
            assert served(converged) == served(started)
            assert [tool["name"] for tool in served(started)] == ["lookup_order", "memory", "rewrite"]
            assert skipped_lines(converged.log()) == skipped_lines(started.log())
            lines = skipped_lines(started.log())
            logs = converged.log() + started.log()
    assert [line.split(":")[0].strip() for line in lines] == ["fresh", "imports_gone", "throws", "zodded"]
    said = dict(line.strip().split(": ", 1) for line in lines)
    assert said["fresh"].startswith("`tools/fresh.ts` is not tracked by git, so no config release holds it")
    assert "resolves to `tools/gone.ts`, which is not tracked by git" in said["imports_gone"]
    assert "`git add tools/gone.ts`" in said["imports_gone"]
    assert "imports the package `zod`, which no node_modules in the release holds" in said["zodded"]
    assert "this module fails as it loads" in said["throws"]
    assert PRIVATE not in logs
    # `tools ls --release` lists that commit as the daemons serve it: what it finds without loading
    # a module is skipped alike, with the same words (`throws` fails only when Bun loads it)
    listed = run_beeuni(["tools", "ls", str(folder), "--release", release[:10], "--json"], cwd=folder)
    document = json.loads(listed.stdout)
    assert sorted(tool["name"] for tool in document["tools"]) == ["lookup_order", "memory", "rewrite", "throws"]
    assert {item["name"]: item["reason"] for item in document["unreleased"]} == {
        name: reason for name, reason in said.items() if name != "throws"
    }
    assert document["release"] == release and listed.code == 1


def test_a_release_whose_manifest_does_not_parse_is_refused_by_a_new_session_and_a_running_one(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    with running_daemon(folder, place(tmp_path, "a"), "--harness", "experimental") as daemon:
        first = daemon.document["release"]
        (folder / "beeuni.yaml").write_text(MANIFEST + "  broken: [unclosed\n")
        commit(folder, "a manifest that does not parse")
        event = daemon.converge()
        assert event["event"] == "convergence_failed" and event["serving"] == first
        refused = "no session serves this release: beeuni.yaml:"
        assert refused in event["error"] and "error[manifest/yaml-syntax]" in event["error"]
        assert daemon.call("lookup_order", agent="b").status_code == 200
        started, handed = daemon_refused(folder, place(tmp_path, "b") / "state", "--harness", "experimental")
    assert (started.code, handed) == (2, b"")
    assert started.stderr.strip() == event["error"]


def test_an_import_the_release_lacks_is_refused_by_its_path_and_why(tmp_path: Path) -> None:
    folder = project(tmp_path)
    with running_daemon(folder, place(tmp_path, "a"), "--harness", "experimental") as daemon:
        (folder / "agents.yaml").write_text("agents:\n  c:\n    tools: [lookup_order]\n    secrets: all\n")
        (folder / "beeuni.yaml").write_text("imports: [agents.yaml]\n" + MANIFEST)
        git(folder, "add", "beeuni.yaml")
        git(folder, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "no agents.yaml")
        event = daemon.converge()
        assert event["event"] == "convergence_failed"
        said = "the imported file `agents.yaml` is not tracked by git: no config release holds it"
        assert said in event["error"] and "`git add agents.yaml`" in event["error"]
        started, _ = daemon_refused(folder, place(tmp_path, "b") / "state", "--harness", "experimental")
    assert started.code == 2 and started.stderr.strip() == event["error"]
    assert PRIVATE not in event["error"]


def copy_of_the_rules(folder: Path) -> Path:
    rules = folder / "policy"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__", "tests"))
    return rules


def test_a_rules_folder_the_release_lacks_is_named_by_its_path_and_why(tmp_path: Path) -> None:
    folder = project(tmp_path)
    rules = copy_of_the_rules(folder)
    args = ("--harness", "experimental", "--rules", str(rules))
    untracked, _ = daemon_refused(folder, place(tmp_path, "untracked") / "state", *args)
    assert untracked.code == 2
    assert untracked.stderr.startswith("the rules folder `policy` (--rules) is not tracked by git"), untracked.stderr
    assert "`git add policy`" in untracked.stderr and PRIVATE not in untracked.stderr
    listed = run_beeuni(["tools", "ls", str(folder), "--release", "HEAD", "--rules", str(rules)], cwd=folder)
    assert (listed.code, listed.stderr) == (2, f"beeuni: {untracked.stderr}")  # `tools ls` says the same
    git(folder, "add", "policy")
    staged, _ = daemon_refused(folder, place(tmp_path, "staged") / "state", *args)
    assert staged.code == 2 and "the rules folder `policy` (--rules) is staged but not in the commit" in staged.stderr
    git(folder, "rm", "-r", "-q", "--cached", "policy")
    (folder / ".gitignore").write_text("policy/\n")
    commit(folder, "the rules are ignored")
    ignored, _ = daemon_refused(folder, place(tmp_path, "ignored") / "state", *args)
    assert ignored.code == 2 and "the rules folder `policy` (--rules) is ignored by git" in ignored.stderr
    assert "`git add -f policy`" in ignored.stderr and PRIVATE not in ignored.stderr


def test_a_convergence_on_a_release_without_its_rules_folder_names_it_and_why(tmp_path: Path) -> None:
    folder = project(tmp_path)
    rules = copy_of_the_rules(folder)
    commit(folder, "the rules, in the repository")
    with running_daemon(folder, place(tmp_path, "a"), "--harness", "experimental", "--rules", str(rules)) as daemon:
        git(folder, "rm", "-r", "-q", "--cached", "policy")
        git(folder, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "no rules")
        event = daemon.converge()
        assert event["event"] == "convergence_failed"
        assert "the rules folder `policy` (--rules) is not tracked by git" in event["error"]
        assert PRIVATE not in event["error"] and "No such file" not in event["error"]
        assert daemon.call("lookup_order", agent="b").status_code == 200


def test_a_release_served_with_an_error_converges_as_it_starts(tmp_path: Path) -> None:
    """An error that keeps no file of the manifest from being read does not refuse a release: a
    new session serves it (the error logged), and so does a running one."""
    folder = project(tmp_path)
    with running_daemon(folder, place(tmp_path, "a"), "--harness", "experimental") as daemon:
        (folder / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n  Broken-Name: x.py\n", 1))
        release = commit(folder, "a tool of a name no tool may have")
        event = daemon.converge()
        assert event["event"] == "converged" and event["release"] == release
        assert json.loads(daemon.call("lookup_order", agent="b").json()["output"])["greeting"] == "hello"
        error = "beeuni.yaml:2:3: error[tools/name-format]"
        assert error in daemon.log().split("[release] the session serves")[0]
        with running_daemon(folder, place(tmp_path, "b"), "--harness", "experimental") as started:
            assert served(started) == served(daemon)
            assert error in started.log()
