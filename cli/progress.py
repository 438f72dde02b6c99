"""Progress of a long command (``rules diff`` over many projects, ``tools migrate`` loading tool
files) on a terminal: a ``rich.progress`` bar on standard error, gone when the command ends. Off
a terminal — CI, a pipe, a file — there is no bar, and rich is not even imported."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ..engine.project import ProjectRun


#: the rules' labels of the progress bars, by command (when the rules define them)
PROGRESS_LABELS = "PROGRESS_LABELS"


def label_of(run: ProjectRun, command: str) -> str:
    """The rules' label of ``command``'s progress bar; none when the rules define no labels."""
    from ..engine.lang.values import text

    if PROGRESS_LABELS not in run.program["lets"]:
        return ""
    return text(run.output(PROGRESS_LABELS)[command])


@contextmanager
def progress(label: Callable[[], str], total: int) -> Iterator[Callable[[int], None]]:
    """A function to call with how many of the ``total`` steps are newly done; ``label`` gives
    the bar's label (asked only on a terminal)."""
    if not sys.stderr.isatty():
        yield lambda done: None  # off a terminal, progress is not shown
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label(), total=total)
        yield lambda done: bar.advance(task, done)
