"""Reading YAML without pyyaml's pure-Python loader (``engine/yaml/libyaml.py``) gives what pyyaml
gives: the loader reads booleans and nulls itself, and leaves only text that may be a number or a
date to pyyaml's resolver — the same tags and values; libyaml's errors are caught as before; and
code that imports ``yaml`` later in the same process gets the whole of pyyaml, of the very
classes libyaml's events and errors are made of.

The process tests run a new interpreter: in the test process ``yaml`` is imported already.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from beeuni.engine.yaml.loader import load_yaml, plain_tag
from beeuni.engine.yaml.located import LocatedConst, LocatedStr
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

SETTINGS = settings(max_examples=2000, derandomize=True, deadline=None, database=None)
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
ALPHABET = "0123456789-+.:_<=!&*~eExXoObB \nyYnNtTfFuUlLsS#"


def pyyaml_plain_tag(text: str) -> str:
    return Resolver().resolve(ScalarNode, text, (True, False))


def pyyaml_value(tag: str, text: str) -> object:
    return SafeConstructor().construct_object(ScalarNode(tag, text), deep=True)


def test_plain_tags_of_words_numbers_and_dates_are_pyyamls() -> None:
    texts = [*WORDS, *NUMBER_LIKE]
    texts += [text + end for text in texts for end in ("\n", "\n\n", " ", "x", "\nx")]
    assert [plain_tag(text) for text in texts] == [pyyaml_plain_tag(text) for text in texts]


def test_plain_tags_of_every_short_text_are_pyyamls() -> None:
    """Every text of up to three characters of an alphabet with every resolver's first
    characters, digits, signs, separators and the letters of the words."""
    for length in range(4):
        for characters in itertools.product(ALPHABET, repeat=length):
            text = "".join(characters)
            assert plain_tag(text) == pyyaml_plain_tag(text), repr(text)


@SETTINGS
@given(
    st.one_of(
        st.text(),
        st.text(alphabet=ALPHABET, max_size=12),
        st.builds(str.__add__, st.sampled_from(WORDS + NUMBER_LIKE), st.text(alphabet=ALPHABET, max_size=3)),
    )
)
def test_plain_tags_of_any_text_are_pyyamls(text: str) -> None:
    assert plain_tag(text) == pyyaml_plain_tag(text)


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


#: run in a new interpreter: the loader first, then pyyaml as any later code imports it
LATER_IMPORT = r"""
import sys
from beeuni.engine.yaml.loader import load_yaml

def problems(data):
    return [(p.kind, p.loc, p.detail) for p in load_yaml(data, "x.yaml")[1]]

assert problems(b"a: [b, yes, ~, '1']\n") == []
stood_in = sorted(m for m in sys.modules if (m == "re" or m.startswith(("yaml.", "re."))) and m not in (
    "yaml.error", "yaml.tokens", "yaml.events", "yaml.nodes", "yaml._yaml"))
BAD = [b"a: \x01\n", b"a: caf\xe9\n", b"a: [1,\n", b"a: b: c\n", b"\xff\xfea\x00:\x00 \x00\x01\x00"]
before = [problems(data) for data in BAD]

import yaml
import yaml.reader

events = list(yaml.parse(b"a: [1, {b: c}]", Loader=yaml.CSafeLoader))
caught = []
for data in BAD:
    try:
        yaml.load(data, Loader=yaml.CSafeLoader)
    except yaml.reader.ReaderError as err:
        caught.append(("reader", str(err)))
    except yaml.MarkedYAMLError as err:
        caught.append(("marked", type(err).__name__))
import json

print(json.dumps({
    "stood_in": stood_in,
    "before": before,
    "after": [problems(data) for data in BAD],
    "loaded": yaml.safe_load("a: [1, yes, 2001-01-01]"),
    "c_loaded": yaml.load("a: [1, yes, ~]", Loader=yaml.CSafeLoader),
    "event_classes": [type(event) is getattr(yaml, type(event).__name__) for event in events],
    "caught": caught,
    "modules": [yaml.error.YAMLError is yaml.YAMLError, yaml.scanner.ScannerError.__module__, yaml.__with_libyaml__],
}, default=str))
"""


def test_yaml_imported_after_the_loader_is_the_whole_of_pyyaml(tmp_path: Path) -> None:
    """In a new process the loader reads YAML with none of pyyaml's modules imported but those
    that define the extension's errors, tokens, events and nodes (and no ``re``); its problems
    — a control character, a Latin-1 byte, syntax errors, UTF-16 — are the same as in a process
    that imported pyyaml first (this one); and a later ``import yaml`` gets all of pyyaml, with
    libyaml's errors of pyyaml's own classes."""
    done = subprocess.run([sys.executable, "-c", LATER_IMPORT], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    bad = [b"a: \x01\n", b"a: caf\xe9\n", b"a: [1,\n", b"a: b: c\n", b"\xff\xfea\x00:\x00 \x00\x01\x00"]
    expected = [[[p.kind, list(p.loc), p.detail] for p in load_yaml(data, "x.yaml")[1]] for data in bad]
    assert found["stood_in"] == []
    assert found["before"] == expected == found["after"]
    assert [problems[0][0] for problems in expected] == ["yaml-syntax"] * 5
    assert [kind for kind, _ in found["caught"]] == ["reader", "reader", "marked", "marked", "reader"]
    assert found["caught"][0][1].startswith("unacceptable character #x0001: control characters are not allowed")
    assert found["loaded"] == {"a": [1, True, "2001-01-01"]}  # a date (printed as text)
    assert found["c_loaded"] == {"a": [1, True, None]}
    assert len(found["event_classes"]) == 14 and all(found["event_classes"])
    assert found["modules"] == [True, "yaml.scanner", True]
