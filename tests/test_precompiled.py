"""The shipped rules, compiled into the wheel (engine/lang/precompiled.py, setup.py), and the rule
cache keyed by content (engine/lang/program_cache.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from beeuni.engine.contract.rules_interface import RULES_INTERFACE
from beeuni.engine.lang import RulesError, compile_folder, load_program, precompiled, program_digest, rules_files
from beeuni.engine.project import shipped_rules
from conftest import ROOT

STARTER = ROOT / "examples" / "starter"

#: a subprocess that runs a command and prints whether it imported Lark
LARK_PROBE = (
    "import sys; from beeuni.cli.main import main; sys.argv = ['beeuni', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('lark' in sys.modules, file=sys.stderr)"
)


def imports_lark(args: list[str], cache: Path, cwd: Path) -> bool:
    env = {"BEEUNI_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", LARK_PROBE, *args], capture_output=True, text=True, env=env, cwd=cwd)
    last = done.stderr.strip().splitlines()[-1]
    assert last in ("True", "False"), done.stderr
    return last == "True"


def test_the_installed_rules_are_compiled_and_current() -> None:
    folder = shipped_rules()
    digest = program_digest(rules_files(folder), RULES_INTERFACE, "rules")
    program = precompiled.read(folder, digest)
    assert program is not None, "the wheel carries no compiled rules made from the installed ones"
    # byte-compiled at install: the code is read from __pycache__, not compiled from source
    pycache = Path(folder) / "__pycache__"
    assert any(path.name.startswith(f"{precompiled.CODE_MODULE}.") for path in pycache.iterdir())
    assert program["rules"] == load_program(folder, RULES_INTERFACE, "rules")["rules"]


@pytest.mark.parametrize("command", ["validate", "resolve"])
def test_a_fresh_runner_imports_no_lark(tmp_path: Path, command: str) -> None:
    """Empty cache folders, as in a new CI container: the shipped rules need no compiler."""
    assert not imports_lark([command, str(STARTER)], tmp_path / "empty-cache", tmp_path)
    assert not (tmp_path / "empty-cache").exists() or not list((tmp_path / "empty-cache").glob("rules-*"))


def _copy_of_shipped_rules(tmp_path: Path) -> Path:
    copy = tmp_path / "rules"
    shutil.copytree(shipped_rules(), copy, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    return copy


PROBE_RULE = """
rule release/probe {
  severity info
  doc "Added after the build."
  for m in loaded_modules
  when false
  at module_entry(m)
  message "never"
}
"""


def test_compiled_rules_that_are_stale_against_the_rules_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rules file edited after the build: the digest differs, the rules are compiled anew."""
    monkeypatch.setenv("BEEUNI_CACHE_DIR", str(tmp_path / "cache"))
    copy = _copy_of_shipped_rules(tmp_path)
    assert (copy / f"{precompiled.DATA_MODULE}.py").is_file()
    fresh = load_program(str(copy), RULES_INTERFACE, "rules", shipped=True)
    assert all(rule["id"] != "release/probe" for rule in fresh["rules"])
    with (copy / "modules.rules").open("a", encoding="utf-8") as rules:
        rules.write(PROBE_RULE)
    try:
        edited = load_program(str(copy), RULES_INTERFACE, "rules", shipped=True)
    except RulesError as err:  # the probe's syntax is the language's: say what it refused
        pytest.fail(str(err))
    assert any(rule["id"] == "release/probe" for rule in edited["rules"])


def test_written_modules_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the build writes is what ``read`` hands back, code included."""
    monkeypatch.setenv("BEEUNI_CACHE_DIR", str(tmp_path / "cache"))
    copy = _copy_of_shipped_rules(tmp_path)
    for name in (precompiled.DATA_MODULE, precompiled.CODE_MODULE):
        (copy / f"{name}.py").unlink()
    assert precompiled.read(str(copy), "any") is None
    program, source, digest = compile_folder(str(copy), RULES_INTERFACE, "rules")
    precompiled.write(str(copy), program, source, digest)
    read = precompiled.read(str(copy), digest)
    assert read is not None and precompiled.read(str(copy), "another digest") is None
    assert read["code"].co_filename == str(copy / f"{precompiled.CODE_MODULE}.py")
    assert {key: value for key, value in read.items() if key != "code"} == {
        key: value for key, value in program.items() if key != "code"
    }


def test_the_rule_cache_keys_on_content_not_modification_times(tmp_path: Path) -> None:
    """``--rules DIR``: a touched rules file is a hit, an edited one a miss; the compiler then
    uses Lark's grammar cache in the cache folder."""
    copy = _copy_of_shipped_rules(tmp_path)
    cache = tmp_path / "cache"
    args = ["validate", str(STARTER), "--rules", str(copy)]
    assert imports_lark(args, cache, tmp_path)  # compiled
    assert (cache / "lark-grammar.pickle").is_file()
    assert not imports_lark(args, cache, tmp_path)  # from the rule cache
    os.utime(copy / "tools.rules", (1, 1))
    assert not imports_lark(args, cache, tmp_path)  # same bytes, older time: still a hit
    with (copy / "tools.rules").open("a", encoding="utf-8") as rules:
        rules.write("\n# an edit\n")
    assert imports_lark(args, cache, tmp_path)  # other bytes: compiled again
