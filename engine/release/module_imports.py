"""What a tool module imports, read statically with the TypeScript parser (tree-sitter, as
``edit/opencode_source.py`` reads opencode's tool files): no code of the module runs.

An import is a string literal a module loader resolves: ``import … from "x"``, ``import "x"``,
``export … from "x"`` and ``import("x")`` with a literal argument. Each comes with its place (the
literal's first character, 1-based line and column in characters). A file that mentions neither
``import`` nor ``from`` has none and is not parsed (parsing costs the parser's import, a few
milliseconds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser, Query

_QUERY = """
(import_statement source: (string) @source)
(export_statement source: (string) @source)
(call_expression function: (import) arguments: (arguments . (string) @source))
"""


class Import:
    __slots__ = ("column", "line", "specifier")

    def __init__(self, specifier: str, line: int, column: int) -> None:
        self.specifier = specifier
        self.line = line
        self.column = column


_PARSER: list[tuple[Parser, Query]] = []  # made once, on first use


def _parser() -> tuple[Parser, Query]:
    if not _PARSER:
        import tree_sitter
        import tree_sitter_typescript

        language = tree_sitter.Language(tree_sitter_typescript.language_typescript())
        _PARSER.append((tree_sitter.Parser(language), tree_sitter.Query(language, _QUERY)))
    return _PARSER[0]


def read_module(source: bytes) -> list[Import]:
    """The imports of a module's source, in the order they stand."""
    if b"import" not in source and b"from" not in source:
        return []
    from tree_sitter import QueryCursor

    parser, query = _parser()
    root = parser.parse(source).root_node
    found = []
    for literal in QueryCursor(query).captures(root).get("source", []):
        text = source[literal.start_byte + 1 : literal.end_byte - 1].decode("utf-8", "replace")
        row, byte_column = literal.start_point
        line_start = literal.start_byte - byte_column
        column = len(source[line_start : literal.start_byte].decode("utf-8", "replace")) + 2  # inside the quote
        found.append(Import(text, row + 1, column))
    found.sort(key=lambda item: (item.line, item.column))
    return found
