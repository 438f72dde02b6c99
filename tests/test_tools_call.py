"""`beeuni tools call`: one call through the daemon's session and module host,
without a server — real Bun, and a real HTTP server on 127.0.0.1 standing in for the APIs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, run_beeuni
from daemon_helpers import BUN, running_daemon
from platform_standin import WEATHER_KEY, PlatformStandIn

# The design document's example, word for word; the test points it at the stand-in's address.
WEATHER_NOW = (ROOT / "tests" / "modules" / "weather_now.ts").read_text()

MODULES = {
    "env": """export default {
  description: 'What the call sees of its context.',
  parameters: { type: 'object', properties: {} },
  async execute(args, context) { return { args, env: Object.keys(context.env).sort(), cwd: context.cwd } },
}""",
    "big": """export default {
  description: 'A long output.',
  parameters: { type: 'object', properties: {} },
  async execute() { return Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\\n') },
}""",
    "slow": """import { readlinkSync, writeFileSync } from 'node:fs'
export default {
  description: 'Never answers; leaves its process id behind.',
  parameters: { type: 'object', properties: {} },
  execute(args, context) {
    writeFileSync('out/slow.pid', readlinkSync('/proc/self'))  // its number outside its PID namespace
    return new Promise(() => {})
  },
}""",
    "plain": """export default {
  description: 'Returns a string.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'just text' },
}""",
    "throws_on_import": "throw new Error('config file tools/settings.json is missing')\nexport default {}",
}

MANIFEST = """tools:
  memory: beeuni:memory
  weather_now: tools/weather_now.ts
{project_tools}
agents:
  beeuni:
    tools: all
    secrets: all
  forecaster:
    tools: [weather_now]
    secrets: [WEATHER_API_KEY]
  ungranted:
    tools: [weather_now]
  reader:
    tools: [read]
"""


@pytest.fixture(scope="module")
def weather_api() -> Iterator[PlatformStandIn]:
    with PlatformStandIn() as standin:
        yield standin


@pytest.fixture
def project(tmp_path: Path, weather_api: PlatformStandIn) -> Path:
    folder = tmp_path / "project"
    (folder / "tools").mkdir(parents=True)
    (folder / "out").mkdir()  # where a module writes (it cannot create entries in the top folder)
    (folder / "tools" / "weather_now.ts").write_text(
        WEATHER_NOW.replace("https://api.weather.example.com", weather_api.url)
    )
    for name, source in MODULES.items():
        (folder / "tools" / f"{name}.ts").write_text(source)
    declared = "".join(f"  {name}: tools/{name}.ts\n" for name in MODULES)
    (folder / "beeuni.yaml").write_text(MANIFEST.format(project_tools=declared.rstrip("\n")))
    return folder


def call(project: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
    environment = {"BEEUNI_STATE_DIR": str(project.parent / "state"), "BEEUNI_BUN": str(BUN), **(env or {})}
    return run_beeuni(["tools", "call", *args], cwd=project, stdin=stdin, env=environment)


def set_secret(project: Path) -> None:
    stored = run_beeuni(
        ["secrets", "set", "WEATHER_API_KEY=-"],
        cwd=project,
        stdin=WEATHER_KEY + "\n",
        env={"BEEUNI_STATE_DIR": str(project.parent / "state")},
    )
    assert stored.code == 0, stored.stderr


def test_the_design_documents_weather_example_with_a_secret(project: Path, weather_api: PlatformStandIn) -> None:
    set_secret(project)
    result = call(project, "weather_now", "--args", '{"city": "Berlin"}', "--agent", "forecaster")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == {"city": "Berlin", "temperature_c": 7.5, "conditions": "light rain"}
    assert result.stdout.startswith('{\n  "city": "Berlin"')  # an object is printed as indented JSON
    assert ("/v1/current", {"city": "Berlin"}) in weather_api.requests


def test_a_secret_not_granted_is_not_seen_and_the_thrown_message_is_printed(project: Path) -> None:
    set_secret(project)
    result = call(project, "weather_now", "--args", '{"city": "Berlin"}', "--agent", "ungranted")
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "beeuni: WEATHER_API_KEY is not set: run `beeuni secrets set WEATHER_API_KEY=-` and grant it to this agent.\n"
    )


def test_arguments_from_standard_input_and_the_json_form(project: Path) -> None:
    set_secret(project)
    result = call(project, "weather_now", "--args", "-", "--json", stdin='{"city": "Zürich"}')
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {"output", "status", "duration_ms", "spilled"}
    assert json.loads(document["output"])["city"] == "Zürich"
    assert document["spilled"] is None and document["status"] == 200
    assert document["duration_ms"] >= 0


def test_the_context_holds_exactly_the_platform_variables_and_granted_secrets(project: Path) -> None:
    set_secret(project)
    env = {"BEEUNI_API_URL": "http://127.0.0.1:1", "BEEUNI_TOKEN": "t", "OPENAI_API_KEY": "k", "HOME_SECRET": "no"}
    result = call(project, "env", "--args", '{"a": 1}', env=env)
    assert result.code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["env"] == ["BEEUNI_API_URL", "BEEUNI_TOKEN", "OPENAI_API_KEY", "WEATHER_API_KEY"]
    assert seen["args"] == {"a": 1}
    assert os.path.realpath(seen["cwd"]) == os.path.realpath(project)


def test_a_string_is_printed_as_it_is(project: Path) -> None:
    result = call(project, "plain")
    assert (result.stdout, result.code) == ("just text\n", 0)


def test_refusals_are_the_daemons_404_and_403(project: Path) -> None:
    missing = call(project, "no_such_tool")
    assert missing.code == 2
    assert missing.stderr.startswith("beeuni: no tool named `no_such_tool` is loaded; the session's tools: memory, ")
    near = call(project, "weather_nw")  # the nearest name, then every name the session has
    assert near.code == 2 and "is loaded; did you mean `weather_now`?; the session's tools: " in near.stderr
    assert {"memory", "weather_now", "plain"} <= set(near.stderr.rstrip("\n").split(": ")[-1].split(", "))
    hidden = call(project, "weather_now", "--agent", "reader", "--args", '{"city": "Berlin"}')
    assert (hidden.code, hidden.stderr) == (2, "beeuni: agent reader does not see the tool weather_now\n")
    as_json = json.loads(call(project, "weather_now", "--agent", "reader", "--json").stdout)
    assert as_json["status"] == 403 and as_json["error"] == "agent reader does not see the tool weather_now"


def test_a_module_that_does_not_load_is_404_with_the_reason_logged(project: Path) -> None:
    result = call(project, "throws_on_import")
    assert result.code == 2
    logged = "[tools] project tools that did not load\n  throws_on_import: config file tools/settings.json is missing\n"
    assert logged in result.stderr
    assert result.stderr.endswith("beeuni: no tool named throws_on_import is loaded\n")


def test_the_timeout_ends_the_calls_process(project: Path) -> None:
    result = call(project, "slow", "--timeout", "0.5")
    assert result.code == 1
    assert result.stderr == "beeuni: slow did not finish within 0.5 seconds and was stopped\n"
    pid = int((project / "out" / "slow.pid").read_text())
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped before the command ended


def test_a_large_output_is_spilled_like_the_daemon_does(project: Path) -> None:
    result = call(project, "big", "--json")
    document = json.loads(result.stdout)
    spilled = Path(document["spilled"])
    try:
        assert spilled.read_text().count("\n") == 2999
        assert document["output"].startswith("line 1\n")
        assert f"is in {spilled}]" in document["output"]
    finally:
        spilled.unlink()


def test_bad_arguments_and_a_missing_bun_are_usage_errors(project: Path, tmp_path: Path) -> None:
    bad = call(project, "plain", "--args", "{city: Berlin}")
    assert bad.code == 2
    assert bad.stderr.startswith("beeuni: the arguments must be JSON: ")
    not_strict = call(project, "plain", "--args", '{"a": NaN}')  # strict JSON, as the daemon parses it
    assert (not_strict.code, not_strict.stderr) == (
        2,
        "beeuni: the arguments must be strict JSON: NaN is no JSON number; the tool was not run\n",
    )
    too_deep = call(project, "plain", "--args", "[" * 5000 + "]" * 5000)
    assert too_deep.code == 2 and "nest deeper than 64 levels" in too_deep.stderr
    not_an_object = call(project, "plain", "--args", "[1, 2]")
    assert (not_an_object.code, not_an_object.stderr) == (2, "beeuni: arguments must be a JSON object\n")
    no_bun = call(project, "plain", env={"BEEUNI_BUN": str(tmp_path / "no-bun")})
    assert no_bun.code == 2
    assert no_bun.stderr.startswith("beeuni: Bun is not installed: install it")


ZOO: dict[str, dict[str, Any]] = json.loads((ROOT / "tests" / "schema_zoo" / "zoo.json").read_text())


def test_the_schema_it_shows_is_the_daemons_listing(project: Path) -> None:
    """`tools call NAME --schema` prints the tool as `GET /beeuni/tools` lists it, for every schema
    of the zoo of real-world shapes, without running it."""
    for name, schema in ZOO.items():
        module = f"export default {{ description: 'Zoo: {name}.', parameters: {json.dumps(schema)},\n"
        (project / "tools" / f"zoo_{name}.ts").write_text(module + "  execute() { throw new Error('ran') } }\n")
    manifest = project / "beeuni.yaml"
    zoo = "".join(f"  zoo_{name}: tools/zoo_{name}.ts\n" for name in ZOO)
    manifest.write_text(manifest.read_text().replace("tools:\n", "tools:\n" + zoo, 1))
    with running_daemon(project, project.parent, "--harness", "experimental") as daemon:
        listing = httpx.get(f"{daemon.url}/beeuni/tools", headers=daemon.headers(), timeout=60).json()["tools"]
    listed = {tool["name"]: tool for tool in listing}
    for name, schema in ZOO.items():
        shown = call(project, f"zoo_{name}", "--harness", "experimental", "--schema")
        assert shown.code == 0, shown.stderr
        assert json.loads(shown.stdout) == listed[f"zoo_{name}"]
        assert json.loads(shown.stdout)["parameters"] == schema
    hidden = call(project, "weather_now", "--agent", "reader", "--schema")
    assert hidden.code == 2 and "does not see" in hidden.stderr
