"""Text edits of manifest files: what a fix or a new suppression comment changes, as data.

A ``TextEdit`` replaces the text between two positions of one file (an insertion when they are
equal). Positions are 1-based lines and columns counted as the diagnostics count them (code
points, YAML's line breaks: ``yaml/source_text.py``); the end is exclusive. ``as_dict()`` is the form
``validate --format json`` prints under a diagnostic's ``fix``:

    {"file": "beeuni.yaml", "line": 3, "column": 1, "end_line": 3, "end_column": 5,
     "replacement": "tools"}

``apply_edits`` splices edits into a text; ``same_document`` reads the result back and checks
that the YAML still holds exactly what it held before, apart from the values meant to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from yaml import CSafeLoader, ScalarEvent, YAMLError, parse

from ..yaml.loader import STR_TAG, plain_tag

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from ..yaml.source_text import SourceText


class TextEdit:
    __slots__ = ("column", "end", "end_column", "end_line", "file", "line", "new_text", "start")

    def __init__(self, file: str, source: SourceText, start: int, end: int, new_text: str) -> None:
        self.file = file
        self.start, self.end = start, end  # offsets in the file's text
        self.line, self.column = source.position(start)
        self.end_line, self.end_column = source.position(end)
        self.new_text = new_text

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "replacement": self.new_text,
        }

    def __repr__(self) -> str:
        return f"TextEdit({self.file}:{self.line}:{self.column}-{self.end_line}:{self.end_column} {self.new_text!r})"


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with ``edits`` (of this one file, not overlapping) spliced in."""
    pieces = []
    done = 0
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end)):
        pieces += [text[done : edit.start], edit.new_text]
        done = edit.end
    pieces.append(text[done:])
    return "".join(pieces)


def without_overlaps(edits: Sequence[TextEdit]) -> list[TextEdit]:
    """The edits in order, each dropped that touches the text an earlier one changes."""
    kept: list[TextEdit] = []
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end)):
        if kept and edit.start < kept[-1].end:
            continue
        kept.append(edit)
    return kept


def same_document(old: str, new: str, changed: dict[tuple[int, int], str] | None = None) -> bool:
    """Whether ``new`` parses to what ``old`` does — the same values, keys, styles, anchors and
    tags in the same order — except that each scalar of ``old`` starting at a 1-based (line,
    column) of ``changed`` now holds that text, as a string."""
    changed = changed or {}
    try:
        old_events: list[Any] = list(parse(old, Loader=CSafeLoader))
        new_events: list[Any] = list(parse(new, Loader=CSafeLoader))
    except YAMLError:
        return False
    if len(old_events) != len(new_events):
        return False
    hits = 0
    for before, after in zip(old_events, new_events, strict=True):
        start = (before.start_mark.line + 1, before.start_mark.column + 1)
        if type(before) is ScalarEvent and start in changed:
            hits += 1
            if not (type(after) is ScalarEvent and after.value == changed[start] and _is_string(after)):
                return False
        elif _signature(before) != _signature(after):
            return False
    return hits == len(changed)


def _signature(event: Any) -> tuple[Any, ...]:
    return (
        type(event),
        getattr(event, "value", None),
        getattr(event, "anchor", None),
        getattr(event, "tag", None),
        getattr(event, "implicit", None),
        getattr(event, "flow_style", None),
        getattr(event, "style", None),
    )


def _is_string(event: Any) -> bool:
    if event.tag not in (None, "!"):
        return bool(event.tag == STR_TAG)
    return not event.implicit[0] or plain_tag(event.value) == STR_TAG  # (only plain text may be more)
