"""``beeuni validate --fix`` and ``--diff``: carry out the rules' fixes.

Every diagnostic whose rule gives a fix (``engine/edit/fixes.py``) is fixed in one pass, in the root
manifest and in the imports alike, byte-exactly: each value is spliced into the text as
``tools eject`` splices, every other byte — comments, line ends, quoting — stays, and each file
is read back to check that only the fixed values changed. ``--fix`` then writes each file
atomically and checks the manifest again, printing what remains; ``--diff`` prints a unified
diff and writes nothing (exit 1 when it would change something). A refusal — fixes of one file
that do not fit together, a file reached through a link out of the repository, a file changed
meanwhile — writes nothing at all. The texts come from the rules (``fix_summary``,
``fix_refusal``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..engine.edit.fixes import FixConflict, planned_changes
from ..engine.lang.values import text
from ..engine.project import open_project
from ..engine.yaml.source_text import SourceText
from . import commands
from .shared import EXIT_ERRORS, EXIT_OK, UsageError
from .tool_files import Changes, read_if_there

if TYPE_CHECKING:
    from typing import Any

    from ..engine.project import ProjectRun


def validate_fix(paths: list[str], output_format: str, rules: str | None, write: bool, **options: Any) -> int:
    """Fix each manifest in turn (``write``) or print the fixes as a diff; with ``write``, then
    check them all again as ``validate`` does, with its ``options`` (``--output``, ``--quiet``,
    ``--max-warnings``)."""
    changed = False
    for path in paths:
        changed = _fix(open_project(path, rules), write) or changed
    if not write:
        return EXIT_ERRORS if changed else EXIT_OK
    return commands.validate(paths, output_format, rules, **options)


def _fix(run: ProjectRun, write: bool) -> bool:
    """Apply (or print) one manifest's fixes; whether there were any."""
    try:
        changes = planned_changes(run.diagnostics(), run.merged.sources)
    except FixConflict as conflict:
        raise UsageError(text(run.call("fix_refusal", "conflict", conflict.file))) from None
    fixes = sum(count for _, count in changes.values())
    summary = text(run.call("fix_summary", fixes, len(changes), write))
    if write:
        _write_all(run, {file: new for file, (new, _) in changes.items()})
    else:
        for file, (new, _) in changes.items():
            sys.stdout.write(unified_diff(file, run.merged.sources[file], new))
    sys.stderr.write(f"{run.manifest}: {summary}\n")
    return bool(changes)


def _write_all(run: ProjectRun, changes: dict[str, bytes]) -> None:
    """Write every changed file, or — when one of them cannot be written safely — none."""
    planned = Changes(run.repo)
    for file, data in changes.items():
        relative = run.repo.relative(file)
        target = run.repo.real_target(relative) if relative is not None else None  # a link inside stays a link
        if relative is None or target is None:
            raise UsageError(text(run.call("fix_refusal", "link", file)))
        if read_if_there(target) != run.merged.sources[file]:
            raise UsageError(text(run.call("fix_refusal", "changed", file)))
        planned.write(relative, target, data)
    planned.commit()


def unified_diff(file: str, old: bytes, new: bytes) -> str:
    """A unified diff of one file (``--- a/file``, ``+++ b/file``), its line ends kept as they
    are, and git's mark on a last line without one."""
    import difflib

    before, after = _lines(old), _lines(new)
    out = []
    for line in difflib.unified_diff(before, after, f"a/{file}", f"b/{file}", n=3):
        if line.startswith(("---", "+++", "@@")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith(("\n", "\r", "\x85", "\u2028", "\u2029")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(data: bytes) -> list[str]:
    source = SourceText(data.decode("utf-8"))
    starts = [*source.line_starts[1:], len(source.text)]
    lines = [source.text[start:end] for start, end in zip(source.line_starts, starts, strict=True)]
    return lines[:-1] if lines and not lines[-1] else lines
