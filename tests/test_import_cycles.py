"""The product's modules (engine/, cli/, daemon/) import one another without a cycle, lazy
imports (inside a function) and imports for type checkers included, so each can be read, and
changed, on its own; what several of the command line's modules need is in ``cli/shared.py``,
which imports nothing else from cli/."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, name: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that the module ``name`` (in ``path``) imports, anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *(node.module.split(".") if node.module else [])])
        # `from . import commands` names a module (not its package); `from .shared import bun` a member
        named = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in modules]
        found.update(c for c in (named if named and node.module is None else [*named, target]) if c != name)
    return found & modules


def _graph(*folders: str) -> dict[str, set[str]]:
    paths = {_module_name(path): path for folder in folders for path in (PACKAGE_ROOT / folder).rglob("*.py")}
    return {name: _imported(path, name, set(paths)) for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or None."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        trail.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == "open":
                return [*trail[trail.index(child) :], child]
            if child not in state and (found := visit(child)) is not None:
                return found
        state[node] = "done"
        trail.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_modules_import_one_another_without_a_cycle() -> None:
    graph = _graph("engine", "cli", "daemon")
    assert {"cli.commands", "engine.project", "engine.yaml.loader", "daemon.server"} <= graph.keys()
    assert _cycle(graph) is None, " → ".join(_cycle(graph) or [])


def test_the_shared_module_imports_nothing_else_from_cli() -> None:
    assert {module for module in _graph("cli")["cli.shared"] if module.startswith("cli")} == set()


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_typer_choices_are_the_shared_formats() -> None:
    from beeuni.cli.app import OutputFormat, RulesCheckFormat
    from beeuni.cli.shared import FORMATS, MACHINE_FORMATS

    assert get_args(OutputFormat) == FORMATS
    assert get_args(RulesCheckFormat) == ("text", *MACHINE_FORMATS)
