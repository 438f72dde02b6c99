"""The command line around the checks: both ways into `validate`, exit codes, what is imported."""

from __future__ import annotations

import inspect
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from beeuni.cli import app as typer_app
from beeuni.cli import commands
from conftest import BEEUNI, ROOT, run_beeuni, run_typer

STARTER = ROOT / "examples" / "starter"
GOLDEN = ROOT / "tests" / "golden"

VALIDATE_FORMS = [
    ["validate"],
    ["validate", "project"],
    ["validate", "project/beeuni.yaml"],
    ["validate", "project", "--format", "json"],
    ["validate", "--format=json", "project"],
    ["validate", "project", "--format", "text"],
    ["validate", "project", "--format", "sarif"],
    ["validate", "project", "--format=github", "--quiet"],
    ["validate", "project", "--format", "gitlab", "--max-warnings", "0"],
    ["validate", "-q", "project", "--format", "concise", "--max-warnings=3"],
]


@pytest.mark.parametrize("case", ["duplicate-across-files", "module-paths", "no-tools-key"])
@pytest.mark.parametrize("args", VALIDATE_FORMS, ids=" ".join)
def test_fast_path_and_typer_agree(case: str, args: list[str]) -> None:
    """`beeuni validate` is parsed by hand for speed; Typer must give the very same result."""
    cwd = GOLDEN / case if args != ["validate"] else GOLDEN / case / "project"
    fast = run_beeuni(args, cwd=cwd)
    typer = run_typer(args, cwd=cwd)
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)


RESOLVE_FORMS = [
    ["resolve"],
    ["resolve", "project"],
    ["resolve", "project/beeuni.yaml", "--json"],
    ["resolve", "--json", "project"],
    ["resolve", "project", "--rules", "../../../rules"],
    ["resolve", "--rules=../../../rules", "--json", "project"],
]


@pytest.mark.parametrize("case", ["agents-subagents", "tools-is-list"])
@pytest.mark.parametrize("args", RESOLVE_FORMS, ids=" ".join)
def test_resolve_fast_path_and_typer_agree(case: str, args: list[str]) -> None:
    """`beeuni resolve` is parsed by hand too; Typer must give the very same result."""
    cwd = GOLDEN / case if args != ["resolve"] else GOLDEN / case / "project"
    fast = run_beeuni(args, cwd=cwd)
    typer = run_typer(args, cwd=cwd)
    assert fast.stdout, fast.stderr
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)


DAEMON_FORMS = [
    ["daemon"],
    ["daemon", "project"],
    ["daemon", "project", "--harness", "experimental", "--agent", "alice", "--timeout", "5"],
    ["daemon", "--port=0", "project", "--max-body", "1024", "--max-output=2048", "--read-timeout", "0.5"],
    ["daemon", "project", "--require-confinement", "--release", "HEAD", "--rules", "../../../rules"],
    ["daemon", "project", "--connection-fd", "99"],  # no descriptor of the process: refused
    ["daemon", "project", "--max-body", "0"],  # Typer's to refuse, on both paths
    ["daemon", "project", "other"],
]


@pytest.mark.parametrize("args", DAEMON_FORMS, ids=" ".join)
def test_daemon_fast_path_and_typer_agree(args: list[str]) -> None:
    """`beeuni daemon` as a starter runs it is parsed by hand too (Typer's import is on every
    session's start); without a connection to hand over, both paths refuse alike."""
    cwd = GOLDEN / "agents-subagents" / ("project" if args == ["daemon"] else "")
    env = {"BEEUNI_BUN": str(ROOT / "node_modules" / ".bin" / "bun")}
    fast = run_beeuni(args, cwd=cwd, env=env)
    typer = run_typer(args, cwd=cwd, env=env)
    assert fast.code == 2 and fast.stderr, fast
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)


def test_the_daemons_defaults_are_the_typer_commands() -> None:
    def defaults(command: Any) -> dict[str, Any]:
        return {name: parameter.default for name, parameter in inspect.signature(command).parameters.items()}

    assert defaults(commands.daemon) == defaults(typer_app.daemon)


def test_the_installed_command_ends_with_all_its_output_written() -> None:
    """The installed `beeuni` command ends `validate` and `resolve` with what is still buffered written — here a
    document larger than the output buffer — and the command's exit status."""
    args = ["resolve", "--json", "project"]
    fast = run_beeuni(args, cwd=GOLDEN / "agents-subagents")
    typer = run_typer(args, cwd=GOLDEN / "agents-subagents")
    assert len(fast.stdout) > io.DEFAULT_BUFFER_SIZE
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)


def test_starter_example_is_clean() -> None:
    result = run_beeuni(["validate", "--format", "json"], cwd=STARTER)
    assert result.code == 0
    assert json.loads(result.stdout) == {"manifest": "beeuni.yaml", "diagnostics": [], "errors": 0, "warnings": 0}


def test_validate_json_has_the_fields_of_s_c1() -> None:
    result = run_beeuni(["validate", "project", "--format", "json"], cwd=GOLDEN / "unknown-keys")
    document = json.loads(result.stdout)
    assert list(document) == ["manifest", "diagnostics", "errors", "warnings"]
    for diagnostic in document["diagnostics"]:
        assert {"rule", "severity", "message", "file", "line", "column"} <= set(diagnostic)
        assert diagnostic["severity"] in ("error", "warning", "info")
    assert (document["errors"], document["warnings"]) == (0, 4)
    assert result.code == 0  # warnings alone pass


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["validate", "nowhere"], "beeuni: no manifest found: nowhere/beeuni.yaml does not exist"),
        (["validate", "--format", "xml"], "Invalid value for '--format'"),
        (["tools", "ls", "--rules", "no-such-folder"], "no-such-folder:1:1: error[rules] cannot read the rules folder"),
        (["validate", "nowhere", "--format", "json", "b"], "beeuni: no manifest found: b does not exist"),
    ],
)
def test_usage_and_setup_failures_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "nowhere").mkdir()
    if args[0] == "tools":
        (tmp_path / "beeuni.yaml").write_text("tools: {}\n")
    result = run_beeuni(args, cwd=tmp_path)
    assert result.code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


MONOREPO = ["tabs/project", "unknown-keys/project", "module-paths/project/beeuni.yaml"]


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_validate_several_manifests_fast_path_and_typer_agree(output_format: str) -> None:
    args = ["validate", *MONOREPO, "--format", output_format]
    fast = run_beeuni(args, cwd=GOLDEN)
    typer = run_typer(args, cwd=GOLDEN)
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)


def test_validate_several_manifests_groups_text_under_a_header_each() -> None:
    """A monorepo's projects in one CI step: a header per manifest, each one's diagnostics under
    it (repo-relative, as for one manifest), a summary per manifest, the worst exit status."""
    result = run_beeuni(["validate", *MONOREPO], cwd=GOLDEN)
    groups = re.split(r"\n(?===> )", result.stdout)  # a blank line before each header but the first
    assert [group.splitlines()[0] for group in groups] == [
        "==> tabs/project/beeuni.yaml <==",
        "==> unknown-keys/project/beeuni.yaml <==",
        "==> module-paths/project/beeuni.yaml <==",
    ]
    for group, case in zip(groups, ["tabs", "unknown-keys", "module-paths"], strict=True):
        alone = run_beeuni(["validate", "project"], cwd=GOLDEN / case)
        assert group.split("\n", 1)[1] == alone.stdout
        assert f"{case}/project/beeuni.yaml: " + alone.stderr.split(": ", 1)[1] in result.stderr
    assert result.code == 1  # tabs has an error, unknown-keys only warnings


def test_validate_several_manifests_as_json_is_a_list_of_documents() -> None:
    result = run_beeuni(["validate", "unknown-keys/project", "../../examples/starter", "--format", "json"], cwd=GOLDEN)
    documents = json.loads(result.stdout)
    assert [document["path"] for document in documents] == [
        "unknown-keys/project/beeuni.yaml",
        "../../examples/starter/beeuni.yaml",
    ]
    alone = json.loads(run_beeuni(["validate", "project", "--format", "json"], cwd=GOLDEN / "unknown-keys").stdout)
    assert documents[0] == {"path": "unknown-keys/project/beeuni.yaml", **alone}
    assert result.code == 0  # warnings alone pass


def test_validate_several_manifests_a_missing_one_is_reported_and_the_rest_still_run() -> None:
    result = run_beeuni(["validate", "nowhere", "tabs/project", "--format", "json"], cwd=GOLDEN)
    documents = json.loads(result.stdout)
    assert documents[0] == {"path": "nowhere", "failure": "beeuni: no manifest found: nowhere does not exist"}
    assert documents[1]["errors"] == 1
    assert result.code == 2  # the worst: a failure
    assert "Traceback" not in result.stderr


def test_rules_explain_unknown_rule_suggests_the_closest() -> None:
    result = run_beeuni(["rules", "explain", "tools/name-formt"], cwd=ROOT)
    assert result.code == 2
    assert "no rule, `let` or `fn` named `tools/name-formt`; did you mean `tools/name-format`?" in result.stderr
    result = run_beeuni(["rules", "explain", "did_you_men"], cwd=ROOT)
    assert "did you mean `did_you_mean`?" in result.stderr


def test_rules_explain_shows_a_helper_with_its_place_doc_comment_and_text() -> None:
    source = (ROOT / "rules" / "manifest.rules").read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if text.startswith("fn fixed_key("))
    explained = run_beeuni(["rules", "explain", "fixed_key", "rules"], cwd=ROOT)
    assert explained.code == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[:2] == ["fn fixed_key", f"defined at rules/manifest.rules:{line}"]
    assert lines[3].startswith('The key a "did you mean" suggests, as a fix')
    assert "\n".join(source[line - 1 : line + 3]) + "\n" in explained.stdout  # its text, as written
    assert explained.stdout.endswith("}\n")
    value = run_beeuni(["rules", "explain", "TOP_LEVEL_KEYS", "--rules", "rules"], cwd=ROOT)
    assert value.stdout.startswith("let TOP_LEVEL_KEYS\ndefined at rules/manifest.rules:")
    assert "let TOP_LEVEL_KEYS = keys(MANIFEST_SHAPE)\n" in value.stdout
    shipped = run_beeuni(["rules", "explain", "TOP_LEVEL_KEYS"], cwd=ROOT / "tests")
    assert shipped.stdout == value.stdout
    rule = run_beeuni(["rules", "explain", "tools/name-format", "rules"], cwd=ROOT)
    assert rule.stdout.startswith("tools/name-format (error)\ndefined at rules/tools.rules:")


def test_rules_check_and_test_name_the_folder_on_their_first_line() -> None:
    checked = run_beeuni(["rules", "check", "rules"], cwd=ROOT)
    assert checked.stderr.splitlines()[0] == "checking the rules in rules"
    shipped = run_beeuni(["rules", "check"], cwd=ROOT / "tests")
    assert shipped.stderr.splitlines()[0] == (
        "checking the shipped rules, installed with beeuni (in a clone, name the folder: `beeuni rules check rules`)"
    )
    tested = run_beeuni(["rules", "test"], cwd=ROOT / "tests")
    assert tested.stdout.splitlines()[0].startswith(
        "testing the shipped rules, installed with beeuni (in a clone, name the folder: `beeuni rules test rules`): "
    )


def test_every_rule_has_a_doc() -> None:
    result = run_beeuni(["rules", "list", "--json"], cwd=ROOT)
    rules = json.loads(result.stdout)
    assert len(rules) > 30
    assert all(rule["doc"].strip() for rule in rules)
    assert [rule["id"] for rule in rules] == sorted(rule["id"] for rule in rules)


def test_rule_docs_are_rendered_user_documentation() -> None:
    """Docs are templates over the rules' data, rendered when the rules are compiled: `rules list
    --json` and `rules explain` show the text, with no internal requirement id in it."""
    rules = json.loads(run_beeuni(["rules", "list", "--json"], cwd=ROOT).stdout)
    assert not [rule["id"] for rule in rules if re.search(r"\bS-[A-Z]+\d", rule["doc"]) or "{len(" in rule["doc"]]
    docs = {rule["id"]: rule["doc"] for rule in rules}
    assert docs["tools/unknown-beeuni-tool"] == (
        "`beeuni:<x>` names a tool Beeuni maintains; there are 5: "
        "`web_search`, `image_search`, `scrape_webpage`, `memory` and `show`."
    )
    explained = run_beeuni(["rules", "explain", "tools/unknown-beeuni-tool"], cwd=ROOT).stdout
    assert docs["tools/unknown-beeuni-tool"] in explained


def test_validate_imports_only_what_it_needs(tmp_path: Path) -> None:
    """A `validate` imports neither Lark (the shipped rules are compiled) nor the daemon's or the
    rest of the CLI's libraries, nor (for text that is not on a terminal) the machine formats,
    code frames or the language server."""
    probe = (
        "import sys; from beeuni.cli.main import main; sys.argv = ['beeuni', 'validate', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('lark', 'typer', 'click', 'rich', 'pydantic', 'fastapi', 'uvicorn', 'ruamel', 'pygls', 'lsprotocol',"
        " 'dataclasses', 'inspect', 'json', 'jsonschema', 'dask', 'distributed')"
        " or m.startswith(('beeuni.cli.formats', 'beeuni.engine.yaml.spans', 'beeuni.cli.frames')))\n"
        "print(heavy, file=sys.stderr)"
    )
    env = {"BEEUNI_CACHE_DIR": str(tmp_path), "NO_COLOR": "1"}
    command = [sys.executable, "-c", probe, str(STARTER)]
    cold = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    warm = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    # not even the first run, with an empty cache folder: the wheel carries the rules compiled
    assert cold.stderr.strip().endswith("[]"), cold.stderr
    assert warm.stderr.strip().endswith("[]"), warm.stderr


#: what a first run of `validate` or `resolve` on a clean project needs none of: the editing of manifests
NOT_ON_THE_FIRST_RUN = (
    *("json", "importlib.util", "importlib.machinery", "bisect"),
    *("beeuni.engine.edit.entries", "beeuni.engine.edit.text_edit", "beeuni.engine.yaml.spans"),
    # an editor's evaluations only are carried; the folder checks run when rules are compiled
    *("beeuni.engine.lang.carry", "beeuni.engine.shipped", "beeuni.engine.contract.optional_readback"),
    # the shipped rules are found beside the engine, their package not imported
    "beeuni.rules",
)


@pytest.mark.parametrize("command", ["validate", "resolve"])
def test_a_first_run_imports_no_editing_of_manifests(tmp_path: Path, command: str) -> None:
    """The installed command, `validate` and `resolve` on the starter (the rule cache warm), its
    script included."""
    command_line = [sys.executable, "-X", "importtime", BEEUNI, command, str(STARTER)]
    env = {"BEEUNI_CACHE_DIR": str(tmp_path), "NO_COLOR": "1"}
    subprocess.run(command_line, capture_output=True, text=True, env=env, cwd=tmp_path)  # compiles the rules
    warm = subprocess.run(command_line, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert warm.returncode == 0, warm.stderr
    imported = {line.rpartition("|")[2].strip() for line in warm.stderr.splitlines() if line.startswith("import time:")}
    assert {"yaml._yaml", "beeuni.engine.yaml.loader", "beeuni.engine.suppress"} <= imported
    assert sorted(imported.intersection(NOT_ON_THE_FIRST_RUN)) == []


def test_resolve_imports_neither_typer_nor_pydantic(tmp_path: Path) -> None:
    """`beeuni resolve` builds its document from the rules' checked values: no model, no Typer."""
    probe = (
        "import sys; from beeuni.cli.main import main; sys.argv = ['beeuni', 'resolve', sys.argv[1], '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('lark', 'typer', 'click', 'rich', 'pydantic', 'fastapi', 'uvicorn', 'ruamel'))\n"
        "print(heavy, file=sys.stderr)"
    )
    env = {"BEEUNI_CACHE_DIR": str(tmp_path), "NO_COLOR": "1"}
    command = [sys.executable, "-c", probe, str(STARTER)]
    subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)  # compiles the rules
    warm = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert json.loads(warm.stdout)["version"] == 1
    assert warm.stderr.strip().endswith("[]"), warm.stderr
