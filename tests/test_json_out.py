"""beeuni's JSON writer gives the very text of `json.dumps(indent=2, ensure_ascii=False)`."""

from __future__ import annotations

import json

from beeuni.cli.json_out import dumps
from beeuni.engine.yaml.located import LocatedStr
from hypothesis import given, settings
from hypothesis import strategies as st

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(KEYS, inner, max_size=6) | st.tuples(inner, inner),
    max_leaves=40,
)


@given(DOCUMENTS)
@settings(max_examples=300, deadline=None)
def test_the_text_of_the_standard_library(document: object) -> None:
    assert dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


def test_located_strings_are_strings() -> None:
    names = [LocatedStr("web_search", ("beeuni.yaml", 2, 3)), "show"]
    assert dumps({"tools": names, LocatedStr("k", ("f", 1, 1)): names[0]}) == json.dumps(
        {"tools": ["web_search", "show"], "k": "web_search"}, indent=2
    )
