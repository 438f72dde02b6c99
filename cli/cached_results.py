"""``beeuni validate`` and ``beeuni resolve`` answered from the result cache
(``engine/cache/results.py``).

Before a check, ``Probe`` names the record of this command, manifest and rule set; a hit is
written here, in the format asked for, with nothing imported that a check needs (no YAML, no
rules; for ``validate`` not even the evaluator). A miss runs the check, and ``keep`` stores its
result — for ``validate`` the diagnostics before any format, so that the next run, in whatever
format, quiet or not, writes them as a check would; for ``resolve`` the resolved set.

``validate`` is answered here for one manifest, in ``text`` or ``concise`` when standard output
is no terminal (one plain line each) and in ``json``; without ``--output`` and ``--modules``.
Anything else (code frames, colour, the machine formats, several manifests) is checked as
always, and its diagnostics still stored for the next run.
"""

from __future__ import annotations

import os
import sys

from ..engine.cache import results as result_cache
from ..engine.paths import manifest_path
from . import diagnostic_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun

#: the shipped rules folder (``engine.project.shipped_rules()``, without importing ``engine.project``)
SHIPPED_RULES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules")
ANSWERED_FORMATS = ("text", "concise", "json")


class Probe:
    """The result cache's record for one manifest and rule set."""

    __slots__ = ("key", "made_by", "root")

    def __init__(self, command: str, path: str, rules: str | None) -> None:
        manifest = os.path.abspath(manifest_path(path))
        folder, shown = (SHIPPED_RULES, "rules") if rules is None else (os.path.abspath(rules), rules)
        self.key = result_cache.key_of(command, manifest, folder, shown, ())
        self.root = os.path.realpath(os.path.dirname(manifest))
        self.made_by = result_cache.fingerprint(folder) if os.path.isfile(manifest) else None

    def answer(self, output_format: str, output: str | None, quiet: bool, max_warnings: int | None) -> int | None:
        """The exit status, the result written, when the record holds; None for a miss."""
        if output is not None or output_format not in ANSWERED_FORMATS:
            return None
        if output_format != "json" and sys.stdout.isatty():
            return None  # code frames or colour: the check's own writers
        result = result_cache.lookup(self.key, self.root, self.made_by)
        if result is None:
            return None
        return write(result, output_format, quiet, max_warnings)

    def answer_resolve(self, as_json: bool) -> int | None:
        """``resolve``'s exit status, the resolved set written, when the record holds; else None."""
        result = result_cache.lookup(self.key, self.root, self.made_by)
        if result is None:
            return None
        from . import report

        manifest, errors, resolved = result
        report.write_resolved(resolved, as_json)
        return diagnostic_text.note_errors(manifest, errors)

    def keep(self, run: ProjectRun, fix_hint: str) -> None:
        """Store the diagnostics of ``run`` (checked, and written) with its dependency record, and
        the end of its summary line (``commands.fix_hint``: a text of the rules)."""
        self.keep_result(run, (run.manifest, [d.as_dict() for d in run.diagnostics()], fix_hint))

    def keep_result(self, run: ProjectRun, result: Any) -> None:
        """Store ``result``, what ``run`` gave, with its dependency record (after everything of it
        was computed: the record holds every question the run asked)."""
        result_cache.store(self.key, self.made_by, run.repo, run.observer.known, result)


def look_up(
    paths: list[str],
    rules: str | None,
    modules: bool,
    output_format: str,
    output: str | None,
    quiet: bool,
    max_warnings: int | None,
) -> tuple[Probe | None, int | None]:
    """``validate``'s look-up: its probe, None when the result cache may not serve the run
    (turned off, several manifests, modules loaded in Bun: their answers are not the
    repository's); and on a hit the exit status, the answer written (else None)."""
    if modules or len(paths) != 1 or result_cache.disabled_by_environment():
        return None, None
    probe = Probe("validate", paths[0], rules)
    return probe, probe.answer(output_format, output, quiet, max_warnings)


def look_up_resolve(path: str, rules: str | None, as_json: bool) -> tuple[Probe | None, int | None]:
    """``resolve``'s look-up, as ``look_up``."""
    if result_cache.disabled_by_environment():
        return None, None
    probe = Probe("resolve", path, rules)
    return probe, probe.answer_resolve(as_json)


def write(result: Any, output_format: str, quiet: bool, max_warnings: int | None) -> int:
    """Write a stored result as ``commands.validate`` writes a checked one."""
    manifest, diagnostics, fix_hint = result
    shown = [d for d in diagnostics if d["severity"] == "error"] if quiet else diagnostics
    if output_format == "json":
        import json

        from ..engine.visible import visible_json

        document = diagnostic_text.validate_document(manifest, shown)
        sys.stdout.write(visible_json(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
    else:
        line = diagnostic_text.line
        sys.stdout.write(
            "".join(
                line(d["file"], d["line"], d["column"], d["severity"], d["rule"], d["message"]) + "\n" for d in shown
            )
        )
        if not quiet:
            sys.stderr.write(f"{manifest}: {diagnostic_text.summary(d['severity'] for d in diagnostics)}{fix_hint}\n")
    errors = any(d["severity"] == "error" for d in diagnostics)
    warnings = sum(1 for d in diagnostics if d["severity"] == "warning")
    return diagnostic_text.exit_status(diagnostic_text.EXIT_ERRORS if errors else 0, warnings, max_warnings)
