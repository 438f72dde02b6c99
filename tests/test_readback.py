"""The values the engine reads back from the rules are checked where they are read: a wrong shape
is `error[rules]` at the definition that made it (exit 2), never a crash."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import pytest
from beeuni.engine import resolved
from beeuni.engine.contract import readback
from conftest import ROOT, run_beeuni


def edited_rules(tmp_path: Path, file: str, old: str, new: str) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = rules / file
    source = path.read_text()
    assert old in source
    path.write_text(source.replace(old, new, 1))
    return rules


def line_of(rules: Path, file: str, text: str) -> int:
    return next(i for i, line in enumerate((rules / file).read_text().splitlines(), 1) if text in line)


STARTER = ROOT / "examples" / "starter"


def test_a_list_where_a_view_id_belongs(tmp_path: Path) -> None:
    rules = edited_rules(
        tmp_path, "agents.rules", "view: view_id(view_of_agent(h)[a.name].tools, h),", "view: [a.name],"
    )
    result = run_beeuni(["resolve", str(STARTER), "--rules", str(rules)], cwd=tmp_path)
    where = f"{rules}/agents.rules:{line_of(rules, 'agents.rules', 'fn resolved_harness(h)')}:1"
    assert result.stderr.startswith(
        f'{where}: error[rules] `resolved_harness("standard").agents[0].view` must be a string (a view id), not a list'
    )
    assert (result.stdout, result.code) == ("", 2)


def test_a_view_id_that_names_no_view(tmp_path: Path) -> None:
    rules = edited_rules(tmp_path, "agents.rules", "view: view_id(view_of_agent(h)[a.name].tools, h),", 'view: "v99",')
    result = run_beeuni(["resolve", str(STARTER), "--json", "--rules", str(rules)], cwd=tmp_path)
    assert (
        'error[rules] `resolved_harness("standard").agents[0].view` names `v99`, which is none of the' in result.stderr
    )
    assert "harness's views (v1, v2" in result.stderr
    assert (result.stdout, result.code) == ("", 2)


def test_a_message_template_the_daemon_cannot_fill(tmp_path: Path) -> None:
    rules = edited_rules(
        tmp_path, "agents.rules", 'not_loaded: "no tool named {tool} is loaded"', 'not_loaded: "{tool!r}"'
    )
    result = run_beeuni(["resolve", str(STARTER), "--rules", str(rules)], cwd=tmp_path)
    line = line_of(rules, "agents.rules", "let DAEMON_MESSAGES")
    assert f"agents.rules:{line}:1: error[rules] `DAEMON_MESSAGES.not_loaded` must be a string whose blanks" in (
        result.stderr
    )
    assert result.code == 2


def test_a_missing_message(tmp_path: Path) -> None:
    rules = edited_rules(tmp_path, "agents.rules", '  not_an_object: "arguments must be a JSON object",\n', "")
    result = run_beeuni(["resolve", str(STARTER), "--rules", str(rules)], cwd=tmp_path)
    assert "`DAEMON_MESSAGES` must be a map with not_loaded, " in result.stderr
    assert result.stderr.rstrip().endswith(
        "not a map without `not_an_object` (the engine reads it back: docs/rules-language.md)"
    )
    assert result.code == 2


def test_a_secret_grant_of_the_wrong_shape(tmp_path: Path) -> None:
    rules = edited_rules(
        tmp_path, "agents.rules", 'return if spec == "all" then "all" else', "return if true then 7 else"
    )
    result = run_beeuni(["resolve", str(STARTER), "--json", "--rules", str(rules)], cwd=tmp_path)
    assert 'error[rules] `agent_secrets("beeuni")` must be `all` or a list of strings (secret names), not a number' in (
        result.stderr
    )
    assert result.code == 2


def test_a_manifest_value_quoted_in_a_rules_error_is_escaped(tmp_path: Path) -> None:
    """An `error[rules]` line may quote a manifest value (here the agent name in the call that
    gave the wrong shape): a line break or a terminal control in it is shown escaped, as in every
    other diagnostic, so it cannot forge a second line or drive the terminal."""
    rules = edited_rules(
        tmp_path, "agents.rules", 'return if spec == "all" then "all" else', "return if true then 7 else"
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "beeuni.yaml").write_text('agents:\n  "a\\nrules/x.rules:1:1: error[rules] forged\\e[2J": {}\n')
    result = run_beeuni(["resolve", str(project), "--rules", str(rules)], cwd=tmp_path)
    assert 'error[rules] `agent_secrets("a\\nrules/x.rules:1:1: error[rules] forged\\x1b[2J")` must be' in (
        result.stderr
    )
    assert len(result.stderr.splitlines()) == 1 and "\x1b" not in result.stderr
    assert result.code == 2


def test_a_listing_item_of_the_wrong_shape(tmp_path: Path) -> None:
    rules = edited_rules(tmp_path, "agents.rules", "return [record_of(n, h) for n in visible(a, h)]", "return [1]")
    result = run_beeuni(["tools", "ls", str(STARTER), "--agent", "researcher", "--rules", str(rules)], cwd=tmp_path)
    assert (
        'error[rules] `agent_tools("researcher", "standard")[0]` must be a map with name, kind, source, not a number'
        in (result.stderr)
    )
    assert (result.stdout, result.code) == ("", 2)


def test_the_shipped_rules_give_what_the_model_takes() -> None:
    result = run_beeuni(["resolve", str(STARTER), "--json"], cwd=STARTER)
    document = json.loads(result.stdout)
    assert resolved.ResolvedToolSet.model_validate(document).model_dump(mode="json") == document


MODEL_OF_SHAPE = [
    (readback.SESSION_TOOL, resolved.SessionTool),
    (readback.TOOL, resolved.Tool),
    (readback.HARNESS.inner, resolved.Harness),
]


@pytest.mark.parametrize(("shape", "model"), MODEL_OF_SHAPE, ids=[model.__name__ for _, model in MODEL_OF_SHAPE])
def test_shapes_and_model_have_the_same_fields_in_order(shape: readback.Shape, model: type) -> None:
    """resolve prints the checked values without pydantic: the shapes must be the model's."""
    assert isinstance(shape, readback.Record)
    assert list(shape.fields) == list(model.model_fields)  # type: ignore[attr-defined]
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        inner = shape.fields[name]
        annotation = field.annotation
        if typing.get_origin(annotation) is list:
            assert isinstance(inner, readback.ListOf)
            (item,) = typing.get_args(annotation)
            if isinstance(item, type) and issubclass(item, resolved._Model):
                assert isinstance(inner.item, readback.Record)
                assert list(inner.item.fields) == list(item.model_fields)
        elif annotation is bool:
            assert isinstance(inner, readback.Bool)
        elif annotation is str:
            assert type(inner) is readback.Str


# The names read only when a rule set defines them: the language server's and the code
# frame's. `rules check` holds each defined one against its shape (readback.OPTIONAL_VALUES and
# OPTIONAL_FUNCTIONS), at the rules file's position.


@pytest.mark.parametrize(
    ("old", "new", "defined", "message"),
    [
        (
            '{path: ["agents", "*", "secrets"], values: ["all"]},',
            '{path: "agents", values: ["all"]},',
            "let COMPLETIONS",
            "`COMPLETIONS[7].path` must be a list of strings (the keys from the top, `*` for any), "
            "not the string `agents`",
        ),
        (
            '{path: ["agents", "*", "secrets"], values: ["all"]},',
            '{path: ["agents"], values: [1]},',
            "let COMPLETIONS",
            "`COMPLETIONS[7].values[0]` must be a string, not a number",
        ),
        (
            '{path: ["agents", "*", "secrets"], values: ["all"]},',
            '{path: ["agents"], offer: ["all"]},',
            "let COMPLETIONS",
            "`COMPLETIONS[7]` must be a map with path (and optionally values, keys), not a map with `offer` too",
        ),
        (
            'suppress: "Silence {rule} on',
            'suppress: "Silence {rules} on',
            "let CODE_ACTION_TITLES",
            "`CODE_ACTION_TITLES.suppress` must be a string whose blanks are among {rule}",
        ),
        (
            'let HELP_PATTERN = "; (did you mean `[^`]*`\\?)"',
            'let HELP_PATTERN = ["did you mean"]',
            "let HELP_PATTERN",
            "`HELP_PATTERN` must be a string (a regular expression with a group, a message's help part), not a list",
        ),
        (
            "  return if record != null then [",
            "  return if true then 5 else if record != null then [",
            "fn hover_tool(name)",
            '`hover_tool("web_search")` must be null or a list, each item null or a string '
            "(Markdown lines, null for none), not a number",
        ),
        (
            "fn hover_tool(name) {",
            "fn hover_tool(name, more) {",
            "fn hover_tool(name, more)",
            "the engine calls `hover_tool` with 1 argument: `hover_tool(name)`",
        ),
        (
            "let CODE_ACTION_TITLES = {",
            "fn CODE_ACTION_TITLES() = {",
            "fn CODE_ACTION_TITLES",
            "the engine reads `CODE_ACTION_TITLES` as a value: define it with `let`, not `fn`",
        ),
    ],
)
def test_an_editor_read_back_of_the_wrong_shape(tmp_path: Path, old: str, new: str, defined: str, message: str) -> None:
    rules = edited_rules(tmp_path, "editors.rules", old, new)
    result = run_beeuni(["rules", "check", str(rules)], cwd=tmp_path)
    where = f"{rules}/editors.rules:{line_of(rules, 'editors.rules', defined)}:1"
    assert f"{where}: error[rules] {message}" in result.stdout + result.stderr, result.stdout + result.stderr
    assert result.code == 1


@pytest.mark.parametrize(
    ("new", "message"),
    [
        (
            r'pattern: "#(?=[ \t]*beeuni:)[ \t]*beeuni:[ \t]*ignore\b(?:[ \t]*\[(?P<ids>[^\]]*)\])?(?P<reason>.*)",',
            "`SUPPRESSION.pattern` is not a regular expression the rules can use: regular expression `#(?=",
        ),
        (
            r'pattern: "#[ \t]*beeuni:[ \t]*ignore\b(?:[ \t]*\[(?P<rules>[^\]]*)\])?(?P<reason>.*)",',
            "`SUPPRESSION.pattern` must be a string (a regular expression with the groups (?P<ids>...) and "
            "(?P<reason>...)), not",
        ),
    ],
    ids=["lookahead", "no ids group"],
)
def test_a_suppression_pattern_the_engine_cannot_use_is_found_by_rules_check(
    tmp_path: Path, new: str, message: str
) -> None:
    """The engine reads SUPPRESSION.pattern on every run: a pattern RE2 refuses, or without the
    groups it reads, is an error at the definition before any manifest meets it."""
    old = r'pattern: "#[ \t]*beeuni:[ \t]*ignore\b(?:[ \t]*\[(?P<ids>[^\]]*)\])?(?P<reason>.*)",'
    rules = edited_rules(tmp_path, "suppressions.rules", old, new)
    result = run_beeuni(["rules", "check", str(rules)], cwd=tmp_path)
    where = f"{rules}/suppressions.rules:{line_of(rules, 'suppressions.rules', 'let SUPPRESSION')}:1"
    assert f"{where}: error[rules] {message}" in result.stdout, result.stdout + result.stderr
    assert "uses lookahead `(?=…)`, which RE2 does not have" in result.stdout or "lookahead" not in new
    assert result.code == 1
