"""The loader (``engine/yaml/loader.py``) reads scalars as pyyaml's resolver and safe constructor
do: booleans, nulls, numbers and dates, plain or tagged.
"""

from __future__ import annotations

import json

import pytest
from beeuni.engine.yaml.loader import load_yaml, plain_tag
from beeuni.engine.yaml.located import LocatedConst, LocatedStr
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

#: the words YAML 1.1 reads as booleans and nulls, and text that is almost one of them
WORDS = [
    *("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE"),
    *("on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", ""),
    *("yEs", "nO", "tRUE", "y", "n", "Y", "N", "o", "nul", "nulls", "Nil", "none", "None", "~~", "off!", "yes "),
]
#: text pyyaml's resolver reads as a number, a date, a merge key, `=` — and text that nearly is
NUMBER_LIKE = [
    *("0", "1", "-1", "+1", "0x1F", "0o17", "017", "0b101", "1_000", "1:30", "190:20:30", "-0"),
    *(".5", "1.5", "1e3", "1.0e+3", ".inf", "-.Inf", ".NaN", ".nan", "6.8523015e+5", "1.", "."),
    *("2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-13-45"),
    *("<<", "<", "=", "==", "-", "+", "1a", "0x", "1-2", "1.2.3", "-.", "+.inf", "!", "&", "*", "!!"),
]


def pyyaml_plain_tag(text: str) -> str:
    return Resolver().resolve(ScalarNode, text, (True, False))


def pyyaml_value(tag: str, text: str) -> object:
    return SafeConstructor().construct_object(ScalarNode(tag, text), deep=True)


@pytest.mark.parametrize("word", WORDS)
def test_words_plain_or_tagged_read_as_pyyaml_constructs_them(word: str) -> None:
    """A plain word is the value pyyaml's safe constructor makes of it; tagged `!!bool` or
    `!!null`, the same when plain text of it is that, else a `bad-tag` problem and the text; a
    quoted word or one tagged `!!str` is text."""
    quoted = json.dumps(word)
    cases = {
        f"k: {word}\n": plain_tag(word),
        f"k: !!bool {quoted}\n": "tag:yaml.org,2002:bool",
        f"k: !!null {quoted}\n": "tag:yaml.org,2002:null",
    }
    for document, tag in cases.items():
        if word.endswith(" ") and not document.startswith("k: !!"):
            continue  # plain text has no trailing blank
        root, problems = load_yaml(document.encode(), "x.yaml")
        value = root["k"]
        if tag == "tag:yaml.org,2002:str":
            assert isinstance(value, LocatedStr) and value == word and not problems, document
        elif plain_tag(word) == tag:
            assert isinstance(value, LocatedConst) and value.value is pyyaml_value(tag, word), document
            assert not problems, document
        else:
            assert isinstance(value, LocatedStr) and value == word, document
            assert [problem.kind for problem in problems] == ["bad-tag"], document
    for document in (f"k: {quoted}\n", f"k: !!str {quoted}\n"):
        root, problems = load_yaml(document.encode(), "x.yaml")
        assert isinstance(root["k"], LocatedStr) and root["k"] == word and not problems


@pytest.mark.parametrize("text", [text for text in NUMBER_LIKE if text not in ("-", "!", "&", "*", "!!")])
def test_numbers_and_dates_read_as_before(text: str) -> None:
    """What may be a number is still pyyaml's: an int or a float as its constructor makes it;
    anything else it resolves (a date, `<<`, `=`) is text."""
    root, _ = load_yaml(f"k: {text}\n".encode(), "x.yaml")
    tag = pyyaml_plain_tag(text)
    value = root.get("k") if root is not None else None
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        expected = pyyaml_value(tag, text)
        assert isinstance(value, type(expected)), text
        assert value == expected or expected != expected, text  # NaN
    elif tag != "tag:yaml.org,2002:merge":
        assert isinstance(value, LocatedStr) and value == text
