"""The harness names the agent, never the model: a process of the session's user that read every
file the daemon wrote, every environment, command line and open descriptor it could, cannot call
a tool as any agent — on the standard harness through a real opencode session whose scripted
model runs the intruder in its shell, and on the experimental path with a forged agent header.
The session's own calls still work. (``tests/intruder.py`` is the hostile command.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from beeuni.daemon.box.sandbox import landlock_missing
from beeuni.daemon.edge.handoff import HandOff
from beeuni.daemon.edge.ptrace_guard import CAP_SYS_PTRACE, memory_unguarded, unguarded_because
from conftest import BEEUNI, run_beeuni
from daemon_helpers import Daemon, daemon_environment, daemon_refused, run_harness, running_daemon
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import (
    OPENCODE,
    Run,
    environment,
    link_plugin_package,
    opencode_version,
    plugin_folder,
    run_opencode,
)

INTRUDER = Path(__file__).parent / "intruder.py"
ADMIN_KEY = "k" * 43  # shaped like the daemon's token, so that the intruder tries it too
MANIFEST = """tools:
  whoami: tools/whoami.ts
agents:
  intern:
    tools: [bash, whoami]
    secrets: []
  admin:
    tools: [whoami]
    secrets: [ADMIN_KEY]
"""
WHOAMI = """import { appendFileSync } from 'node:fs'
export default {
  description: 'Says which secrets the call got.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) {
    const names = Object.keys(context.env).filter((name) => !name.startsWith('BEEUNI_')).sort()
    appendFileSync(`${context.cwd}/out/calls.log`, `${names.join(',')}\\n`)
    return names.map((name) => `${name}=${context.env[name]}`).join(',') || '(none)'
  },
}
"""
REFUSED = re.compile(r"\[daemon\] refused POST /beeuni/tools/whoami as agent admin from pid \d+ \(python")


def make_project(folder: Path, state: Path) -> Path:
    (folder / "tools").mkdir(parents=True)
    (folder / "out").mkdir()  # where the module writes (it cannot create entries in the top folder)
    (folder / "tools" / "whoami.ts").write_text(WHOAMI)
    (folder / "beeuni.yaml").write_text(MANIFEST)
    agents = {"intern": {"mode": "primary"}, "admin": {"mode": "primary"}}
    (folder / "opencode.json").write_text(json.dumps({"agent": agents}))
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    env = {"BEEUNI_STATE_DIR": str(state)}
    stored = run_beeuni(["secrets", "set", "ADMIN_KEY=-", str(folder)], cwd=folder, stdin=ADMIN_KEY, env=env)
    assert stored.code == 0, stored.stderr
    return folder


def intrusion(project: Path, state: Path) -> list[str]:
    """The intruder's command line: call `whoami` as admin with whatever it can read (the
    descriptors of this test's processes: the daemon, opencode and what they started)."""
    return [sys.executable, str(INTRUDER), "admin", "whoami", str(os.getpid()), str(project), str(state)]


def only_refusals(report: dict[str, object], daemon: Daemon) -> None:
    port = daemon.url.rsplit(":", 1)[1]
    answers = report["answers"]
    assert isinstance(answers, dict) and list(answers) == [port]  # it found the daemon
    candidates = report["candidates"]
    assert isinstance(candidates, int) and candidates > 0
    assert answers[port] == {"401": candidates + 1}  # every string it read, and none: all refused


# the standard harness: a real opencode session ------------------------------------------------


@dataclass
class Intruded:
    project: Path
    model: ScriptedModel
    daemon: Daemon
    run: Run


@pytest.fixture(scope="module")
def intruded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Intruded]:
    if opencode_version() is None:
        pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here")
    tmp_path = tmp_path_factory.mktemp("intruded")
    state = tmp_path / "state"
    project = make_project(tmp_path / "project", state)
    look_around = {"command": " ".join(intrusion(project, state)), "description": "Look around"}
    script = {"case-intern": [call("bash", look_around), call("whoami", {}), say("done")]}
    with scripted_model(script) as model, running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        run = run_opencode(project, tmp_path / "home", model, daemon, "case-intern: go", "intern")
        yield Intruded(project, model, daemon, run)


def test_a_shell_command_that_read_everything_cannot_call_as_another_agent(intruded: Intruded) -> None:
    assert intruded.run.returncode == 0, intruded.run.stderr
    report = json.loads(intruded.model.result_of("case-intern", 0, 0).strip().splitlines()[-1])
    only_refusals(report, intruded.daemon)
    assert REFUSED.search(intruded.daemon.log()), intruded.daemon.log()


def test_the_sessions_own_calls_still_work_and_nothing_of_the_module_ran_for_the_intruder(
    intruded: Intruded,
) -> None:
    assert intruded.model.result_of("case-intern", 1, 0) == "(none)"  # intern's call: no secret
    assert (intruded.project / "out" / "calls.log").read_text() == "\n"  # one call in all: the session's own


def test_an_opencode_started_without_the_hand_off_offers_no_served_tool_and_says_why(tmp_path: Path) -> None:
    if opencode_version() is None:
        pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here")
    project = make_project(tmp_path / "project", tmp_path / "state")
    link_plugin_package(project / ".opencode")
    env = environment(tmp_path / "home", project)
    command = [str(OPENCODE), "debug", "agent", "intern"]
    with running_daemon(project, tmp_path, "--harness", "standard") as daemon:
        link_plugin_package(plugin_folder(daemon))
        handed = run_harness(command, daemon, project, env)
        not_handed = run_harness(command, None, project, {**env, "OPENCODE_CONFIG_DIR": str(plugin_folder(daemon))})
    assert json.loads(handed.stdout)["tools"].get("whoami") is True
    assert "whoami" not in json.loads(not_handed.stdout)["tools"]
    assert (
        "[beeuni] the tools the daemon serves are not offered: BEEUNI_DAEMON_FD names no inherited descriptor;"
        in not_handed.stderr
    )


# the experimental harness: the platform's process holds the token ------------------------------


def test_a_forged_agent_header_without_the_token_is_refused_on_the_experimental_path(tmp_path: Path) -> None:
    state = tmp_path / "state"
    project = make_project(tmp_path / "project", state)
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        intruder = subprocess.run(intrusion(project, state), capture_output=True, text=True, timeout=300)
        assert intruder.returncode == 0, intruder.stderr
        only_refusals(json.loads(intruder.stdout), daemon)
        assert not (project / "out" / "calls.log").exists()  # nothing of the module ran
        assert REFUSED.search(daemon.log()), daemon.log()
        # the harness that holds the token names any agent, and each gets its own grant
        assert daemon.call("whoami", agent="admin").json()["output"] == f"ADMIN_KEY={ADMIN_KEY}"
        assert daemon.call("whoami", agent="intern").json()["output"] == "(none)"


def test_the_401_says_why_in_one_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", tmp_path / "state")
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        answer = httpx.post(f"{daemon.url}/beeuni/tools/whoami", headers={"x-beeuni-agent": "admin"}, timeout=30)
    assert answer.status_code == 401
    assert answer.json() == {
        "error": "a bearer token is required: only the session's harness holds the daemon's token, handed to it"
        " by whoever started the session; no file holds it"
    }


# how the daemon is started -------------------------------------------------------------------


def test_the_daemon_needs_a_socket_to_hand_its_connection_to(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", tmp_path / "state")
    fresh = tmp_path / "fresh"
    env = {"BEEUNI_STATE_DIR": str(fresh)}
    without = run_beeuni(["daemon", str(project)], cwd=project, env=env)
    assert (without.code, without.stderr) == (
        2,
        "beeuni daemon: --connection-fd is required: the daemon hands its URL and token to whoever starts it,"
        " on that descriptor (one end of a socket pair), and never writes them to a file\n",
    )
    a_pipe = run_beeuni(["daemon", str(project), "--connection-fd", "0"], cwd=project, env=env, stdin="")
    assert (a_pipe.code, a_pipe.stderr) == (
        2,
        "beeuni daemon: --connection-fd 0 is no open socket: the daemon hands its token over a socket pair only,"
        " which no other process can open through /proc\n",
    )
    assert not [path for path in fresh.rglob("*") if path.is_file()]  # nothing written


def test_a_daemon_whose_starter_went_away_stops(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", tmp_path / "state")
    hand_off = HandOff()
    command = [BEEUNI, "daemon", str(project), "--harness", "experimental", "--connection-fd", str(hand_off.fd)]
    env = daemon_environment(tmp_path / "state")
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, pass_fds=(hand_off.fd,)) as process:
        hand_off.close()  # nobody will read what it hands over
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert stderr.endswith(
        "beeuni daemon: whoever started it closed --connection-fd before the daemon could hand over its"
        " connection; nobody could call it, so it stops\n"
    )


@pytest.mark.parametrize(
    ("scope", "capabilities", "guarded"),
    [
        (None, 0, False),  # no Yama
        ("0", 0, False),
        ("1", 0, True),  # the Ubuntu default: the harness is its commands' ancestor
        ("2", 0, True),
        ("1", 1 << CAP_SYS_PTRACE, False),  # root's commands may trace anyone at scope 1 and 2
        ("2", 1 << CAP_SYS_PTRACE, False),
        ("3", 1 << CAP_SYS_PTRACE, True),  # nobody may
    ],
)
def test_when_the_harness_memory_is_guarded(scope: str | None, capabilities: int, guarded: bool) -> None:
    assert (unguarded_because(scope, capabilities) == "") is guarded


def test_the_daemon_says_when_the_harness_memory_is_not_guarded_and_can_refuse_to_start(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", tmp_path / "state")
    unguarded = memory_unguarded()  # of this host, where the test runs as the daemon does
    line = f"[daemon] the harness's token is not guarded: {unguarded}; a process of the session's user"
    with running_daemon(project, tmp_path, "--harness", "experimental") as daemon:
        assert (line in daemon.log()) is bool(unguarded)
    if not unguarded or not landlock_missing()[0]:  # without Landlock, that refusal comes first
        return
    refused, handed = daemon_refused(project, tmp_path / "refused", "--require-confinement")
    assert refused.code == 2 and handed == b""
    assert refused.stderr.endswith(
        f"beeuni daemon: the harness's token cannot be guarded ({unguarded}) and --require-confinement was given\n"
    )
