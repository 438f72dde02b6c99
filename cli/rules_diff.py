"""``beeuni rules diff``: what a change of the rules does to a corpus of projects.

The rules are compiled here, once per side (a broken rules file stops everything with exit 2);
each project is then one task — ``engine/corpus/run.py`` runs them in this process, on a local
process pool or on a Dask cluster — and ``diff_report`` writes what changed.
"""

from __future__ import annotations

import os
import sys

from ..engine.corpus.run import SchedulerUnavailable, local_workers, pack, run_dask, run_local
from ..engine.project import load_rules, rules_only
from . import diff_report
from .progress import label_of, progress
from .shared import UsageError


def rules_diff(
    projects: list[str],
    corpus: str | None,
    base: str,
    rules: str | None,
    output_format: str,
    fail_on: str,
    workers: int | None,
    scheduler: str | None,
) -> int:
    listed = [(path, os.path.abspath(path)) for path in projects]
    if corpus is not None:
        listed += read_corpus(corpus)
    if not listed:
        raise UsageError("name the projects to compare: PROJECT... or --corpus FILE")
    if workers is not None and workers < 1:
        raise UsageError("--workers must be at least 1")
    if workers is not None and scheduler is not None:
        raise UsageError("--workers is for the local run; a Dask cluster has its own workers")
    base_rules, new_rules = pack(load_rules(base)), pack(load_rules(rules))
    try:
        with progress(lambda: label_of(rules_only(rules), "rules_diff"), len(listed)) as compared:
            if scheduler is not None:
                results = run_dask(listed, base_rules, new_rules, scheduler, compared)
            else:
                results = run_local(listed, base_rules, new_rules, workers or local_workers(), compared)
    except SchedulerUnavailable as err:
        raise UsageError(str(err)) from None
    names = (base, rules if rules is not None else "rules")
    summary = diff_report.write(output_format, results, names, sys.stdout)
    if summary["not_compared"]:
        sys.stderr.write(f"beeuni: {summary['not_compared']} of {summary['projects']} projects could not be compared\n")
    failing = summary["new_errors"] if fail_on == "new-errors" else summary["affected"]
    return 1 if failing else 0


def read_corpus(corpus: str) -> list[tuple[str, str]]:
    """The projects a corpus file lists: one folder or manifest per line, relative to the file's
    folder; blank lines and lines starting with ``#`` are skipped."""
    try:
        with open(corpus, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read the corpus file {corpus}: {getattr(err, 'strerror', None) or err}") from None
    folder = os.path.dirname(os.path.abspath(corpus))
    entries = (line.strip() for line in lines)
    return [(entry, os.path.join(folder, entry)) for entry in entries if entry and not entry.startswith("#")]
