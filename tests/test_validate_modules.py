"""`beeuni validate --modules`, beyond its golden cases (tests/golden/modules-*):
the starter example, a package outside any node_modules, Bun missing, and what plain `validate`
still imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, run_beeuni, run_typer

STARTER = ROOT / "examples" / "starter"


def test_the_starter_example_loads_clean() -> None:
    result = run_beeuni(["validate", "--modules", "--format", "json"], cwd=STARTER)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["diagnostics"] == []


def test_zod_that_no_node_modules_holds_is_the_daemons_reason(tmp_path: Path) -> None:
    """The design document's zod example, in a checkout without node_modules."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "lookup_order.ts").write_text(
        "import { z } from 'zod'\n"
        "export default {\n"
        "  description: 'Look up an order by id.',\n"
        "  parameters: z.toJSONSchema(z.object({ id: z.string().describe('The order id') })),\n"
        "  async execute(args) { return `order ${args.id}: shipped` },\n"
        "}\n"
    )
    (tmp_path / "beeuni.yaml").write_text("tools:\n  memory: beeuni:memory\n  lookup_order: tools/lookup_order.ts\n")
    result = run_beeuni(["validate", "--modules"], cwd=tmp_path)
    assert result.code == 1
    assert result.stdout == (
        "beeuni.yaml:3:17: error[modules/load] `tools/lookup_order.ts` does not load: "
        "Cannot find package 'zod' imported from tools/lookup_order.ts\n"
    )


def test_without_bun_it_says_how_to_install_it(tmp_path: Path) -> None:
    result = run_beeuni(
        ["validate", "--modules", str(STARTER)], cwd=tmp_path, env={"BEEUNI_BUN": str(tmp_path / "no-bun")}
    )
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("beeuni: Bun is not installed: install it (`npm install --global bun`")


def test_several_manifests_each_with_their_modules() -> None:
    golden = ROOT / "tests" / "golden"
    paths = [str(golden / "modules-view-overrides" / "project"), str(STARTER)]
    result = run_beeuni(["validate", "--modules", *paths], cwd=ROOT)
    assert result.code == 0, result.stderr
    assert result.stdout.count("modules/view-argument-dropped") == 3


def test_plain_validate_imports_nothing_of_the_module_check(tmp_path: Path) -> None:
    probe = (
        "import sys; from beeuni.cli.main import main; sys.argv = ['beeuni', 'validate', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('beeuni.daemon', 'jsonschema', 'selectors'))))"
    )
    command = [sys.executable, "-c", probe, str(STARTER)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={"NO_COLOR": "1", "BEEUNI_CACHE_DIR": str(tmp_path / "cache")},
        cwd=tmp_path,
    )
    assert done.stdout.strip().endswith("[]"), done.stdout + done.stderr


def test_fast_path_and_typer_agree_on_modules() -> None:
    case = ROOT / "tests" / "golden" / "modules-schema"
    args = ["validate", "project", "--modules", "--module-timeout", "5", "--format", "json"]
    fast = run_beeuni(args, cwd=case)
    typer = run_typer(args, cwd=case, env={"BEEUNI_BUN": str(ROOT / "node_modules" / ".bin" / "bun")})
    assert (fast.stdout, fast.stderr, fast.code) == (typer.stdout, typer.stderr, typer.code)
    assert fast.code == 1


def test_the_missing_bun_text_is_the_rules(tmp_path: Path) -> None:
    """The text comes from the rules (`BUN_MISSING`), for every command that runs Bun."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    modules_rules = rules / "modules.rules"
    modules_rules.write_text(
        modules_rules.read_text().replace('let BUN_MISSING = "Bun is not installed:', 'let BUN_MISSING = "No Bun here:')
    )
    project = tmp_path / "project"
    shutil.copytree(STARTER, project)
    (project / ".opencode" / "tools").mkdir(parents=True)
    (project / ".opencode" / "tools" / "mine.ts").write_text("export default { description: 'x' }\n")
    no_bun = {"BEEUNI_BUN": str(tmp_path / "no-bun")}  # set, Bun is looked for there alone
    for command in (
        ["validate", "--modules", "project"],
        ["tools", "call", "web_search", "project"],
        ["tools", "migrate", "project"],
        ["daemon", "project"],
    ):
        result = run_beeuni([*command, "--rules", str(rules)], cwd=tmp_path, env=no_bun)
        assert (result.code, result.stderr.split(" (")[0]) == (2, "beeuni: No Bun here: install it"), command
