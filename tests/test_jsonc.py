"""The JSON-with-comments reader the rules' `json_files` fact is made with (opencode's
configuration): the values of any JSON document as `json` reads them, with their positions, and
what opencode's reader accepts beyond JSON (comments, a trailing comma)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from beeuni.engine.jsonc import JsonProblem, load_jsonc
from beeuni.engine.yaml.located import LocatedConst
from hypothesis import given
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def plain(value: Any) -> Any:
    if isinstance(value, LocatedConst):
        return value.value
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


@given(JSON, st.booleans())
def test_any_json_reads_as_json_reads_it(document: Any, indent: bool) -> None:
    text = json.dumps(document, indent=2 if indent else None, ensure_ascii=False)
    assert plain(load_jsonc(text.encode(), "x.json")) == json.loads(text)


def test_positions_comments_and_trailing_commas() -> None:
    text = '// opencode.json\n{\n  /* agents */ "agent": {"plan": {"tools": {"bash": true,},},},\n}\n'
    root = load_jsonc(text.encode(), "opencode.json")
    (key,) = root
    assert key.loc == ("opencode.json", 3, 16)
    tools = root["agent"]["plan"]["tools"]
    (bash,) = tools
    assert bash.loc == ("opencode.json", 3, 45) and tools["bash"].loc == ("opencode.json", 3, 53)


@pytest.mark.parametrize(
    ("text", "detail", "where"),
    [
        ('{"a": allow}', "`allow` where a value belongs", (1, 7)),
        ('{"a": 1', "`,` or `}` expected", (1, 8)),
        ("{\n  /* never closed", "a `/*` comment is never closed", (2, 3)),
        ('"\\x"', "an unknown escape in a string", (1, 2)),
        ("[" * 100, "nesting deeper than 64 levels", (1, 65)),
        ("{} {}", "more after the end of the value", (1, 4)),
    ],
)
def test_problems_say_what_and_where(text: str, detail: str, where: tuple[int, int]) -> None:
    with pytest.raises(JsonProblem) as raised:
        load_jsonc(text.encode(), "f.json")
    assert detail in raised.value.detail
    assert raised.value.loc[1:] == where
