"""Inline suppressions: ``# beeuni: ignore[rule-id, …] reason`` comments in the manifest files.

The rules own the syntax and every text (``SUPPRESSION`` in ``rules/suppressions.rules``: the
comment's regular expression with the groups ``ids`` and ``reason``, the separator of the ids,
and the template of a new comment). The engine:

1. finds the comments in every file that loaded — a file whose reading stopped (a YAML syntax
   error, say) has no comments the engine trusts, so nothing can suppress that problem — and
   hands them to the rules as the fact ``suppressions``: ``[{at, file, line, ids, reason}]``,
   where ``at`` is the comment, ``line`` the line it silences (its own, or for a comment alone
   on its line the next line that is not such a comment) and ``ids`` the rule ids, each located;
2. runs the rules, and drops every diagnostic whose rule a suppression of its file and line
   names;
3. hands each named id that silenced nothing to the rules that read ``unused_suppressions``
   (``[{id, file, line, suppression}]``), which run after all others and cannot be suppressed.

``Suppressions.edit(diagnostic)`` is the text edit that silences a diagnostic (for an editor's
code action): the rule id added to a suppression that already silences that line, else a new
comment at the end of the line, else a new comment line above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lang import patterns
from .yaml.located import LocatedStr
from .yaml.source_text import SourceText

if TYPE_CHECKING:
    from typing import Any

    from .edit.text_edit import TextEdit
    from .lang.evaluator import Diagnostic
    from .lang.patterns import Regex

    Record = dict[str, Any]


class Syntax:
    """The comment syntax, as the rules define it (``SUPPRESSION``)."""

    def __init__(self, definition: Any) -> None:
        """``definition`` as ``ProjectRun.output`` checked it (``contract/readback.py``): its pattern a
        regular expression of the rules with the two groups."""
        self.source = str(definition["pattern"])
        self.separator = str(definition["separator"])
        self.comment = str(definition["comment"])
        #: whether a text holds such a comment at all: RE2's yes or no, which needs not the
        #: wrapper of ``pattern`` (most files hold none)
        self.anywhere = patterns.compiled(self.source)

    @property
    def pattern(self) -> Regex:
        """The comment's pattern with its groups and positions, for the comments found."""
        return patterns.regex(self.source)


class Suppressions:
    def __init__(self, sources: dict[str, bytes], stopped: set[str], syntax: Syntax) -> None:
        self.sources = sources
        self.stopped = stopped
        self.syntax = syntax
        self._texts: dict[str, SourceText | None] = {}
        #: where each rule id of a comment stands: (file, line, column) → its text offsets
        self.verbatim: dict[tuple[str, int, int], tuple[int, int]] = {}
        self.records: list[Record] = []
        for file in sources:
            if file not in stopped:
                self.records += self._scan(file)

    def text(self, file: str) -> SourceText | None:
        if file not in self._texts:
            data = self.sources.get(file)
            self._texts[file] = SourceText.decode(data) if data is not None and file not in self.stopped else None
        return self._texts[file]

    def _scan(self, file: str) -> list[Record]:
        source = self.text(file)
        if source is None or not self.syntax.anywhere.matches(source.text):
            return []  # the common case: no suppression in the file, nothing more to read
        pattern = self.syntax.pattern
        found: list[Record] = []
        for match in pattern.finditer(source.text):
            start = match.start()
            if not source.is_comment(start):
                continue
            line, column = source.position(start)
            # matched again within its line (a slice: RE2 would encode the whole text again)
            comment = pattern.match(source.text[start : source.line_ends[line - 1]])
            if comment is None:
                continue
            alone = not source.line(line)[: column - 1].strip()
            found.append(self._record(file, source, comment, start, line, column, alone))
        _aim(found)
        return found

    def _record(
        self, file: str, source: SourceText, comment: Any, start: int, line: int, column: int, alone: bool
    ) -> Record:
        """The suppression ``comment`` matched, whose text starts at offset ``start``."""
        ids: list[LocatedStr] = []
        if comment.group("ids") is not None:
            # (RE2's match objects give positions by group number only)
            offset = start + comment.start(self.syntax.pattern.groupindex["ids"])
            for part in comment.group("ids").split(self.syntax.separator.strip()):
                name = part.strip()
                if name:
                    start = offset + part.index(name)
                    position = source.position(start)
                    ids.append(LocatedStr(name, (file, *position)))
                    self.verbatim[(file, *position)] = (start, start + len(name))
                offset += len(part) + len(self.syntax.separator.strip())
        reason = (comment.group("reason") or "").strip()
        return {
            "at": LocatedStr(comment.group().rstrip(), (file, line, column)),
            "file": file,
            "line": line,
            "ids": ids,
            "reason": reason,
            "alone": alone,
        }

    def settle(self, diagnostics: list[Diagnostic]) -> tuple[list[Diagnostic], dict[str, Any]]:
        """Drop the diagnostics a suppression names; the ids that silenced nothing are the late
        fact ``unused_suppressions``."""
        named: dict[tuple[str, int, str], list[LocatedStr]] = {}
        for record in self.records:
            for rule_id in record["ids"]:
                named.setdefault((record["file"], record["line"], str(rule_id)), []).append(rule_id)
        used: set[int] = set()
        kept = []
        for diagnostic in diagnostics:
            silencing = named.get((diagnostic.file, diagnostic.line, diagnostic.rule)) if named else None
            if silencing:
                used.update(id(rule_id) for rule_id in silencing)
            else:
                kept.append(diagnostic)
        unused = [
            {"id": rule_id, "file": record["file"], "line": record["line"], "suppression": record}
            for record in self.records
            for rule_id in record["ids"]
            if id(rule_id) not in used
        ]
        return kept, {"unused_suppressions": unused}

    def edit(self, diagnostic: Diagnostic) -> TextEdit | None:
        """The edit that silences ``diagnostic``, or None when its file cannot take one."""
        from .edit.text_edit import TextEdit, apply_edits, same_document

        source = self.text(diagnostic.file)
        if source is None or not 0 < diagnostic.line <= source.line_count:
            return None
        file, line, rule = diagnostic.file, diagnostic.line, diagnostic.rule
        for record in self.records:
            if record["file"] == file and record["line"] == line and record["ids"]:
                if rule in record["ids"]:
                    return None  # named already
                last = record["ids"][-1]
                end = self.verbatim[last.loc][1]
                candidates = [TextEdit(file, source, end, end, self.syntax.separator + rule)]
                break
        else:
            comment = self.syntax.comment.replace("{ids}", rule)
            candidates = []
            start, text = source.line_starts[line - 1], source.line(line)
            if source.comment_on(line) is None:
                end = start + len(text.rstrip(" \t"))
                candidates.append(TextEdit(file, source, end, end, "  " + comment))
            indent = text[: len(text) - len(text.lstrip(" "))]
            candidates.append(TextEdit(file, source, start, start, indent + comment + source.line_break()))
        for edit in candidates:
            new_text = apply_edits(source.text, [edit])
            if same_document(source.text, new_text) and self._silences(file, new_text, edit, diagnostic):
                return edit
        return None

    def _silences(self, file: str, new_text: str, edit: TextEdit, diagnostic: Diagnostic) -> bool:
        """Whether the edited text holds a suppression of the diagnostic's rule for its line."""
        moved = diagnostic.line + (1 if edit.new_text.endswith(("\n", "\r")) else 0)
        source = self.text(file)
        assert source is not None
        again = Suppressions({file: source.encode(new_text)}, set(), self.syntax)
        return any(record["line"] == moved and diagnostic.rule in record["ids"] for record in again.records)


def _aim(records: list[Record]) -> None:
    """A comment alone on its line silences the next line that is not such a comment itself."""
    alone_lines = {record["line"] for record in records if record["alone"]}
    for record in records:
        if record["alone"]:
            target = record["line"] + 1
            while target in alone_lines:
                target += 1
            record["line"] = target
