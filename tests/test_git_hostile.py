"""git's repository is input an agent writes: nothing in it runs a command or changes a release.

An agent with only `read` and `write` may write `.git/config` (and a file it includes), a replace
ref, `info/grafts`, an object: each test writes what such an agent writes, checks with plain git
that the attack is real (the script runs, the other tree is named), and then runs beeuni — the
real daemon and its convergence, `beeuni tools call --release`, `validate`'s release view,
`tools ls`, `sessions converge` — and observes that the script never ran and the commit's own
tree is what is served. Agent `a` has no secret; a forged release would hand it `secrets: all`.
"""

from __future__ import annotations

import json
import os
import subprocess
import zlib
from pathlib import Path
from typing import Any

import beeuni.rules
import pytest
from beeuni.engine.release import git as git_runner
from conftest import commit, git, run_beeuni
from daemon_helpers import daemon_refused, running_daemon

SECRET = "orders-key-5be02a"
LOOKUP = """import { greeting } from './helper.ts'
export default {
  description: 'Looks an order up with the ORDERS_API_KEY.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) {
    return { greeting: greeting(), keyed: typeof context.env.ORDERS_API_KEY === 'string' }
  },
}
"""
HELPER = "export function greeting() { return 'hello' }\n"
FORGED_HELPER = "export function greeting() { return 'forged' }\n"
OTHER = """export default {
  description: 'Another tool.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'other' },
}
"""
MANIFEST = """tools:
  lookup_order: tools/lookup_order.ts
  other: tools/other.ts
agents:
  a:
    tools: [lookup_order]
  b:
    tools: [lookup_order]
    secrets: all
"""
WIDENED = MANIFEST.replace("    tools: [lookup_order]\n  b:", "    tools: [lookup_order]\n    secrets: all\n  b:")
MISSING = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "lookup_order.ts").write_text(LOOKUP)
    (folder / "tools" / "helper.ts").write_text(HELPER)
    (folder / "tools" / "other.ts").write_text(OTHER)
    (folder / "beeuni.yaml").write_text(MANIFEST)
    git(folder, "init", "-q")
    commit(folder, "the release")
    stored = run_beeuni(
        ["secrets", "set", "ORDERS_API_KEY=-", str(folder)],
        cwd=folder,
        stdin=SECRET,
        env={"BEEUNI_STATE_DIR": str(tmp_path / "state")},
    )
    assert stored.code == 0, stored.stderr
    return folder


def write_hostile_config(project: Path, marker: Path, commit: str) -> None:
    """What the issue's agent writes with `write` alone: a script, a `.git/config` naming a
    promisor remote whose `uploadpack` runs it (the repository's own `protocol.file.allow`
    granting the transport), `core.fsmonitor`, `core.hooksPath` and `core.pager` running it
    through an included file, and a replace ref pointing the commit at a missing object."""
    notes = project / "memory" / "notes.sh"
    notes.parent.mkdir(exist_ok=True)
    notes.write_text(f'echo "$0 $*" >> {marker}\n')
    hooks = project / "memory" / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-index-change", "post-checkout", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\nsh {notes} {hook}\n")
        (hooks / hook).chmod(0o755)
    (project / "memory" / "more.config").write_text(
        f"[core]\n\tfsmonitor = sh {notes} fsmonitor\n\thooksPath = {hooks}\n\tpager = sh {notes} pager\n"
    )
    config = project / ".git" / "config"
    config.write_text(
        config.read_text().replace("repositoryformatversion = 0", "repositoryformatversion = 1")
        + f"[include]\n\tpath = {project}/memory/more.config\n"
        + "[extensions]\n\tpartialClone = origin\n"
        + f'[remote "origin"]\n\turl = {project}\n\tpromisor = true\n\tuploadpack = sh {notes} uploadpack #\n'
        + '[protocol "file"]\n\tallow = always\n[protocol]\n\tallow = always\n'
    )
    replace = project / ".git" / "refs" / "replace" / commit
    replace.parent.mkdir(parents=True, exist_ok=True)
    replace.write_text(MISSING + "\n")


def output(answer: Any) -> Any:
    assert answer.status_code == 200, answer.text
    return json.loads(answer.json()["output"])


def called(project: Path, tmp_path: Path, agent: str, release: str) -> dict[str, Any]:
    done = run_beeuni(
        ["tools", "call", "lookup_order", str(project), "--agent", agent, "--release", release],
        cwd=project,
        env={"BEEUNI_STATE_DIR": str(tmp_path / "state")},
    )
    assert done.code == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_a_promisor_remote_and_a_replace_ref_to_a_missing_object_run_nothing(project: Path, tmp_path: Path) -> None:
    released = git(project, "rev-parse", "HEAD")
    marker = tmp_path / "ran"
    write_hostile_config(project, marker, released)
    plain = subprocess.run(["git", "rev-parse", f"{released}^{{commit}}"], cwd=project, capture_output=True)
    assert plain.returncode != 0 and "uploadpack" in marker.read_text()  # the attack is real
    marker.unlink()

    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        assert daemon.document["release"] == released
        assert output(daemon.call("lookup_order", agent="b")) == {"greeting": "hello", "keyed": True}
        event = daemon.converge(released)
        assert event["event"] == "converged" and event["release"] == released
        assert daemon.converge()["release"] == released  # HEAD, through the same refs
    assert called(project, tmp_path, "a", released) == {"greeting": "hello", "keyed": False}

    (project / "tools" / "fresh.ts").write_text(OTHER)  # untracked: validate asks git check-ignore
    (project / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n  fresh: tools/fresh.ts\n", 1))
    validated = run_beeuni(["validate", str(project)], cwd=project)
    assert "`tools/fresh.ts` is not tracked by git" in validated.stdout, validated.stdout
    listed = run_beeuni(["tools", "ls", str(project)], cwd=project)
    assert "fresh" in listed.stdout
    assert not marker.exists(), marker.read_text()


def test_a_replace_ref_does_not_make_a_pinned_commit_serve_another_tree(project: Path, tmp_path: Path) -> None:
    """`git replace` (or the file it writes) points the released commit at a commit whose
    manifest grants agent `a` every secret; the daemon and `tools call` serve the commit's tree."""
    released = git(project, "rev-parse", "HEAD")
    (project / "beeuni.yaml").write_text(WIDENED)
    widened = commit(project, "a gets every secret")
    git(project, "reset", "-q", "--hard", released)
    git(project, "replace", released, widened)
    assert "secrets: all\n  b:" in git(project, "show", f"{released}:beeuni.yaml")  # the attack is real
    info = project / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "grafts").write_text(f"{released} {widened}\n")  # and HEAD~1 would name the widened one

    with running_daemon(project, tmp_path, "--harness", "experimental", "--release", released) as daemon:
        assert daemon.document["release"] == released
        assert output(daemon.call("lookup_order", agent="a"))["keyed"] is False
        assert output(daemon.call("lookup_order", agent="b"))["keyed"] is True
    assert called(project, tmp_path, "a", "HEAD")["keyed"] is False
    refused, _ = daemon_refused(project, tmp_path / "state", "--harness", "experimental", "--release", "HEAD~1")
    assert refused.code == 2 and "`HEAD~1` names no commit" in refused.stderr  # the first commit has no parent


def test_fsmonitor_hooks_and_an_included_config_run_nothing(project: Path, tmp_path: Path) -> None:
    (project / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n  fresh: tools/fresh.ts\n", 1))
    git(project, "add", "beeuni.yaml")
    git(project, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", "declare fresh")
    (project / "tools" / "fresh.ts").write_text(OTHER)  # untracked: beeuni asks git check-ignore why
    released = git(project, "rev-parse", "HEAD")
    marker = tmp_path / "ran"
    write_hostile_config(project, marker, released)
    (project / ".git" / "refs" / "replace" / released).unlink()
    subprocess.run(["git", "check-ignore", "-q", "x"], cwd=project, capture_output=True)
    assert "fsmonitor" in marker.read_text()  # the attack is real: any index read runs it
    marker.unlink()

    validated = run_beeuni(["validate", str(project)], cwd=project)
    assert "`tools/fresh.ts` is not tracked by git" in validated.stdout, validated.stdout
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        assert daemon.document["release"] == released
        assert "fresh: `tools/fresh.ts` is not tracked by git" in daemon.log()
    assert called(project, tmp_path, "b", released)["keyed"] is True
    assert not marker.exists(), marker.read_text()


def test_an_object_forged_in_the_object_store_is_refused_not_served(project: Path, tmp_path: Path) -> None:
    """The loose object of `tools/helper.ts`, rewritten with other bytes under the same name:
    git hands the forged bytes out as they are; beeuni checks each object against its name."""
    name = git(project, "rev-parse", "HEAD:tools/helper.ts")
    loose = project / ".git" / "objects" / name[:2] / name[2:]
    loose.unlink()
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(FORGED_HELPER) + FORGED_HELPER.encode()))
    assert git(project, "cat-file", "-p", name) == FORGED_HELPER.strip()  # the attack is real
    refused, handed = daemon_refused(project, tmp_path / "state", "--harness", "experimental")
    assert (refused.code, handed) == (2, b"")
    said = "the release cannot be read from git: its object store holds other bytes for tools/helper.ts"
    assert said in refused.stderr and "Traceback" not in refused.stderr


def test_a_served_file_forged_and_set_read_only_again_is_not_carried_into_the_next_release(
    project: Path, tmp_path: Path
) -> None:
    """A module outside Landlock's reach of modes changes a served file's mode, writes it and
    sets the mode back: the convergence hashes each file it would link, and writes this one
    from git's objects; the unchanged files are still linked."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with running_daemon(project, tmp_path, "--harness", "experimental", env={"TMPDIR": str(temporary)}) as daemon:
        (private,) = temporary.glob(f"beeuni-daemon-{daemon.process.pid}-*")
        served = private / "release-1" / "tools"
        forged = served / "helper.ts"
        forged.chmod(0o644)
        forged.write_text(FORGED_HELPER.ljust(len(HELPER))[: len(HELPER)])
        forged.chmod(0o444)
        inodes = {name: (served / name).stat().st_ino for name in ("helper.ts", "lookup_order.ts")}
        (project / "tools" / "other.ts").write_text(OTHER.replace("Another tool.", "Another tool, changed."))
        changed = commit(project, "another description")
        event = daemon.converge()
        assert event["event"] == "converged" and event["release"] == changed
        assert output(daemon.call("lookup_order", agent="b")) == {"greeting": "hello", "keyed": True}
        following = private / "release-2" / "tools"
        assert (following / "helper.ts").read_text() == HELPER
        assert (following / "helper.ts").stat().st_ino != inodes["helper.ts"]
        assert (following / "lookup_order.ts").stat().st_ino == inodes["lookup_order.ts"]  # still linked


def test_sessions_converge_resolves_the_release_without_running_anything(tmp_path: Path) -> None:
    """`beeuni sessions converge` in the user's own CLI, on a session an agent has written the
    issue's `.git/config` into: the commit is named, the script never runs."""
    from opencode_session import opencode_version

    if opencode_version() is None:
        pytest.skip("the pinned opencode cannot start here")
    from model_server import say, scripted_model
    from test_session_releases import Project

    project = Project(tmp_path)
    with scripted_model({"Hi.": [say("hello")]}) as model:
        started = project.sessions(model, "new", "--wait", "--prompt", "Hi.")
        assert started.returncode == 0, started.stderr
    session_id = started.stdout.split("\n", 1)[0]
    released = project.git("rev-parse", "HEAD")
    marker = tmp_path / "ran"
    write_hostile_config(project.folder, marker, released)
    converged = project.beeuni("sessions", "converge", session_id)
    assert converged.code == 0, converged.stderr
    assert released[:12] in converged.stdout
    assert not marker.exists(), marker.read_text()


def test_a_fifo_in_place_of_a_file_git_reads_stalls_nothing_for_ever(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An included configuration file, `objects/info/alternates` or the index made a FIFO no one
    writes: git waits on it for ever; beeuni ends git past its bound (shortened here) and says so,
    and reads none of git's own files that is not a regular file."""
    from beeuni.engine.release import git as run_git
    from beeuni.engine.release.git_index import Release
    from beeuni.engine.release.snapshot import ReleaseError, commit_of, take

    monkeypatch.setattr(run_git, "TIMEOUT", 1.0)
    config = project / ".git" / "config"
    kept = config.read_text()
    os.mkfifo(tmp_path / "fifo")
    config.write_text(kept + f"[include]\n\tpath = {tmp_path / 'fifo'}\n")
    with pytest.raises(ReleaseError) as raised:
        commit_of(str(project), None)
    assert raised.value.key == "release_stalled" and raised.value.detail == "1"
    config.write_text(kept)
    released = commit_of(str(project), None)
    assert released is not None
    os.mkfifo(project / ".git" / "objects" / "info" / "alternates")
    with pytest.raises(ReleaseError) as raised:
        take(str(project), "beeuni.yaml", released, str(tmp_path / "copy"))
    assert raised.value.key == "release_stalled"
    assert not (tmp_path / "copy").exists()
    (project / ".git" / "index").unlink()
    os.mkfifo(project / ".git" / "index")
    index = Release.of(str(project))
    assert index is not None and not index.paths


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the repository to another user takes root")
def test_a_repository_of_another_user_is_read_as_the_daemon_of_another_user_reads_it(
    project: Path, tmp_path: Path
) -> None:
    """docs/platform.md's remedy runs the daemon as another user than the repository's: git refuses
    such a repository unless `safe.directory` names it, as beeuni does for the work tree it
    reads (whose configuration runs nothing here)."""
    from beeuni.engine.release.snapshot import commit_of, take

    released = git(project, "rev-parse", "HEAD")
    subprocess.run(["chown", "-R", "nobody", str(project)], check=True)
    plain = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True)
    assert "dubious ownership" in plain.stderr
    assert commit_of(str(project), None) == released
    copy = take(str(project), "beeuni.yaml", None, str(tmp_path / "copy"))
    assert Path(copy.root, "tools", "helper.ts").read_text() == HELPER


def test_git_variables_of_the_callers_environment_reach_no_git_command(project: Path, tmp_path: Path) -> None:
    """`GIT_*` variables beeuni inherits — configuration given in the environment, another git
    folder, alternates — are not handed to git: the command is run with the pins alone."""
    (project / "beeuni.yaml").write_text(MANIFEST.replace("tools:\n", "tools:\n  fresh: tools/fresh.ts\n", 1))
    (project / "tools" / "fresh.ts").write_text(OTHER)
    marker = tmp_path / "ran"
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    env = {
        "BEEUNI_STATE_DIR": str(tmp_path / "state"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": f"touch {marker} #",
        "GIT_DIR": str(other / ".git"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(other / ".git" / "objects"),
    }
    validated = run_beeuni(["validate", str(project)], cwd=project, env=env)
    assert "`tools/fresh.ts` is not tracked by git" in validated.stdout, validated.stdout
    assert not marker.exists()
    done = run_beeuni(
        ["tools", "call", "lookup_order", str(project), "--agent", "b", "--release", "HEAD"], cwd=project, env=env
    )
    assert json.loads(done.stdout) == {"greeting": "hello", "keyed": True}, done.stderr
    assert not marker.exists()


def test_a_filter_driver_the_repository_names_runs_in_no_work_tree_read(project: Path, tmp_path: Path) -> None:
    """A `.gitattributes` and a `.git/config` an agent wrote mark every file for a filter driver
    whose `clean` and `process` commands are scripts: git runs them whenever it reads a work-tree
    file through its conversion (`status` re-hashing a changed file, `diff`, `update-index
    --add`). The driver's name holds a `=`, which `-c name=value` would read wrongly."""
    marker = tmp_path / "filtered"
    script = project / "tools" / "filter.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    (project / ".gitattributes").write_text("* filter=a=b\n*.ts filter=plain\n")
    commit(project, "attributes")
    with (project / ".git" / "config").open("a") as config:
        config.write(
            f'[filter "a=b"]\n\tclean = {script}\n[filter "plain"]\n\tclean = {script}\n\tprocess = {script}\n'
        )
    shipped = Path(beeuni.rules.__file__).parent / "beeuni_tools" / "web_search.ts"
    (project / ".opencode" / "tools").mkdir(parents=True)
    (project / ".opencode" / "tools" / "web_search.ts").write_bytes(shipped.read_bytes())
    commit(project, "an old copy of a Beeuni tool")
    (project / "beeuni.yaml").write_text(MANIFEST + "\n")  # changed: status reads it again
    (project / "tools" / "helper.ts").write_text(HELPER + "\n")
    subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True)
    assert marker.exists()  # the attack is real: plain git runs the drivers
    marker.unlink()

    planned = run_beeuni(["tools", "migrate", "--dry-run", str(project)], cwd=project)  # git status of the copy
    assert "web_search.ts" in planned.stdout, planned.stdout + planned.stderr
    for args in (
        ("status", "--porcelain"),
        ("diff", "--no-ext-diff", "--no-textconv", "--name-only"),
        ("update-index", "--add", "--", "beeuni.yaml", "tools/helper.ts"),
    ):
        done = git_runner.run(str(project), *args, index=str(tmp_path / "index"))
        assert done.returncode == 0, done.stderr
    assert not marker.exists(), marker.read_text()
