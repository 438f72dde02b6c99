"""The daemon, for real: `beeuni daemon` on an ephemeral 127.0.0.1 port, Bun as the module host."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import run_beeuni
from daemon_helpers import BUN, Daemon, process_runs, run_harness, running_daemon, wait_until
from platform_standin import TOKEN, PlatformStandIn

MODULES = {
    "echo": """export default {
  description: 'Echo the arguments and what the tool sees of its context.',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  async execute(args, context) {
    return { args, env: context.env, cwd: context.cwd, aborted: context.signal.aborted }
  },
}""",
    "fail": """export default {
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  async execute() { throw new Error('orders API answered 503: try again in a minute') },
}""",
    "big": """export default {
  description: 'A long output.',
  parameters: { type: 'object', properties: {} },
  async execute() { return Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\\n') },
}""",
    "slow": """import { appendFileSync, readlinkSync, writeFileSync } from 'node:fs'
export default {
  description: 'Runs until stopped, ticking in its mark file (in the repository).',
  parameters: { type: 'object', properties: { mark: { type: 'string' } } },
  execute(args, context) {
    // its number outside its PID namespace (process.pid is 1 inside)
    writeFileSync(`${context.cwd}/out/${args.mark}.started`, readlinkSync('/proc/self'))
    setInterval(() => appendFileSync(`${context.cwd}/out/${args.mark}`, 'tick\\n'), 5)
    return new Promise(() => {})
  },
}""",
    "chatty": """export default {
  description: 'Prints to stdout, which must not disturb the daemon.',
  parameters: { type: 'object', properties: {} },
  async execute() { console.log('{"op": "result", "id": 1}'); process.stdout.write('noise\\n'); return 'quiet' },
}""",
    "count": """import { appendFileSync } from 'node:fs'
export default {
  description: 'Counts its runs in out/calls.log, in the repository.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) { appendFileSync(`${context.cwd}/out/calls.log`, 'ran\\n'); return 'counted' },
}""",
    "no_default": "export const tool = { description: 'x', parameters: { type: 'object' }, execute() {} }",
    "bad_params": "export default { description: 'x', parameters: { type: 'string' }, execute() {} }",
    "bad_schema": "export default { description: 'x', parameters: { type: 'object', required: 'n' }, execute() {} }",
    "throws_on_import": "throw new Error('config file tools/settings.json is missing')\nexport default {}",
    "needs_zod": """import { z } from 'zod'
export default { description: 'x', parameters: z.toJSONSchema(z.object({ id: z.string() })), execute() {} }""",
}

MANIFEST = """tools:
  web_search: beeuni:web_search
  image_search: beeuni:image_search
  scrape_webpage: beeuni:scrape_webpage
  memory: beeuni:memory
  show: beeuni:show
{project_tools}
  gone: tools/gone.ts
agents:
  beeuni:
    tools: all
    secrets: all
  alice:
    tools: [echo, slow]
    secrets: [ALICE_KEY]
  bob:
    tools: [echo]
    secrets: [BOB_KEY]
  lead:
    tools: [task, echo]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("session") / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "out").mkdir()  # where the modules write (they cannot create entries in the top folder)
    for name, source in MODULES.items():
        (folder / "tools" / f"{name}.ts").write_text(source + "\n")
    project_tools = "\n".join(f"  {name}: tools/{name}.ts" for name in MODULES)
    (folder / "beeuni.yaml").write_text(MANIFEST.format(project_tools=project_tools))
    return folder


@pytest.fixture(scope="module")
def platform() -> Iterator[PlatformStandIn]:
    with PlatformStandIn() as standin:
        yield standin


@pytest.fixture(scope="module")
def daemon(project: Path, platform: PlatformStandIn, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("daemon")
    env = {
        "BEEUNI_STATE_DIR": str(tmp / "state"),
        "BEEUNI_API_URL": platform.url,
        "BEEUNI_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "provider-key",
        "DATABASE_PASSWORD": "never-seen-by-tools",
    }
    for name, value in (("ALICE_KEY", "alice-secret"), ("BOB_KEY", "bob-secret")):
        stored = run_beeuni(["secrets", "set", f"{name}=-", str(project)], cwd=project, stdin=value + "\n", env=env)
        assert stored.code == 0, stored.stderr
        assert value not in stored.stdout + stored.stderr
    with running_daemon(project, tmp, "--harness", "experimental", "--timeout", "20", env=env) as running:
        yield running


def test_round_trip_experimental(daemon: Daemon, project: Path) -> None:
    answer = daemon.call("echo", {"text": "hi"}, agent="alice")
    assert answer.status_code == 200
    body = json.loads(answer.json()["output"])
    assert body["args"] == {"text": "hi"}
    assert body["cwd"] == str(project.resolve())
    assert answer.json()["truncated"] is False


def test_modules_that_do_not_load_are_logged_and_the_others_served(daemon: Daemon) -> None:
    log = daemon.log()
    assert "[tools] project tools that did not load" in log
    reasons = {
        line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
        for line in log.splitlines()
        if line.startswith("  ")
    }
    assert reasons["gone"].endswith("tools/gone.ts does not exist")
    assert reasons["no_default"] == "the module has no default export"
    assert reasons["bad_params"].startswith("`parameters` is not a JSON Schema object schema")
    assert (
        reasons["bad_schema"] == "its parameters are not valid JSON Schema: 'n' is not of type 'array' (at `required`)"
    )
    assert reasons["throws_on_import"] == "config file tools/settings.json is missing"
    assert "Cannot find package 'zod'" in reasons["needs_zod"]
    served = daemon.tools(agent="beeuni")
    assert {"echo", "fail", "web_search", "memory"} <= set(served)
    assert not {"gone", "no_default", "bad_params", "bad_schema", "throws_on_import", "needs_zod"} & set(served)


def test_not_loaded_is_404_with_the_spec_text(daemon: Daemon) -> None:
    for name in ("no_default", "nothing"):
        answer = daemon.call(name)
        assert answer.status_code == 404
        assert answer.json() == {"error": f"no tool named {name} is loaded"}


def test_a_name_from_the_request_is_escaped_in_the_answer(daemon: Daemon) -> None:
    """The daemon's texts come from the rules, their blanks filled with values from the request
    or the manifest: a tool name holding a line break or a terminal control is shown escaped, so
    a client printing the answer cannot be made to print a forged line or clear its screen."""
    answer = daemon.call("x%0Abeeuni.yaml:1:1: error%1B[2J")
    assert answer.status_code == 404
    assert answer.json() == {"error": "no tool named x\\nbeeuni.yaml:1:1: error\\x1b[2J is loaded"}


def test_a_tool_the_agent_does_not_see_is_403(daemon: Daemon) -> None:
    answer = daemon.call("fail", agent="bob")
    assert answer.status_code == 403
    assert answer.json() == {"error": "agent bob does not see the tool fail"}
    assert daemon.tools(agent="bob") == ["echo"]


def test_a_thrown_error_is_what_the_model_reads(daemon: Daemon) -> None:
    answer = daemon.call("fail")
    assert answer.status_code == 422
    assert answer.json() == {"error": "orders API answered 503: try again in a minute"}


def test_a_token_is_required(daemon: Daemon) -> None:
    answer = httpx.post(f"{daemon.url}/beeuni/tools/echo", json={}, timeout=30)
    assert answer.status_code == 401
    assert "a bearer token is required" in answer.json()["error"]


def test_large_output_is_spilled_to_a_file(daemon: Daemon) -> None:
    body = daemon.call("big").json()
    assert body["truncated"] is True
    assert body["lines"] == 3000
    whole = Path(body["path"]).read_text()
    assert whole.splitlines()[-1] == "line 3000"
    assert body["size"] == len(whole.encode())
    shown = body["output"].split("\n")
    assert len(shown) <= 2000 and len(body["output"].encode()) <= 50 * 1024  # the note included
    assert shown[1997] == "line 1998"
    assert body["output"].endswith(f"is in {body['path']}]")
    assert oct(Path(body["path"]).stat().st_mode & 0o777) == "0o600"


def test_module_output_on_stdout_does_not_disturb_the_host(daemon: Daemon) -> None:
    assert daemon.call("chatty").json()["output"] == "quiet"


def test_each_agent_sees_only_its_own_secrets(daemon: Daemon) -> None:
    alice = json.loads(daemon.call("echo", agent="alice").json()["output"])["env"]
    bob = json.loads(daemon.call("echo", agent="bob").json()["output"])["env"]
    assert alice == {
        "ALICE_KEY": "alice-secret",
        "BEEUNI_API_URL": alice["BEEUNI_API_URL"],
        "BEEUNI_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "provider-key",
    }
    assert bob["BOB_KEY"] == "bob-secret" and "ALICE_KEY" not in bob
    everything = json.loads(daemon.call("echo", agent="beeuni").json()["output"])["env"]
    assert {"ALICE_KEY", "BOB_KEY"} <= set(everything)
    assert "DATABASE_PASSWORD" not in everything and "PATH" not in everything


def test_secrets_ls_lists_names_only(daemon: Daemon, project: Path) -> None:
    listed = run_beeuni(["secrets", "ls", str(project)], cwd=project, env={"BEEUNI_STATE_DIR": str(daemon.state)})
    assert listed.stdout == "ALICE_KEY\nBOB_KEY\n"
    stored = next(daemon.state.glob("projects/*/secrets.json"))
    assert oct(stored.stat().st_mode & 0o777) == "0o600"


def test_a_value_on_the_command_line_is_refused(project: Path, tmp_path: Path) -> None:
    refused = run_beeuni(
        ["secrets", "set", "KEY=hunter2", str(project)], cwd=project, env={"BEEUNI_STATE_DIR": str(tmp_path)}
    )
    assert refused.code == 2 and "hunter2" not in refused.stderr
    assert "pass the value on standard input" in refused.stderr


def test_a_client_that_goes_away_ends_the_calls_process(daemon: Daemon, project: Path) -> None:
    mark = "gone-client"
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{daemon.url}/beeuni/tools/slow", json={"mark": mark}, headers=daemon.headers("alice"), timeout=1.0)
    assert_stopped_for_good(daemon, project, mark)


def assert_stopped_for_good(daemon: Daemon, project: Path, mark: str) -> None:
    """The call's process is gone, and with it every timer it left: its mark file stops changing."""
    started = project / "out" / f"{mark}.started"
    wait_until(started.exists, "the call to start")
    pid = int(started.read_text())
    wait_until(lambda: not process_runs(pid), "the call's process to end")
    ticks = (project / "out" / mark).read_text() if (project / "out" / mark).exists() else ""
    assert daemon.call("echo", agent="bob").status_code == 200  # the next call runs while nothing ticks
    assert ((project / "out" / mark).read_text() if (project / "out" / mark).exists() else "") == ticks


def test_fifty_concurrent_calls(daemon: Daemon) -> None:
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda i: daemon.call("echo", {"text": str(i)}, agent="bob"), range(50)))
    texts = sorted(int(json.loads(answer.json()["output"])["args"]["text"]) for answer in answers)
    assert texts == list(range(50))


def test_the_five_beeuni_tools_against_the_platform_standin(daemon: Daemon, platform: PlatformStandIn) -> None:
    search = json.loads(daemon.call("web_search", {"query": "bees ||| honey"}).json()["output"])
    assert [entry["query"] for entry in search["results"]] == ["bees", "honey"]
    images = json.loads(daemon.call("image_search", {"query": "bees"}).json()["output"])
    assert images["results"][0]["url"] == "https://images.example.com/1.jpg"
    page = json.loads(daemon.call("scrape_webpage", {"url": "https://example.com"}).json()["output"])
    assert page["title"] == "Example Domain"
    created = daemon.call("memory", {"command": "create", "path": "memory/plan.md", "file_text": "plan"}).json()
    assert created == {"output": "created memory/plan.md", "truncated": False}
    shown = json.loads(daemon.call("show", {"type": "file", "path": "memory/plan.md"}).json()["output"])
    assert shown == {"type": "file", "title": None, "path": "memory/plan.md"}
    assert ("/v1/search/web", {"query": "bees", "max_results": 5}) in platform.requests


def test_a_killed_call_process_fails_only_its_call(daemon: Daemon, project: Path) -> None:
    started = project / "out" / "killed.started"
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(daemon.call, "slow", {"mark": "killed"}, "alice")
        wait_until(started.exists, "the call to start")
        os.kill(int(started.read_text()), signal.SIGKILL)
        answer = running.result()
    assert answer.status_code == 502
    assert answer.json()["error"].startswith("the module host stopped during the call to slow (killed by SIGKILL)")
    assert daemon.call("echo", agent="bob").status_code == 200


def test_a_missing_module_and_a_removed_beeuni_tool_are_not_loaded(tmp_path: Path) -> None:
    folder = tmp_path / "missing"
    (folder / "tools").mkdir(parents=True)
    (folder / "beeuni.yaml").write_text("tools:\n  memory: beeuni:memory\n  echo: tools/echo.ts\n")
    with running_daemon(folder, tmp_path, "--harness", "experimental") as daemon:
        assert daemon.call("echo").status_code == 404  # declared, its module not written
        removed = daemon.call("show")  # a Beeuni tool the project does not list: 404
        assert (removed.status_code, removed.json()) == (404, {"error": "no tool named show is loaded"})
        assert daemon.call("memory", {"command": "view", "path": "memory"}).status_code == 200


def test_subagent_on_the_experimental_harness_is_limited_by_its_parent(daemon: Daemon) -> None:
    assert daemon.call("echo", agent="alice", parent="lead").status_code == 200
    limited = daemon.call("slow", {"mark": "/tmp/unused"}, agent="alice", parent="lead")
    assert limited.status_code == 403
    refused = daemon.call("echo", agent="alice", parent="bob")
    assert refused.json() == {"error": "agent bob cannot start subagents"}


def test_a_call_past_the_timeout_is_stopped(project: Path, tmp_path: Path) -> None:
    with running_daemon(project, tmp_path, "--harness", "experimental", "--timeout", "0.5") as daemon:
        answer = daemon.call("slow", {"mark": "timed-out"})
        assert answer.status_code == 504
        assert answer.json() == {"error": "slow did not finish within 0.5 seconds and was stopped"}
        assert_stopped_for_good(daemon, project, "timed-out")


def raw_post(daemon: Daemon, tool: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{daemon.url}/beeuni/tools/{tool}", content=body, headers={**daemon.headers(), **headers}, timeout=60
    )


def runs_of_count(project: Path) -> int:
    log = project / "out" / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("body", [b"[1, 2]", b"3", b'"text"', b"null", b"true"])
def test_arguments_that_are_no_json_object_are_422_and_the_tool_is_not_run(
    daemon: Daemon, project: Path, body: bytes
) -> None:
    before = runs_of_count(project)
    answer = raw_post(daemon, "count", body, **{"content-type": "application/json"})
    assert (answer.status_code, answer.json()) == (422, {"error": "arguments must be a JSON object"})
    assert runs_of_count(project) == before
    assert daemon.call("count").json()["output"] == "counted"  # an object (or no body) runs it
    assert raw_post(daemon, "count", b"").status_code == 200
    assert runs_of_count(project) == before + 2


def test_a_body_that_is_not_json_is_400(daemon: Daemon) -> None:
    answer = raw_post(daemon, "echo", b"{text: hi}")
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("the arguments must be JSON: ")


def test_a_body_over_the_default_limit_is_413_and_the_tool_is_not_run(daemon: Daemon, project: Path) -> None:
    before = runs_of_count(project)
    padding = b" " * (1024 * 1024)  # 1 MiB of blanks around an object: valid JSON, one byte too many
    answer = raw_post(daemon, "count", b"{}" + padding[:-1])
    assert (answer.status_code, answer.json()) == (
        413,
        {"error": "the arguments are larger than 1048576 bytes; the tool was not run"},
    )
    assert raw_post(daemon, "count", b"{}" + padding[:-2]).status_code == 200  # the limit itself passes
    assert runs_of_count(project) == before + 1


def test_a_streamed_body_over_the_limit_is_413(daemon: Daemon) -> None:
    """Without a Content-Length the body is counted as it arrives, and refused at the limit."""

    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    answer = httpx.post(f"{daemon.url}/beeuni/tools/echo", content=chunks(), headers=daemon.headers(), timeout=60)
    assert answer.status_code == 413


def test_fastapis_own_answers_have_the_daemons_shape(daemon: Daemon) -> None:
    unknown = httpx.get(f"{daemon.url}/nothing/here", timeout=30)
    assert unknown.status_code == 404
    assert unknown.json() == {
        "error": "no such path: /nothing/here (the daemon serves GET /beeuni/tools and POST /beeuni/tools/NAME)"
    }
    wrong_method = httpx.get(f"{daemon.url}/beeuni/tools/echo", headers=daemon.headers(), timeout=30)
    assert (wrong_method.status_code, wrong_method.json()) == (
        405,
        {"error": "GET /beeuni/tools/echo is not allowed here"},
    )
    bad_query = httpx.get(f"{daemon.url}/beeuni/tools?all=maybe", headers=daemon.headers(), timeout=30)
    assert bad_query.status_code == 422
    assert bad_query.json()["error"].startswith("bad request: query.all: ")


def test_max_body_sets_the_limit(project: Path, tmp_path: Path) -> None:
    with running_daemon(project, tmp_path, "--harness", "experimental", "--max-body", "100") as daemon:
        assert daemon.call("echo", {"text": "x" * 50}).status_code == 200
        too_large = daemon.call("echo", {"text": "x" * 100})
        assert (too_large.status_code, too_large.json()["error"]) == (
            413,
            "the arguments are larger than 100 bytes; the tool was not run",
        )


def test_the_hidden_tools_and_the_listing_follow_a_convergence_not_the_working_tree(tmp_path: Path) -> None:
    """The listing the opencode plugin reads at opencode's start (`?all=true`: every served tool,
    each agent's hidden ones and its permission) is the release's: an edit of the manifest in the working tree
    changes nothing, a convergence on the commit that holds it does."""
    folder = tmp_path / "hiding"
    (folder / "tools").mkdir(parents=True)
    (folder / "tools" / "echo.ts").write_text(MODULES["echo"])
    manifest = folder / "beeuni.yaml"
    manifest.write_text(
        "tools:\n  memory: beeuni:memory\n  echo: tools/echo.ts\nagents:\n  plan:\n    tools: [read, echo]\n"
        "    permission: {echo: ask}\n"
    )
    commit = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-am", "x"]
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(commit, cwd=folder, check=True)
    with running_daemon(folder, tmp_path, "--harness", "standard") as daemon:

        def listing(everything: bool = True) -> Any:
            query = {"all": "true"} if everything else {}
            answer = httpx.get(f"{daemon.url}/beeuni/tools", params=query, headers=daemon.headers())
            assert answer.status_code == 200, answer.text
            return answer.json()

        first = listing()
        assert [tool["name"] for tool in first["tools"]] == ["memory", "echo"]
        assert {"memory", "bash"} <= set(first["hidden"]["plan"]) and "read" not in first["hidden"]["plan"]
        assert first["permission"] == {"plan": [{"permission": "echo", "pattern": "*", "action": "ask"}]}
        manifest.write_text(
            "tools:\n  memory: beeuni:memory\n  echo: tools/echo.ts\nagents:\n  plan:\n    tools: [echo]\n"
            "    permission: {echo: deny}\n"
        )
        assert listing() == first
        subprocess.run(commit, cwd=folder, check=True)
        assert daemon.converge()["event"] == "converged"
        second = listing()
        assert [tool["name"] for tool in second["tools"]] == ["memory", "echo"]
        assert "echo" not in second["hidden"]["plan"] and "read" in second["hidden"]["plan"]
        assert second["permission"] == {"plan": [{"permission": "echo", "pattern": "*", "action": "deny"}]}
        assert "hidden" not in listing(everything=False) and "permission" not in listing(everything=False)


def test_the_plugin_finds_zod_offline_and_a_plugin_without_it_is_logged_once(tmp_path: Path) -> None:
    """The plugin takes zod from beeuni's install by its path: loaded by plain Bun, offline, with no
    @opencode-ai/plugin anywhere, it still carries the schemas (it never says it lacks zod). A
    plugin that lacks it (beeuni's bundled file gone) says so when it lists the tools, and the
    daemon logs it once."""
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "echo.ts").write_text(
        "export default { description: 'Echo.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' }\n"
    )
    (project / "beeuni.yaml").write_text("tools:\n  echo: tools/echo.ts\n")
    loader = tmp_path / "load.ts"  # the plugin loaded by plain Bun, with no @opencode-ai/plugin anywhere
    loader.write_text(
        "const plugin = await import(process.argv[2])\n"
        "const hooks = await plugin.BeeuniTools()\n"
        "console.log(JSON.stringify(Object.keys(hooks.tool)))\n"
    )
    line = "[tools] the standard harness's plugin found no zod"
    with running_daemon(project, tmp_path) as daemon:
        plugin = Path(daemon.document["plugin"])
        assert not plugin.is_relative_to(project)  # where no agent and no module can write
        command = [str(BUN), "--no-install", str(loader), str(plugin)]  # offline
        loaded = run_harness(command, daemon)
        assert loaded.returncode == 0, loaded.stderr
        assert json.loads(loaded.stdout) == ["echo"]
        assert line not in daemon.log()
        for _ in range(2):
            listed = httpx.get(
                f"{daemon.url}/beeuni/tools?all=true&without_zod=true", headers=daemon.headers(), timeout=30
            )
            assert listed.status_code == 200
        wait_until(lambda: line in daemon.log(), "the daemon to log it")
        assert daemon.log().count(line) == 1
        assert "reinstall beeuni and restart the session" in daemon.log()
