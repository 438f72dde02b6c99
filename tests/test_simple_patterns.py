"""Simple patterns, matched without RE2 (engine/lang/simple_patterns.py): the same answers as RE2."""

from __future__ import annotations

import pytest
import re2  # type: ignore[import-untyped]
from beeuni.engine.lang import patterns
from beeuni.engine.lang.simple_patterns import simple
from beeuni.engine.project import rules_only
from hypothesis import given, settings
from hypothesis import strategies as st

#: the shipped rules' patterns that a large manifest asks of every tool name, module path and secret
RULES_PATTERNS = ["NAME_PATTERN", "URL_PATTERN", "ABSOLUTE_PATH_PATTERN", "SECRET_NAME_PATTERN"]


def re2_search(pattern: str, text: str) -> bool:
    """RE2's own answer, on the UTF-8 bytes the engine gives it (a lone surrogate included)."""
    return re2.search(pattern.encode(), text.encode("utf-8", "surrogatepass")) is not None


@pytest.mark.parametrize("name", RULES_PATTERNS)
def test_the_rules_patterns_for_names_and_paths_are_simple(name: str) -> None:
    pattern = rules_only().output(name)
    assert simple(pattern) is not None
    assert patterns.compiled(pattern).simple is not None


@pytest.mark.parametrize(
    "pattern",
    [
        "a",  # not anchored at the start
        "^a|b",
        "^.",
        "^\\d",
        "^[^a]",
        "^a+a",  # a count that varies, before an item that takes its characters too
        "^[ab]*b",
        "^a*b?",  # … or may take none
        "^(?i)a",
        "^a+?",
        "^(?P<n>a)",
        "^[[:alpha:]]",
        "^a{1001}",
        "^a{3,2}",
        "^é",
        "^(a",
        "^a)",
        "^[a",
        "^a$b",
        "^(a)*",
        "^(a)?(b)?(c)?(d)?",  # more ways than kept
        "^[a-\\z]",
        "^\\",
        "^[z-a]",
        "^a{01,2}",  # RE2 reads a count with a leading zero as the characters themselves
        "^a{1,02}",
        "^a{00,}",
        "^a{,2}",
        "^" + "[a-z]{1000}" * 2,  # more than RE2's program may hold, for all it knows
        "^" + "(?:" * 9 + "a" + ")" * 9,
    ],
)
def test_other_patterns_are_left_to_re2(pattern: str) -> None:
    assert simple(pattern) is None


def test_answers_on_the_edge_of_counts_and_ends() -> None:
    name = simple("^[a-z][a-z0-9_]{0,63}$")
    assert name is not None
    assert name("a") and name("a" + "b" * 63) and name("web_search")
    assert not name("") and not name("a" + "b" * 64) and not name("A") and not name("a-b") and not name("ab\n")
    absolute = simple("^([A-Za-z]:)?[\\\\/]")
    assert absolute is not None
    assert absolute("/x") and absolute("\\x") and absolute("C:\\x") and absolute("c:/")
    assert not absolute("tools/x.ts") and not absolute("C:x") and not absolute("") and not absolute("é:/")
    url = simple("^[A-Za-z][A-Za-z0-9+.-]*://")
    assert url is not None
    assert url("https://x") and url("a://") and url("git+ssh://x")
    assert not url("tools/x.ts") and not url("1http://x") and not url("http:/x") and not url("://")
    twice = simple("^a{2}$")
    assert twice is not None
    assert twice("aa") and not twice("a") and not twice("aaa")
    bounded = simple("^a{1,2}b$")
    assert bounded is not None
    assert bounded("ab") and bounded("aab") and not bounded("aaab") and not bounded("b") and not bounded("abb")


_ITEMS = ["a", "b", "-", "/", "\\/", "\\.", ":", " ", "[ab]", "[a-c_]", "[-a]", "[a-]", "[\\]a]", "[.*$]", "\\\\"]
_COUNTS = ["", "", "?", "*", "+", "{2}", "{0,3}", "{1,}", "{0}", "{1,1}", "{02}", "{0,10}"]


@st.composite
def simple_shaped(draw: st.DrawFn) -> str:
    """A pattern of the shape this module takes (or nearly: some are not taken)."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()) and parts:
            group = "".join(draw(st.lists(st.sampled_from(_ITEMS), min_size=1, max_size=2)))
            parts.append(draw(st.sampled_from(["(", "(?:"])) + group + ")" + draw(st.sampled_from(["", "?"])))
        else:
            parts.append(draw(st.sampled_from(_ITEMS)) + draw(st.sampled_from(_COUNTS)))
    return "^" + "".join(parts) + draw(st.sampled_from(["", "$"]))


@given(simple_shaped(), st.lists(st.text("ab-/.: c]*$\\\né\ud800", max_size=8), min_size=1, max_size=6))
@settings(deadline=None, max_examples=600)
def test_a_simple_pattern_answers_as_re2(pattern: str, texts: list[str]) -> None:
    matches = simple(pattern)
    if matches is None:
        return
    for text in texts:
        assert matches(text) == re2_search(pattern, text), (pattern, text)


@given(st.text("^$()[]{}?*+|.\\-:/ab_09,?:P<>", max_size=12), st.lists(st.text("ab-/_09:.", max_size=6), max_size=4))
@settings(deadline=None, max_examples=600)
def test_any_pattern_is_simple_only_where_re2_agrees(pattern: str, texts: list[str]) -> None:
    """Any text as a pattern: taken only when RE2 compiles it too, and then answered as RE2 does."""
    matches = simple("^" + pattern)
    if matches is None:
        return
    assert patterns.problem("^" + pattern) is None
    for text in texts:
        assert matches(text) == re2_search("^" + pattern, text), (pattern, text)
