"""The rules language: grammar, parser, static checker, code generator, cache and runtime.

``load_program(folder)`` reads every ``*.rules`` file of a folder and returns the compiled
program: for the shipped rules, as the wheel carries it compiled (``precompiled.py``); else from
the cache when the sources are unchanged (``program_cache.py``); else by parsing with Lark
(``parser.py``), checking (``checker.py``) and generating Python (``codegen.py``).
``Evaluation`` (``evaluator.py``) runs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..cache.folder import read_record, write_record
from . import precompiled, program_cache
from .errors import RulesError
from .interface import Interface

if TYPE_CHECKING:
    from typing import Any

    from .errors import Problem

HERE = os.path.dirname(__file__)
GRAMMAR = os.path.join(HERE, "grammar.lark")
#: what the cached program was made with, and the runtime its code calls (the helpers and
#: built-ins of ``codegen.HELPERS``; ``patterns.py``, which matches the rules' patterns): a new
#: version of any of these compiles the rules anew
COMPILER = [
    GRAMMAR,
    *(
        os.path.join(HERE, name)
        for name in (
            *("parser.py", "checker.py", "types.py", "hoist.py", "codegen.py"),
            *("evaluator.py", "memo.py", "indexes.py", "values.py", "builtins.py", "patterns.py"),
        )
    ),
]


def rules_files(folder: str) -> list[str]:
    """The ``*.rules`` files of a rules folder, in name order (the order they are read in)."""
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name.endswith(".rules")]


def load_program(
    folder: str, interface: Interface, display: str | None = None, shipped: bool = False
) -> dict[str, Any]:
    """The checked program of the rules in ``folder``; ``display`` is how to name the folder in
    messages (default: as given); ``shipped``: the folder is beeuni's own, which may hold the
    program compiled at build time. A rule set with an error raises ``RulesError`` with every
    problem found; the warnings of a good one are the program's ``problems``."""
    shown = display if display is not None else folder
    try:
        paths = rules_files(folder)
    except OSError as err:
        raise RulesError(shown, 1, 1, f"cannot read the rules folder: {err.strerror}") from None
    if not paths:
        raise RulesError(shown, 1, 1, "the rules folder holds no *.rules file")
    digest = program_digest(paths, interface, shown)
    program: dict[str, Any] | None = precompiled.read(folder, digest) if shipped else None
    if program is None:
        key = program_cache.cache_key(digest, folder)
        program = read_record("rules", key)
        if program is None:
            program = compile_sources(_read_sources(paths, shown), interface, folder, shown)
            write_record("rules", key, program)
    return program


def program_digest(paths: list[str], interface: Interface, shown: str) -> str:
    """The content digest of the program compiled from the rules files ``paths``, the folder
    named ``shown``, against ``interface``: what the rule cache and the precompiled rules key on."""
    return program_cache.content_digest([*COMPILER, *paths], f"{shown}\n{interface.fingerprint()}")


def compile_folder(folder: str, interface: Interface, shown: str) -> tuple[dict[str, Any], str, str]:
    """Compile the rules of ``folder`` from scratch: the program, its generated Python source
    and its content digest (what the build writes into the wheel, ``precompiled.write``)."""
    paths = rules_files(folder)
    kept: list[str] = []
    program = compile_sources(_read_sources(paths, shown), interface, folder, shown, kept)
    return program, kept[0], program_digest(paths, interface, shown)


def _read_sources(paths: list[str], shown: str) -> list[tuple[str, bytes]]:
    sources = []
    for path in paths:
        with open(path, "rb") as handle:
            sources.append((f"{shown}/{os.path.basename(path)}", handle.read()))
    return sources


def compile_sources(
    sources: list[tuple[str, bytes]],
    interface: Interface,
    folder: str = ".",
    shown: str = ".",
    source_out: list[str] | None = None,
) -> dict[str, Any]:
    """Parse and check rules sources — the slow path, the only one that imports Lark. ``folder``
    (named ``shown`` in messages) is where they were read, for the interface's own checks;
    ``source_out``, if given, receives the generated Python source."""
    from .checker import check_program
    from .codegen import compile_program
    from .errors import Problem
    from .parser import parse_rules

    definitions = []
    problems: list[Problem] = []
    lost: set[str] = set()
    for name, data in sources:
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as err:
            problems.append(Problem(name, 1, 1, f"not UTF-8: {err.reason}"))
            continue
        parsed = parse_rules(source, name)
        definitions.extend(parsed.definitions)
        problems.extend(parsed.problems)
        lost |= parsed.lost_names
    checked, found = check_program(definitions, interface, shown, frozenset(lost) if problems else None)
    problems.extend(found)
    if _has_error(problems):
        raise RulesError.of(problems)
    try:
        program = compile_program(checked, source_out)
    except (RecursionError, SyntaxError, MemoryError):  # Python's own limits on nesting
        raise RulesError(shown, 1, 1, "expressions are nested too deeply to compile") from None
    problems.extend(_endless(program))
    if not _has_error(problems):
        problems.extend(_render_docs(program, folder))
    for check in interface.checks:
        problems.extend(check(program, folder, shown))
    if _has_error(problems):
        raise RulesError.of(problems)
    program["problems"] = [problem.as_tuple() for problem in sorted(problems, key=Problem.sort_key)]
    return program


def _render_docs(program: dict[str, Any], folder: str) -> list[Problem]:
    """Render the docs written as templates, from the rules' constants (``checker`` made sure
    they use no fact): the program keeps the text, so no command renders them again."""
    from ..paths import Repository
    from .builtins import Observer
    from .evaluator import Evaluation

    evaluation = Evaluation(program, {}, Observer(Repository(folder)), folder)
    found = []
    for index in evaluation.docs:
        try:
            program["rules"][index]["doc"] = evaluation.render_doc(index)
        except RulesError as err:
            found.extend(err.problems)
    return found


def _endless(program: dict[str, Any]) -> list[Problem]:
    """A definition whose evaluation alone, loops aside, takes more steps than any evaluation
    may, or builds more bytes of values than a run may (functions that call others twice, and
    those others twice, ...), can never finish."""
    from .errors import Problem
    from .values import ROOM, STEPS

    found = []
    why = "loops aside: it calls functions that call others, many times over"
    for table, limit, what_over in (
        ("weights", STEPS, f"takes more than {STEPS:,} steps to evaluate"),
        ("rooms", ROOM, f"builds more than {ROOM // 1_000_000} MB of values"),
    ):
        for key, weight in program[table].items():
            if weight <= limit:
                continue
            kind, name = key.split(":", 1)
            if kind == "rule":
                rule = program["rules"][int(name)]
                where, what = [rule["file"], *rule["pos"]], f"rule `{rule['id']}`"
            else:
                where, what = program["defined"][key], f"`{name}`"
            found.append(Problem(where[0], where[1], where[2], f"{what} {what_over}, {why}"))
    return found


def _has_error(problems: list[Problem]) -> bool:
    return any(problem.severity == "error" for problem in problems)


__all__ = ["Interface", "RulesError", "load_program"]
