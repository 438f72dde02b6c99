"""A Beeuni tool ships with its rules: a tool of BEEUNI_TOOLS without its module in the
rules folder is a rules error at the data line that names it — in `rules check`, and in every
command, which refuses such a rules folder — never an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

from beeuni.engine.project import load_rules
from beeuni.engine.shipped import check_shipped_modules
from conftest import ROOT, run_beeuni

TOOLS_LINE = 'let BEEUNI_TOOLS = ["web_search", "image_search", "scrape_webpage", "memory", "show"]'
WITH_TRANSLATE = TOOLS_LINE[:-1] + ', "translate"]'


def copy_of_rules(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.py", "__pycache__", "tests"))
    return rules


def add_translate_name(rules: Path) -> tuple[int, int]:
    """Add `translate` to the Beeuni tools' data; return the line and column of its literal."""
    tools_rules = rules / "tools.rules"
    source = tools_rules.read_text()
    assert TOOLS_LINE in source
    tools_rules.write_text(source.replace(TOOLS_LINE, WITH_TRANSLATE))
    line = source[: source.index(TOOLS_LINE)].count("\n") + 1
    return line, WITH_TRANSLATE.index('"translate"') + 1


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "beeuni.yaml").write_text("tools:\n  translate: beeuni:translate\n")
    return folder


def test_the_check_finds_a_missing_module_at_the_data_line(tmp_path: Path) -> None:
    rules = copy_of_rules(tmp_path)
    program = load_rules()  # the shipped program, held against a folder that lacks a module
    (rules / "beeuni_tools" / "memory.ts").unlink()
    problems = check_shipped_modules(program, str(rules), "my-rules")
    line = (ROOT / "rules" / "tools.rules").read_text().split("\n").index(TOOLS_LINE) + 1
    assert [(p.file, p.line, p.column, p.severity) for p in problems] == [
        ("rules/tools.rules", line, TOOLS_LINE.index('"memory"') + 1, "error")
    ]
    assert "`memory` has no module: my-rules/beeuni_tools/memory.ts is not a file" in problems[0].message
    assert check_shipped_modules(program, str(ROOT / "rules"), "rules") == []


def test_rules_check_and_every_command_refuse_a_beeuni_tool_without_module(tmp_path: Path) -> None:
    rules = copy_of_rules(tmp_path)
    line, column = add_translate_name(rules)
    expected = (
        f"{rules}/tools.rules:{line}:{column}: error[rules] the Beeuni tool `translate` has no module: "
        f"{rules}/beeuni_tools/translate.ts is not a file in the rules folder"
    )
    checked = run_beeuni(["rules", "check", str(rules)], cwd=tmp_path)
    assert checked.code == 1
    assert checked.stdout.startswith(expected)
    folder = project(tmp_path)
    before = (folder / "beeuni.yaml").read_bytes()
    for command in (["validate"], ["tools", "ls"], ["tools", "eject", "translate"], ["resolve"]):
        result = run_beeuni([*command, str(folder), "--rules", str(rules)], cwd=tmp_path)
        assert result.code == 2, command
        assert expected in result.stderr, command
        assert "internal error" not in result.stderr
    assert sorted(path.name for path in folder.iterdir()) == ["beeuni.yaml"]
    assert (folder / "beeuni.yaml").read_bytes() == before


def test_a_module_lost_after_the_rules_were_checked_is_a_rules_error_on_eject(tmp_path: Path) -> None:
    rules = copy_of_rules(tmp_path)
    add_translate_name(rules)
    module = rules / "beeuni_tools" / "translate.ts"
    module.write_text("export default {}\n")
    folder = project(tmp_path)
    assert run_beeuni(["validate", str(folder), "--rules", str(rules)], cwd=tmp_path).code == 0  # compiled, cached
    module.unlink()
    result = run_beeuni(["tools", "eject", "translate", str(folder), "--rules", str(rules)], cwd=tmp_path)
    assert result.code == 2
    assert "error[rules] the Beeuni tool `translate` has no module" in result.stderr
    assert not (folder / "tools").exists()


def test_a_module_path_may_not_leave_the_rules_folder(tmp_path: Path) -> None:
    rules = copy_of_rules(tmp_path)
    tools_rules = rules / "tools.rules"
    source = tools_rules.read_text()
    old = 'fn shipped_module(name) = f"beeuni_tools/{name}.ts"'
    assert old in source
    tools_rules.write_text(source.replace(old, 'fn shipped_module(name) = f"../outside/{name}.ts"'))
    (tmp_path / "outside").mkdir()
    for name in ("web_search", "image_search", "scrape_webpage", "memory", "show"):
        (tmp_path / "outside" / f"{name}.ts").write_text("export default {}\n")
    checked = run_beeuni(["rules", "check", str(rules)], cwd=tmp_path)
    assert checked.code == 1
    assert checked.stdout.count("has no module") == 5
