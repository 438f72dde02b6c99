"""Real sessions on both harnesses, driven by the same scripted model and the same scripts: the
standard harness (the pinned opencode, through the daemon's plugin) and the experimental one (the
turn loop in the daemon, calling each module in process). The tests read what each offered the
model and what it answered it.

The experimental sessions run without opencode (``BEEUNI_OPENCODE`` names nothing); the standard
ones are skipped where opencode cannot start.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_beeuni
from model_server import ScriptedModel, call, say, scripted_model
from opencode_session import opencode_version, sessions_environment

MODULE = """export default {{
  description: {description},
  parameters: {parameters},
  async execute(args, context) {{ {body} }},
}}
"""
OBJECT = {"type": "object", "properties": {}}
#: real tools' schemas (MCP servers'), offered as written on both harnesses
ZOO: dict[str, dict[str, object]] = json.loads((Path(__file__).parent / "schema_zoo" / "zoo.json").read_text())
TOOLS = {
    **{name: ("return 'echo: ' + JSON.stringify(args)", parameters) for name, parameters in ZOO.items()},
    "echo": (
        "return 'echo: ' + JSON.stringify(args)",
        {"type": "object", "properties": {"text": {"type": "string"}, "extra": {"type": "object"}}},
    ),
    "shout": (
        "return args.text.toUpperCase()",
        {"type": "object", "properties": {"text": {"type": "string", "pattern": "^[a-z ]+$"}}, "required": ["text"]},
    ),
    "fail": (
        "throw new Error('the order service said no: ' + args.why)",
        {"type": "object", "properties": {"why": {"type": "string"}}},
    ),
    "big": ("return 'line\\n'.repeat(3000)", OBJECT),
    "whoami": ("return 'key=' + (context.env.SHOP_KEY ?? '(none)')", OBJECT),
}
EXACT = {"text": 'héllo, wörld ✓ 🐝 "quoted" \\ back', "extra": {"nested": [1, [2, {"deep": None}]], "neg": -0.5}}
MANIFEST = """tools:
  show: beeuni:show
{tools}
agents:
  beeuni:
    tools: [echo, shout, fail, big, whoami, read, write, bash, task, {zoo}]
    secrets: [SHOP_KEY]
  lead:
    tools: [read, task, echo, whoami]
  reviewer:
    tools: [echo, glob, write, whoami]
  guarded:
    tools: [echo, bash, read]
    permission:
      bash: {{"*": deny, "echo *": allow}}
      echo: ask
"""
# one script for both harnesses; a conversation is found by the key in its first prompt
SCRIPT = {
    "case-main": [
        call("echo", EXACT, ("shout", {"text": "LOUD"}), ("fail", {"why": "closed"}), ("big", {}), ("whoami", {})),
        call("show", {"image": "x"}),
        say("main done"),
        call("echo", {"text": "second turn"}),
        say("second done"),
    ],
    "case-lead": [
        call("task", {"description": "Review", "prompt": "case-sub: review", "subagent_type": "reviewer"}),
        say("lead done"),
    ],
    "case-sub": [call("echo", {"text": "from the subagent"}, ("whoami", {})), say("reviewed")],
    "case-perm": [
        call("bash", {"command": "echo allowed"}, ("bash", {"command": "rm -rf tools"}), ("echo", {"text": "x"})),
        say("perm done"),
    ],
    "case-box": [
        call(
            "bash",
            {"command": 'cat "$STATE"/projects/*/secrets.json; echo hook > .git/hooks/pre-commit; echo done'},
        ),
        call("write", {"filePath": "tools/notes/out.txt", "content": "written"}),
        say("box done"),
    ],
}


@dataclass
class Project:
    path: Path
    env: dict[str, str]
    model: ScriptedModel


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "tools").mkdir(parents=True)
    for name, (body, parameters) in TOOLS.items():
        source = MODULE.format(
            description=json.dumps(f"The {name} tool."), parameters=json.dumps(parameters), body=body
        )
        (project / "tools" / f"{name}.ts").write_text(source)
    listed = "".join(f"  {name}: tools/{name}.ts\n" for name in TOOLS)
    (project / "beeuni.yaml").write_text(MANIFEST.format(tools=listed.rstrip("\n"), zoo=", ".join(ZOO)))
    reviewer = {"mode": "subagent", "description": "Reviews the work."}
    agents = {"reviewer": reviewer, "lead": {"mode": "primary"}, "beeuni": {"mode": "primary"}}
    # with its `$schema`, which opencode would otherwise add to the working tree's copy
    (project / "opencode.json").write_text(json.dumps({"$schema": "https://opencode.ai/config.json", "agent": agents}))
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-qm", "tools")
    return project


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(project), *args], check=True)


def start(project: Project, prompt: str, *args: str) -> str:
    done = run_beeuni(["sessions", "new", "--prompt", prompt, "--wait", *args], cwd=project.path, env=project.env)
    assert done.code == 0, done.stderr
    return done.stdout.split("\n", 1)[0]


@pytest.fixture(scope="module")
def experimental(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root = tmp_path_factory.mktemp("experimental")
    path = make_project(root)
    with scripted_model(SCRIPT) as model:
        env = sessions_environment(root / "home", root / "state", path, model)
        env |= {"BEEUNI_OPENCODE": str(root / "no-opencode"), "STATE": str(root / "state")}  # none installed
        secret = run_beeuni(["secrets", "set", "SHOP_KEY=-"], cwd=path, stdin="s3cret", env=env)
        assert secret.code == 0, secret.stderr
        project = Project(path, env, model)
        project.env["SESSION_MAIN"] = start(project, "case-main: go", "--harness", "experimental")
        start(project, "case-lead: go", "--harness", "experimental", "--agent", "lead")
        yield project


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    if opencode_version() is None:
        pytest.skip("the pinned opencode (node_modules/.bin/opencode) cannot start here")
    root = tmp_path_factory.mktemp("standard")
    path = make_project(root)
    with scripted_model(SCRIPT) as model:
        env = sessions_environment(root / "home", root / "state", path, model) | {"STATE": str(root / "state")}
        secret = run_beeuni(["secrets", "set", "SHOP_KEY=-"], cwd=path, stdin="s3cret", env=env)
        assert secret.code == 0, secret.stderr
        project = Project(path, env, model)
        start(project, "case-main: go")
        start(project, "case-lead: go", "--agent", "lead")
        yield project


def listed_for(project: Path, agent: str, *args: str) -> set[str]:
    shown = run_beeuni(["tools", "ls", "--agent", agent, "--harness", "experimental", "--json", *args], cwd=project)
    return {tool["name"] for tool in json.loads(shown.stdout)["tools"]}


def test_the_same_tool_gives_the_model_the_same_output_on_both_harnesses(
    experimental: Project, standard: Project
) -> None:
    for index in range(5):  # echo (exact arguments), shout (refused by its pattern), fail, big (spilled), whoami
        ours = experimental.model.result_of("case-main", 0, index)
        theirs = standard.model.result_of("case-main", 0, index)
        if index in (1, 2):  # an error: opencode adds its own words around the daemon's text
            assert ours in theirs, (ours, theirs)
        elif index == 3:  # the spilled output names a file of each session's own
            assert ours.split("[output truncated")[0] == theirs.split("[output truncated")[0]
        else:
            assert ours == theirs
    assert experimental.model.result_of("case-main", 0, 0) == "echo: " + json.dumps(
        EXACT, ensure_ascii=False, separators=(",", ":")
    )
    assert '`text`: `"LOUD"` does not match the pattern' in experimental.model.result_of("case-main", 0, 1)
    assert experimental.model.result_of("case-main", 0, 4) == "key=s3cret"


def test_each_agent_is_offered_exactly_its_view_with_the_modules_schemas(experimental: Project) -> None:
    for key, agent, parent in (
        ("case-main", "beeuni", None),
        ("case-lead", "lead", None),
        ("case-sub", "reviewer", "lead"),
    ):
        offered = experimental.model.conversation(key)[0].tools
        assert set(offered) == listed_for(experimental.path, agent, *(["--parent", parent] if parent else [])), agent
    offered = experimental.model.conversation("case-main")[0].tools
    for name, (_, parameters) in TOOLS.items():
        assert offered[name] == parameters, name  # the module's parameters exactly
    assert set(offered["bash"]["properties"]) >= {"command", "timeout", "workdir", "description"}  # opencode's names
    assert offered["write"]["required"] == ["content", "filePath"]
    assert "edit" not in offered  # `write` without `edit`: two tools on this harness


def test_a_subagent_is_offered_what_both_lists_allow(experimental: Project) -> None:
    assert set(experimental.model.conversation("case-sub")[0].tools) == {"echo", "whoami"}  # not glob, not write
    assert experimental.model.result_of("case-lead", 0, 0) == "reviewed"
    assert experimental.model.result_of("case-sub", 0, 0) == 'echo: {"text":"from the subagent"}'
    assert experimental.model.result_of("case-sub", 0, 1) == "key=(none)"  # reviewer is granted no secret


def test_a_tool_not_offered_answers_tool_not_found(experimental: Project) -> None:
    assert "show" not in experimental.model.conversation("case-main")[0].tools
    assert experimental.model.result_of("case-main", 1, 0) == "Tool show not found"


def test_the_conversation_goes_on_in_a_later_turn(experimental: Project) -> None:
    session = experimental.env["SESSION_MAIN"]
    done = run_beeuni(
        ["sessions", "prompt", session, "--prompt", "and again", "--wait"], cwd=experimental.path, env=experimental.env
    )
    assert done.code == 0, done.stderr
    assert done.stdout.split("\n")[1:] == ["second done", ""]  # the id, then the answer
    last = experimental.model.conversation("case-main")[-1]
    said = [m.get("content") for m in last.messages if m["role"] == "user"]
    assert said == ["case-main: go", "and again"]  # the first turn's messages were sent again
    log = run_beeuni(["sessions", "log", session], cwd=experimental.path, env=experimental.env)
    assert 'tool show {"image": "x"}: error' in log.stdout
    assert "    Tool show not found" in log.stdout
    assert "user: and again" in log.stdout and "  second done" in log.stdout


def test_an_agents_permission_allows_asks_or_denies_each_call(experimental: Project) -> None:
    start(experimental, "case-perm: go", "--harness", "experimental", "--agent", "guarded")
    assert experimental.model.result_of("case-perm", 0, 0).startswith("allowed\n")
    assert (
        experimental.model.result_of("case-perm", 0, 1) == "the permission of agent guarded denies bash (rm -rf tools)"
    )
    asked = experimental.model.result_of("case-perm", 0, 2)
    assert asked == (
        "the permission of agent guarded asks before echo, and nobody can be asked in this turn: the call was refused"
    )
    assert (experimental.path / "tools").is_dir()  # the denied command never ran


def test_a_confined_bash_reads_no_secret_and_writes_no_hook(experimental: Project) -> None:
    done = run_beeuni(
        ["sessions", "new", "--harness", "experimental", "--prompt", "case-box: go", "--wait"],
        cwd=experimental.path,
        env=experimental.env,
    )
    assert done.code == 0, done.stderr
    output = experimental.model.result_of("case-box", 0, 0)
    assert "s3cret" not in output and "Permission denied" in output
    assert not (experimental.path / ".git" / "hooks" / "pre-commit").exists()
    assert experimental.model.result_of("case-box", 1, 0).startswith("Wrote"), experimental.model.result_of(
        "case-box", 1, 0
    )
    assert (
        experimental.path / "tools" / "notes" / "out.txt"
    ).read_text() == "written"  # the working tree is the model's


def test_a_convergence_between_turns_restarts_the_runtime_and_the_conversation_goes_on(tmp_path: Path) -> None:
    script = {"case-conv": [call("echo", {"text": "a"}), say("one"), call("echo", {"text": "b"}), say("two")]}
    path = make_project(tmp_path)
    with scripted_model(script) as model:
        env = sessions_environment(tmp_path / "home", tmp_path / "state", path, model)
        env["BEEUNI_OPENCODE"] = str(tmp_path / "no-opencode")
        project = Project(path, env, model)
        session = start(project, "case-conv: go", "--harness", "experimental")
        (path / "tools" / "echo.ts").write_text(
            MODULE.format(
                description=json.dumps("The new echo."),
                parameters=json.dumps(TOOLS["echo"][1]),
                body="return 'new echo'",
            )
        )
        git(path, "commit", "-qam", "a new echo")
        moved = run_beeuni(["sessions", "converge", session], cwd=path, env=env)
        assert moved.code == 0, moved.stderr
        again = run_beeuni(["sessions", "prompt", session, "--prompt", "more", "--wait"], cwd=path, env=env)
        assert again.code == 0, again.stderr
        conversation = model.conversation("case-conv")
        assert conversation[0].descriptions["echo"] == "The echo tool."
        assert conversation[-1].descriptions["echo"] == "The new echo."
        assert model.result_of("case-conv", 0, 0) == 'echo: {"text":"a"}'
        assert model.result_of("case-conv", 2, 0) == "new echo"
        assert [m.get("content") for m in conversation[-1].messages if m["role"] == "user"] == ["case-conv: go", "more"]


def test_an_unknown_provider_is_a_usage_error(experimental: Project) -> None:
    done = run_beeuni(
        ["sessions", "new", "--harness", "experimental", "--model", "nowhere/m", "--prompt", "x", "--wait"],
        cwd=experimental.path,
        env=experimental.env,
    )
    assert done.code == 2
    assert "cannot speak the provider `nowhere`" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_standard_harness_needs_opencode_and_the_experimental_one_does_not(experimental: Project) -> None:
    done = run_beeuni(["sessions", "new", "--prompt", "x", "--wait"], cwd=experimental.path, env=experimental.env)
    assert done.code == 2 and "opencode is not installed" in done.stderr
    assert os.environ.get("BEEUNI_OPENCODE") != experimental.env["BEEUNI_OPENCODE"]
