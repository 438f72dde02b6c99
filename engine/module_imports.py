"""What a tool module imports, read statically with the TypeScript parser (tree-sitter, as
``opencode_source.py`` reads opencode's tool files): no code of the module runs.

An import is a string literal a module loader resolves: ``import … from "x"``, ``import "x"``,
``export … from "x"`` and ``import("x")`` with a literal argument. Each comes with its place (the
literal's first character, 1-based line and column in characters) and the text of its statement
(without the ``;`` that ends it, so that a fix can write it before another).
A module's ``parameters`` (the property of its default export) comes as written, so that a fix
can print its schema. A file that mentions neither ``import`` nor ``from`` has none and is not
parsed (parsing costs the parser's import, a few milliseconds).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

_QUERY = """
(import_statement source: (string) @source)
(export_statement source: (string) @source)
(call_expression function: (import) arguments: (arguments . (string) @source))
"""


#: what holds an import's literal: its text is shown in a fix
_STATEMENTS = ("import_statement", "export_statement", "call_expression")


class Import:
    __slots__ = ("column", "line", "specifier", "statement")

    def __init__(self, specifier: str, line: int, column: int, statement: str) -> None:
        self.specifier = specifier
        self.line = line
        self.column = column
        self.statement = statement


class ModuleSource:
    __slots__ = ("imports", "parameters")

    def __init__(self, imports: list[Import], parameters: str | None) -> None:
        self.imports = imports
        self.parameters = parameters


_PARSER: list[tuple[Parser, Query]] = []  # made once, on first use


def _parser() -> tuple[Parser, Query]:
    if not _PARSER:
        import tree_sitter
        import tree_sitter_typescript

        language = tree_sitter.Language(tree_sitter_typescript.language_typescript())
        _PARSER.append((tree_sitter.Parser(language), tree_sitter.Query(language, _QUERY)))
    return _PARSER[0]


def read_module(source: bytes) -> ModuleSource:
    if b"import" not in source and b"from" not in source:
        return ModuleSource([], None)
    from tree_sitter import QueryCursor

    parser, query = _parser()
    root = parser.parse(source).root_node
    found = []
    for literal in QueryCursor(query).captures(root).get("source", []):
        text = source[literal.start_byte + 1 : literal.end_byte - 1].decode("utf-8", "replace")
        row, byte_column = literal.start_point
        line_start = literal.start_byte - byte_column
        column = len(source[line_start : literal.start_byte].decode("utf-8", "replace")) + 2  # inside the quote
        statement = literal.parent
        while statement is not None and statement.type not in _STATEMENTS:
            statement = statement.parent
        shown = _text(source, statement if statement is not None else literal).rstrip().removesuffix(";")
        found.append(Import(text, row + 1, column, shown))
    found.sort(key=lambda item: (item.line, item.column))
    return ModuleSource(found, _parameters(source, root))


def _parameters(source: bytes, root: Node) -> str | None:
    """The text of ``parameters`` in ``export default { … }``, if it is written there."""
    for statement in root.children:
        if statement.type != "export_statement" or not any(child.type == "default" for child in statement.children):
            continue
        value = statement.child_by_field_name("value") or statement.named_children[-1]
        if value is None or value.type != "object":
            return None
        for pair in value.named_children:
            key = pair.child_by_field_name("key")
            if pair.type == "pair" and key is not None and _text(source, key).strip("'\"") == "parameters":
                found = pair.child_by_field_name("value")
                return None if found is None else _text(source, found)
    return None


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
