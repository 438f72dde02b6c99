"""schemathesis against the running daemon and its OpenAPI document (`GET /beeuni/openapi.json`):
for generated requests — valid ones and ones that break the document (bodies that are no object,
odd names, headers and queries) — every answer must be documented (status, content type and body
shape) and none may be a 5xx. Real daemon, real Bun; bounded by the number of examples,
with no deadline (the machine is shared)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from daemon_helpers import Daemon, running_daemon
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

#: every answer: no 5xx, a documented status, content type and body; a request that breaks the
#: document (negative mode) is refused with a 4xx
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
EXAMPLES = 40  # per operation and mode

MODULES = {
    "echo": """export default {
  description: 'Echo the arguments.',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  async execute(args) { return JSON.stringify(args) },
}""",
    "fail": """export default {
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  async execute() { throw new Error('the orders API answered 503') },
}""",
}
MANIFEST = """tools:
  echo: tools/echo.ts
  fail: tools/fail.ts
agents:
  reader:
    tools: [echo]
  lead:
    tools: [task, echo, fail]
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    folder = tmp_path_factory.mktemp("api") / "project"
    (folder / "tools").mkdir(parents=True)
    for name, source in MODULES.items():
        (folder / "tools" / f"{name}.ts").write_text(source + "\n")
    (folder / "beeuni.yaml").write_text(MANIFEST)
    with running_daemon(folder, tmp_path_factory.mktemp("state"), "--harness", "experimental") as running:
        yield running


def test_the_document_lists_the_served_tools_as_examples(daemon: Daemon) -> None:
    schema = schemathesis.openapi.from_url(f"{daemon.url}/beeuni/openapi.json")
    call = schema.raw_schema["paths"]["/beeuni/tools/{name}"]["post"]
    assert sorted(call["parameters"][0]["examples"]) == ["echo", "fail"]
    statuses = ["200", "400", "401", "403", "404", "408", "413", "422", "431", "499", "502", "504"]
    assert sorted(call["responses"]) == statuses


#: (operation, the tool's name): generated names rarely hit a tool, so calls of the served tools
#: (one answers, one throws) are generated apart
TARGETS = [("list_tools", None), ("call_tool", None), ("call_tool", "echo"), ("call_tool", "fail")]


@pytest.mark.parametrize("mode", [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE])
@pytest.mark.parametrize(("operation_id", "tool"), TARGETS)
def test_every_answer_is_documented_and_none_is_a_server_error(
    daemon: Daemon, operation_id: str, tool: str | None, mode: schemathesis.GenerationMode
) -> None:
    schema = schemathesis.openapi.from_url(f"{daemon.url}/beeuni/openapi.json")
    operation = schema.find_operation_by_id(operation_id)
    fixed = {"name": tool} if tool else None
    with_token = st.sampled_from([True, True, True, False])  # most requests carry the token; some go without (401)

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed), authorized=with_token)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: schemathesis.Case, authorized: bool) -> None:
        headers = dict(case.headers or {})
        headers.pop("Authorization", None)
        if authorized:
            headers["Authorization"] = f"Bearer {daemon.token}"
        case.headers = headers
        case.call_and_validate(checks=CHECKS, timeout=60)

    run()
