"""What a session serves of a release, decided once for every caller: a new session, a running
one converging, ``beeuni tools ls`` (and ``tools ls --release``).

A release either serves or is refused. It is refused when an error of a rule the rules list in
``RELEASE_REFUSED_BY`` stands in it — a file of the manifest that does not parse, stops at a
reader's limit, or is not in the release: a session would serve other tools and agents than the
ones written. (A release without a manifest, and the rules' own limits, stop before this is
asked.) Otherwise it serves: every tool the release holds what it needs for and that loads; the
others — ``unreleased`` here, the modules that do not load in the module host — are skipped, each
with its reason. The rules say both (``rules/release.rules``); rules that do not define them refuse
nothing and skip nothing here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..lang.evaluator import Diagnostic
    from ..project import ProjectRun

REFUSED_BY = "RELEASE_REFUSED_BY"
UNRELEASED = "unreleased_tools"


def refusal(run: ProjectRun) -> Diagnostic | None:
    """The first error that keeps the release from being served, or None: it serves."""
    if REFUSED_BY not in run.program["lets"]:
        return None
    refusing = set(run.output(REFUSED_BY))
    return next((d for d in run.diagnostics() if d.severity == "error" and d.rule in refusing), None)


def unreleased(run: ProjectRun) -> dict[str, str]:
    """Each tool a session does not get because the release lacks what it needs, with why."""
    if UNRELEASED not in run.program["lets"]:
        return {}
    return {str(item["name"]): str(item["reason"]) for item in run.output(UNRELEASED)}


def error_line(d: Diagnostic) -> str:
    """A diagnostic in one line, as ``validate`` prints it."""
    return f"{d.file}:{d.line}:{d.column}: {d.severity}[{d.rule}] {d.message}"
