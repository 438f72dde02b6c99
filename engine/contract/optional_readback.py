"""``beeuni rules check`` of the names the engine reads only when a rule set defines them
(``rules_interface.OPTIONAL_READ_BACK_VALUES`` and ``…_FUNCTIONS``: the code frame's help part, the
JSON Schema, what the language server completes, shows on hover and titles its quick fixes),
and of the regular expressions among the others (``readback.PATTERN_VALUES``).

Each defined one is computed over a project without a manifest — a function called with each
Beeuni tool's name, the kind of name an editor passes — and held against its shape
(``readback.OPTIONAL_VALUES``, ``OPTIONAL_FUNCTIONS``): a wrong one is an error at its
definition, before any editor asks for it. A value that is wrong only for some manifest is
still found where it is read: the command (or the language server) reports it as
``error[rules]``, as for every name the engine reads back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lang.errors import Problem, RulesError
from .readback import OPTIONAL_FUNCTIONS, OPTIONAL_VALUES, PATTERN_VALUES

if TYPE_CHECKING:
    from typing import Any

#: the read-back value whose names the functions are tried with
SAMPLE_NAMES = "BEEUNI_TOOLS"


def check_optional_read_backs(program: dict[str, Any], folder: str, shown: str) -> list[Problem]:
    """A ``FolderCheck``: every optional read-back name the rules define has its shape."""
    from ..manifest import MergedManifest
    from ..paths import MANIFEST_NAME, Repository
    from ..project import ProjectRun

    repo = Repository(folder)
    run = ProjectRun(repo, MANIFEST_NAME, program, merged=MergedManifest(repo, MANIFEST_NAME))
    problems: list[Problem] = []
    for name in (*OPTIONAL_VALUES, *PATTERN_VALUES):
        if name in program["lets"]:
            try:
                run.output(name)
            except RulesError as err:
                problems.extend(err.problems)
    samples: list[Any] | None = None
    for name, (parameters, _) in OPTIONAL_FUNCTIONS.items():
        if program["fns"].get(name) != len(parameters):
            continue  # not defined, or the checker has said what is wrong with it
        try:
            if samples is None:
                samples = list(run.output(SAMPLE_NAMES))
            for sample in samples:
                run.call(name, *([sample] * len(parameters)))
        except RulesError as err:
            problems.extend(err.problems)
    return sorted(problems, key=Problem.sort_key)
