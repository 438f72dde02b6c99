"""The rules language: grammar, parser, static checker, cache and evaluator.

``load_program(folder)`` reads every ``*.rules`` file of a folder and returns the checked
program, from the cache when the sources are unchanged (``cache.py``), else by parsing with Lark
(``parser.py``) and checking (``checker.py``). ``Evaluation`` (``evaluator.py``) runs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import cache
from .errors import RulesError

GRAMMAR = Path(__file__).with_name("grammar.lark")


def load_program(folder: Path, fact_names: frozenset[str], display: str | None = None) -> dict[str, Any]:
    """The checked program of the rules in ``folder``; ``display`` is how to name the folder in
    messages (default: as given)."""
    shown = display if display is not None else str(folder)
    try:
        files = sorted(path for path in folder.iterdir() if path.suffix == ".rules")
    except OSError as err:
        raise RulesError(shown, 1, 1, f"cannot read the rules folder: {err.strerror}") from None
    if not files:
        raise RulesError(shown, 1, 1, "the rules folder holds no *.rules file")
    sources = [(f"{shown}/{path.name}", path.read_bytes()) for path in files]
    key = cache.cache_key(sources + [("", ",".join(sorted(fact_names)).encode())], GRAMMAR.read_bytes())
    program = cache.read(key)
    if program is None:
        program = compile_sources(sources, fact_names)
        cache.write(key, program)
    return program  # type: ignore[no-any-return]


def compile_sources(sources: list[tuple[str, bytes]], fact_names: frozenset[str]) -> dict[str, Any]:
    """Parse and check rules sources — the slow path, the only one that imports Lark."""
    from .checker import build_program
    from .parser import parse_rules

    definitions = []
    for name, data in sources:
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RulesError(name, 1, 1, f"not UTF-8: {err.reason}") from None
        definitions.extend(parse_rules(source, name))
    return build_program(definitions, fact_names)


__all__ = ["RulesError", "load_program"]
