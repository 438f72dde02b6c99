"""What several modules of the command line share: the error of a request a command cannot
serve, the Bun lookup of the commands that run tool modules, the module load limit, the output
formats, the exit statuses, the version, and how ``rules check`` and ``rules test`` name the folder they work on.

It imports nothing else from cli/ (the other modules import it, never the reverse), and nothing
heavy at import: the hand-parsed fast path of ``main.py`` reads the formats from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.project import ProjectRun

DEFAULT_MODULE_LIMIT = 10.0  # seconds one module may take to load (`validate --modules`)

#: the formats of diagnostics: lines or code frames, JSON, and the CI systems' own formats
#: (one module each under ``formats/``)
TEXT_FORMATS = ("text", "concise", "full")
MACHINE_FORMATS = ("github", "sarif", "gitlab")
FORMATS = (*TEXT_FORMATS, "json", *MACHINE_FORMATS)

EXIT_OK, EXIT_ERRORS, EXIT_FAILURE = 0, 1, 2


def beeuni_version() -> str:
    """The installed package's version (``--version``, SARIF's tool, the language server)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("beeuni")
    except PackageNotFoundError:
        return "unknown"


class UsageError(Exception):
    """A request the command cannot serve (an unknown agent, a bad combination of options)."""


def bun(rules: ProjectRun | str | None, project: str | None = None) -> str:
    """Bun's path, for the commands that run tool modules of a project (a run, or ``project``: a
    manifest or its folder, as on the command line; ``daemon/host/bun.py`` says where it looks); without
    Bun, a usage error saying how to install it — the ``BUN_MISSING`` of the project's rules (a
    run), or of a rules folder."""
    import os

    from ..daemon.host.bun import BunMissing, find_bun
    from ..engine.project import ProjectRun, rules_only

    if isinstance(rules, ProjectRun):
        project = rules.repo.root
    elif project is not None and not os.path.isdir(project):
        project = os.path.dirname(os.path.abspath(project))
    try:
        return find_bun(project)
    except BunMissing:
        from ..engine.lang.values import text

        run = rules if isinstance(rules, ProjectRun) else rules_only(rules)
        raise UsageError(text(run.output("BUN_MISSING"))) from None


def tested_folder(folder: str | None, command: str) -> str:
    """How ``rules check`` and ``rules test`` name the folder they work on, on their first line:
    without one named, the copy installed with beeuni — which a maintainer editing ``rules/``
    in a clone does not want, so the line says how to name it."""
    if folder is None:
        return f"the shipped rules, installed with beeuni (in a clone, name the folder: `beeuni rules {command} rules`)"
    return f"the rules in {folder}"
