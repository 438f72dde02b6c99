"""Fixes: the text edits that carry out the rules' ``fix`` clauses.

A rule's ``fix`` clause gives the new text of the value its ``at`` names (a key or a value of the
manifest, or a rule id in a suppression comment); the evaluator stores it on the diagnostic as
``fix_value``. This module finds that value in the file and turns it into a ``TextEdit``
(``text_edit.py``), stored as the diagnostic's ``fix``:

* a YAML scalar's own text (after an anchor; quotes included) is replaced, and the new value is
  written the way ``tools eject`` writes one (``entries.scalar_splices`` and ``entries.quoted``: in
  the scalar's own quote style, else double-quoted);
* a value the engine cut out of a comment (``verbatim``: its position → its offsets) is replaced
  as it stands.

Each edit is read back before it is offered (``text_edit.same_document``): the file must still
parse to the same values but for the one replaced. A fix that fails this, or whose value spans
several lines or is not there, is not offered: the diagnostic keeps ``fix`` None.

The engine's API for editors and the command line (``ProjectRun`` wraps the first two):

    resolve_fixes(diagnostics, sources, verbatim)   # sets each diagnostic's ``fix``
    planned_changes(diagnostics, sources)           # {file: (new bytes, fixes)}, all applied
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..yaml.source_text import EditRefused, SourceText
from .entries import quoted, scalar_splices
from .text_edit import TextEdit, apply_edits, same_document, without_overlaps

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..lang.evaluator import Diagnostic

    Verbatim = dict[tuple[str, int, int], tuple[int, int]]


def resolve_fixes(diagnostics: Sequence[Diagnostic], sources: dict[str, bytes], verbatim: Verbatim) -> None:
    """Set the ``fix`` of each diagnostic whose rule gave a fix value."""
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.fix_value is not None and diagnostic.fix is None:
            by_file.setdefault(diagnostic.file, []).append(diagnostic)
    for file, found in by_file.items():
        data = sources.get(file)
        source = SourceText.decode(data) if data is not None else None
        if source is not None:
            _resolve_in(file, source, found, verbatim)


def _resolve_in(file: str, source: SourceText, found: list[Diagnostic], verbatim: Verbatim) -> None:
    """The fixes of one file. They are read back all together first (one parse, however many
    there are); only when that fails is each one tried on its own."""
    scalars: dict[tuple[int, int], tuple[int, int, str]] | None = None
    together: list[tuple[Diagnostic, TextEdit]] = []
    for diagnostic in found:
        span = verbatim.get((file, diagnostic.line, diagnostic.column))
        if span is not None:
            diagnostic.fix = _verbatim_edit(file, source, span, diagnostic)
            continue
        if scalars is None:
            scalars = _scalars(source)
        splice = scalars.get((diagnostic.line, diagnostic.column))
        if splice is not None and diagnostic.fix_value is not None:
            start, end, quote = splice
            if source.position(start)[0] == source.position(end)[0]:  # not a value over several lines
                together.append((diagnostic, TextEdit(file, source, start, end, quoted(diagnostic.fix_value, quote))))
    edits = without_overlaps([edit for _, edit in together])
    kept = {id(edit) for edit in edits}
    expected = {(d.line, d.column): d.fix_value for d, edit in together if id(edit) in kept and d.fix_value}
    if len(kept) == len(together) and same_document(source.text, apply_edits(source.text, edits), expected):
        for diagnostic, edit in together:
            diagnostic.fix = edit
        return
    for diagnostic, edit in together:
        diagnostic.fix = _scalar_edit(file, source, edit, diagnostic)


def _scalars(source: SourceText) -> dict[tuple[int, int], tuple[int, int, str]]:
    try:
        return scalar_splices(source.text)
    except EditRefused:
        return {}


def _verbatim_edit(file: str, source: SourceText, span: tuple[int, int], diagnostic: Diagnostic) -> TextEdit | None:
    assert diagnostic.fix_value is not None
    edit = TextEdit(file, source, span[0], span[1], diagnostic.fix_value)
    if "\n" in edit.new_text or not same_document(source.text, apply_edits(source.text, [edit])):
        return None
    return edit


def _scalar_edit(file: str, source: SourceText, edit: TextEdit, diagnostic: Diagnostic) -> TextEdit | None:
    """``edit`` (the value in the scalar's own quote style) if it reads back as meant on its own,
    else the value double-quoted (one that cannot stand plain), else none."""
    value = diagnostic.fix_value
    assert value is not None
    for candidate in (edit, TextEdit(file, source, edit.start, edit.end, quoted(value, '"'))):
        if same_document(
            source.text, apply_edits(source.text, [candidate]), {(diagnostic.line, diagnostic.column): value}
        ):
            return candidate
    return None


class FixConflict(Exception):
    """The fixes of one file, applied together, would change more than their values."""

    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.file = file


def planned_changes(diagnostics: Sequence[Diagnostic], sources: dict[str, bytes]) -> dict[str, tuple[bytes, int]]:
    """Every file that the diagnostics' fixes change: {file: (its new bytes, fixes applied)}.
    Where two fixes touch the same text only the first is applied (the other is still reported
    when the manifest is checked again). Raises ``FixConflict`` when the fixes of a file,
    together, would change more than their values."""
    by_file: dict[str, list[tuple[TextEdit, Diagnostic]]] = {}
    for diagnostic in diagnostics:
        if diagnostic.fix is not None:
            by_file.setdefault(diagnostic.fix.file, []).append((diagnostic.fix, diagnostic))
    changes: dict[str, tuple[bytes, int]] = {}
    for file in sorted(by_file):
        source = SourceText.decode(sources[file])
        assert source is not None  # its fixes were found in it
        edits = without_overlaps([edit for edit, _ in by_file[file]])
        kept = {id(edit) for edit in edits}
        scalars = _scalars(source)
        # the scalars meant to change (a verbatim edit changes a comment: no value at all)
        expected = {
            (d.line, d.column): d.fix_value
            for edit, d in by_file[file]
            if id(edit) in kept and d.fix_value is not None and (d.line, d.column) in scalars
        }
        new_text = apply_edits(source.text, edits)
        if not same_document(source.text, new_text, expected):
            raise FixConflict(file)
        changes[file] = (source.encode(new_text), len(edits))
    return changes
