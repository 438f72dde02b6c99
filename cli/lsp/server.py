"""``beeuni lsp``: a language server on standard input and output (pygls).

- Diagnostics of ``beeuni.yaml`` and every file it imports, as you type: each change checks the
  project again with the open buffers laid over the repository, and publishes for every file of
  the project (an edit of an import can change the manifest's diagnostics). Ranges are the
  values' spans, the same positions ``beeuni validate`` prints.
- Diagnostics of ``.rules`` files: those of ``beeuni rules check``.
- Hover over a tool's name: what the rules' ``hover_tool`` says; over a diagnostic: its rule's doc.
- Completion from the rules' ``COMPLETIONS``: keys, tool names in agent lists and ``exclude``,
  ``beeuni:`` values.
- Code actions for a diagnostic: its rule's fix (the ``fix`` clause, as ``validate --fix`` makes
  it) and a suppression comment that silences it; titles from the rules' ``CODE_ACTION_TITLES``.

Positions: LSP counts UTF-16 code units, beeuni code points; converted on each line's text.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ...engine.lang.errors import RulesError
from ...engine.lang.values import text as plain_text
from ...engine.paths import MANIFEST_NAME
from .workspace import Analysis, Workspace, find_project
from .yaml_paths import place_at, scalar_at

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

    from ...engine.lang.errors import Problem
    from ...engine.yaml.spans import Sources

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
RULES_SUFFIX = ".rules"
COMPLETIONS, HOVER_TOOL, CODE_ACTION_TITLES = "COMPLETIONS", "hover_tool", "CODE_ACTION_TITLES"


def utf16_column(line: str | None, column: int) -> int:
    """A code-point column (0-based) of ``line`` in UTF-16 code units."""
    if line is None:
        return column
    return len(line[:column].encode("utf-16-le")) // 2 + max(0, column - len(line))


def code_point_column(line: str, column: int) -> int:
    """A UTF-16 column (0-based) of ``line`` in code points."""
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


class BeeuniServer(LanguageServer):
    def __init__(self, rules_dir: str | None, version: str) -> None:
        super().__init__("beeuni", version, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.projects = Workspace(rules_dir)
        #: project root → its last analysis; file → URIs it last published diagnostics for
        self.analyses: dict[str, Analysis] = {}
        self.published: dict[str, set[str]] = {}

    def buffers(self) -> dict[str, str]:
        """Each open document's text, by its real path."""
        paths = {to_fs_path(uri): document.source for uri, document in self.workspace.text_documents.items()}
        return {os.path.realpath(path): source for path, source in paths.items() if path is not None}

    def refresh(self, uri: str) -> None:
        """Check what the document belongs to, and publish the diagnostics of all its files."""
        path = to_fs_path(uri)
        if path is None:
            return
        if path.endswith(RULES_SUFFIX):
            self.refresh_rules(os.path.dirname(os.path.realpath(path)))
            return
        root = find_project(path)
        if root is None:
            return
        try:
            analysis = self.projects.analyse(root, self.buffers())
        except RulesError as err:
            self.show_rules_error(err)
            return
        self.analyses[analysis.root] = analysis
        diagnostics = {
            file: [lsp_diagnostic(d, analysis.sources) for d in found] for file, found in analysis.by_file.items()
        }
        self.publish(analysis.root, {os.path.join(analysis.root, file): found for file, found in diagnostics.items()})

    def show_rules_error(self, err: RulesError) -> None:
        """A mistake in the rules (``error[rules]`` at its position), shown to the user."""
        message = err.report().strip() or str(err)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def answering(self, request: Callable[[], T]) -> T | None:
        """A request's answer; none when the rules fail on the way (a value the rules read back
        has the wrong shape, say), which is shown as the rules error it is."""
        try:
            return request()
        except RulesError as err:
            self.show_rules_error(err)
            return None

    def refresh_rules(self, folder: str) -> None:
        problems = self.projects.check_rules(folder, self.buffers())
        lines = {path: self.lines_of(path) for path in problems}
        self.publish(
            "rules:" + folder,
            {path: [rules_diagnostic(p, lines[path]) for p in found] for path, found in problems.items()},
        )
        for root in list(self.analyses):  # the manifests follow the rules once they are saved
            self.refresh(from_fs_path(os.path.join(root, MANIFEST_NAME)) or "")

    def lines_of(self, path: str) -> list[str]:
        document = self.workspace.text_documents.get(from_fs_path(path) or "")
        if document is not None:
            source: str = document.source
            return source.split("\n")
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read().split("\n")
        except OSError:
            return []

    def publish(self, owner: str, by_path: dict[str, list[types.Diagnostic]]) -> None:
        """Publish per file; a file that had diagnostics from ``owner`` and has none now is cleared."""
        uris = {from_fs_path(path) or path: found for path, found in by_path.items()}
        for uri in self.published.get(owner, set()) - set(uris):
            uris[uri] = []
        for uri, found in uris.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=found))
        self.published[owner] = {uri for uri, found in uris.items() if found}

    def analysis_of(self, uri: str) -> tuple[Analysis, str] | None:
        """The last analysis of the document's project, and the document's repo-relative path."""
        path = to_fs_path(uri)
        root = find_project(path) if path is not None else None
        if path is None or root is None:
            return None
        analysis = self.analyses.get(os.path.realpath(root))
        if analysis is None:
            return None
        return analysis, os.path.relpath(os.path.realpath(path), analysis.root)

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        found = self.analysis_of(params.text_document.uri)
        if found is None:
            return None
        analysis, file = found
        document = self.workspace.get_text_document(params.text_document.uri)
        lines = document.source.split("\n")
        line = params.position.line
        column = code_point_column(lines[line], params.position.character) if line < len(lines) else 0
        parts = []
        docs = {rule["id"]: (rule["severity"], rule["doc"]) for rule in self.projects.program["rules"]}
        for d in analysis.by_file.get(file, []):
            span = analysis.sources.span(d.file, d.line, d.column)
            if (span.line - 1, span.column - 1) <= (line, column) <= (span.end_line - 1, span.end_column - 1):
                severity, doc = docs.get(d.rule, (d.severity, ""))
                parts.append(f"**{d.rule}** ({severity})\n\n{doc}")
        scalar = scalar_at(document.source, line, column)
        if scalar is not None and HOVER_TOOL in analysis.run.program["fns"]:
            shown = analysis.run.call(HOVER_TOOL, scalar)
            if shown:
                parts.insert(0, "\n\n".join(part for part in shown if part))
        if not parts:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts))
        )

    def complete(self, params: types.CompletionParams) -> types.CompletionList | None:
        found = self.analysis_of(params.text_document.uri)
        if found is None or COMPLETIONS not in found[0].run.program["lets"]:
            return None
        analysis = found[0]
        document = self.workspace.get_text_document(params.text_document.uri)
        lines = document.source.split("\n")
        line = params.position.line
        if line >= len(lines):
            return None
        column = code_point_column(lines[line], params.position.character)
        place = place_at(document.source, line, column)
        if place is None:
            return None
        replaced = types.Range(
            types.Position(line, utf16_column(lines[line], place.start)),
            types.Position(line, utf16_column(lines[line], place.end)),
        )
        items: dict[str, types.CompletionItem] = {}
        for entry in analysis.run.output(COMPLETIONS):
            if not path_matches([plain_text(p) for p in entry.get("path") or []], place.path):
                continue
            offered = [("values", types.CompletionItemKind.Value)]
            if place.as_key:
                offered.insert(0, ("keys", types.CompletionItemKind.Property))
            for field, kind in offered:
                for value in entry.get(field) or []:
                    label = plain_text(value)
                    items.setdefault(
                        label, types.CompletionItem(label, kind=kind, text_edit=types.TextEdit(replaced, label))
                    )
        return types.CompletionList(is_incomplete=False, items=list(items.values()))

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        found = self.analysis_of(params.text_document.uri)
        if found is None or CODE_ACTION_TITLES not in found[0].run.program["lets"]:
            return None
        analysis, file = found
        titles = analysis.run.output(CODE_ACTION_TITLES)  # its shape checked: only the blanks filled in here
        wanted = params.range
        actions = []
        for d in analysis.by_file.get(file, []):
            diagnostic = lsp_diagnostic(d, analysis.sources)
            if not _overlaps(diagnostic.range, wanted):
                continue
            fills = {"rule": d.rule}
            if d.fix is not None:
                fills["replacement"] = d.fix.new_text
                actions.append(self.action(analysis, titles["fix"].format_map(fills), d.fix, diagnostic, True))
            suppression = analysis.run.suppression_edit(d)
            if suppression is not None:
                actions.append(
                    self.action(analysis, titles["suppress"].format_map(fills), suppression, diagnostic, False)
                )
        return actions

    def action(
        self, analysis: Analysis, title: str, edit: Any, diagnostic: types.Diagnostic, preferred: bool
    ) -> types.CodeAction:
        """A quick fix that makes ``edit`` (a ``TextEdit`` of the engine)."""
        where = lsp_range(analysis.sources, edit.file, edit.line, edit.column, edit.end_line, edit.end_column)
        change = types.TextEdit(range=where, new_text=edit.new_text)
        uri = from_fs_path(os.path.join(analysis.root, edit.file)) or edit.file
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=preferred,
            edit=types.WorkspaceEdit(changes={uri: [change]}),
        )


def _overlaps(one: types.Range, other: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(one.start) <= key(other.end) and key(other.start) <= key(one.end)


def path_matches(pattern: Sequence[str], path: Sequence[str]) -> bool:
    return len(pattern) == len(path) and all(p in ("*", step) for p, step in zip(pattern, path, strict=True))


def lsp_range(sources: Sources, file: str, line: int, column: int, end_line: int, end_column: int) -> types.Range:
    """A range of the engine (1-based lines and columns, code points) as LSP counts (0-based, UTF-16)."""
    return types.Range(
        types.Position(line - 1, utf16_column(sources.line(file, line), column - 1)),
        types.Position(end_line - 1, utf16_column(sources.line(file, end_line), end_column - 1)),
    )


def lsp_diagnostic(d: Any, sources: Sources) -> types.Diagnostic:
    span = sources.span(d.file, d.line, d.column)
    return types.Diagnostic(
        range=lsp_range(sources, d.file, span.line, span.column, span.end_line, span.end_column),
        message=d.message,
        severity=SEVERITIES.get(d.severity, types.DiagnosticSeverity.Information),
        code=d.rule,
        source="beeuni",
    )


def rules_diagnostic(problem: Problem, lines: list[str]) -> types.Diagnostic:
    line = problem.line - 1
    text = lines[line] if 0 <= line < len(lines) else None
    start = utf16_column(text, problem.column - 1)
    return types.Diagnostic(
        range=types.Range(types.Position(line, start), types.Position(line, start + 1)),
        message=problem.message,
        severity=SEVERITIES.get(problem.severity, types.DiagnosticSeverity.Error),
        code="rules",
        source="beeuni",
    )


def build_server(rules_dir: str | None, version: str) -> BeeuniServer:
    server = BeeuniServer(rules_dir, version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BeeuniServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    def disk_may_have_changed(
        ls: BeeuniServer,
        params: types.DidOpenTextDocumentParams | types.DidSaveTextDocumentParams | types.DidCloseTextDocumentParams,
    ) -> None:
        """Opening, saving or closing a file: the folders are looked at again (a closed file is
        read from the disk again)."""
        ls.projects.forget_disk()
        ls.refresh(params.text_document.uri)

    for method in (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_SAVE, types.TEXT_DOCUMENT_DID_CLOSE):
        server.feature(method)(disk_may_have_changed)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(ls: BeeuniServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.projects.forget_disk()
        for root in list(ls.analyses):
            ls.refresh(from_fs_path(os.path.join(root, MANIFEST_NAME)) or "")

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: BeeuniServer, params: types.HoverParams) -> types.Hover | None:
        return ls.answering(lambda: ls.hover(params))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", "[", ",", " ", "-"])
    )
    def completion(ls: BeeuniServer, params: types.CompletionParams) -> types.CompletionList | None:
        return ls.answering(lambda: ls.complete(params))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_action(ls: BeeuniServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return ls.answering(lambda: ls.code_actions(params))

    return server


#: the cyclic garbage collector's thresholds while serving. A command runs without the collector
#: (cli/main.py); the server must not: each check of a 500-tool manifest leaves cycles behind,
#: and without it the server grew by 250 MB per 100 edits. At Python's default (700 allocations)
#: the collector walks each check's values many times (an edit's p99 95 ms); with a rare full
#: collection (every 100th of the middle one) the cycles piled up there, 140 KB an edit. These
#: keep an edit as fast as without the collector (p50 11 to 14 ms, `bench_lsp.py`) and the server
#: at some 150 MB over 1,000 edits.
GC_THRESHOLDS = (10_000, 10, 10)


def serve(rules_dir: str | None) -> int:
    import gc

    from ..shared import beeuni_version

    gc.enable()
    gc.set_threshold(*GC_THRESHOLDS)
    build_server(rules_dir, beeuni_version()).start_io()
    return 0
