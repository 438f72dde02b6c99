"""The Beeuni tools' modules, shipped inside the rules folder.

A rules folder carries the module of every Beeuni tool it declares, so that ``--rules DIR`` brings
its own: the rules say where (``shipped_module(name)``, a path relative to the rules folder), and
this module finds the file — for the daemon, which loads it, for ``tools eject``, which copies it,
and for ``beeuni rules check``, which reports a tool of ``BEEUNI_TOOLS`` without one at the line of
the data that names it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .lang.errors import Problem, RulesError

if TYPE_CHECKING:
    from typing import Any

#: the value the rules define with the Beeuni tools' names, and the function that places a module
TOOLS_VALUE = "BEEUNI_TOOLS"
MODULE_FUNCTION = "shipped_module"


def module_file(folder: str, relative: Any) -> str | None:
    """The file ``relative`` names inside the rules ``folder``; None when it is no relative path,
    leaves the folder (by ``..`` or a link) or is not a file."""
    if not isinstance(relative, str) or not relative or os.path.isabs(relative):
        return None
    root = os.path.realpath(folder)
    path = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, path]) != root or not os.path.isfile(path):
        return None
    return path


def check_shipped_modules(program: dict[str, Any], folder: str, shown: str) -> list[Problem]:
    """A ``FolderCheck``: every Beeuni tool has its module in the rules folder. A missing one is
    an error at the line of ``BEEUNI_TOOLS`` that names the tool."""
    from .lang.builtins import Observer
    from .lang.evaluator import Evaluation
    from .paths import Repository

    defined = program["defined"].get(f"let:{TOOLS_VALUE}")
    if defined is None or program["fns"].get(MODULE_FUNCTION) != 1:
        return []  # the contract check reports what is missing
    file, line, column = defined
    try:
        evaluation = Evaluation(program, {}, Observer(Repository(folder)), file)
        names = evaluation.get(TOOLS_VALUE)
        places = [(name, evaluation.call(MODULE_FUNCTION, [name])) for name in names]
    except (RulesError, TypeError, KeyError) as err:
        return [Problem(file, line, column, f"`{TOOLS_VALUE}` must be a list of names known without a manifest: {err}")]
    problems = []
    source = _source(folder, file)
    for name, relative in places:
        if module_file(folder, relative) is None:
            at_line, at_column = _literal_position(source, str(name), line) or (line, column)
            message = (
                f"the Beeuni tool `{name}` has no module: {shown}/{relative} is not a file in the rules folder "
                f"(`{MODULE_FUNCTION}(name)` says where a Beeuni tool's module lives)"
            )
            problems.append(Problem(file, at_line, at_column, message))
    return problems


def shipped_module_file(folder: str, shown: str, program: dict[str, Any], relative: Any) -> str:
    """The module a Beeuni tool is served or ejected from; a rules folder that lost it (after the
    rules were checked) is a rules error, like the check's."""
    path = module_file(folder, relative)
    if path is None:
        problems = check_shipped_modules(program, folder, shown)
        if problems:
            raise RulesError.of(problems)
        file, line, column = program["defined"].get(f"fn:{MODULE_FUNCTION}", [shown, 1, 1])
        raise RulesError(file, line, column, f"{shown}/{relative} is not a file in the rules folder")
    return path


def _source(folder: str, file: str) -> list[str]:
    try:
        with open(os.path.join(folder, os.path.basename(file)), encoding="utf-8") as handle:
            return handle.read().splitlines()
    except (OSError, ValueError):
        return []


def _literal_position(lines: list[str], name: str, from_line: int) -> tuple[int, int] | None:
    """Where the string literal ``name`` is first written at or after ``from_line`` (1-based)."""
    import re  # (`rules check` only: not imported by every run that loads this module)

    literal = re.compile(rf"([\"']){re.escape(name)}\1")
    for number in range(from_line, len(lines) + 1):
        found = literal.search(lines[number - 1])
        if found is not None:
            return number, found.start() + 1
    return None
