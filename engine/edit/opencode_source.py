"""Reading and rewriting an opencode custom tool file, for ``beeuni tools migrate``.

opencode loads every ``.ts``/``.js`` file of its tool folders and registers each export as a
tool: ``export default tool({ description, args, execute })`` under the file's name, a named
export ``export const add = tool({...})`` as ``<file>_add``; ``tool()`` is the identity and
``args`` a zod shape. A served tool is a plain object instead, with ``parameters`` (JSON
Schema). The rewrite is made on the file's own text, at the spans a TypeScript parser
(tree-sitter) reports, so that everything but the export's head and its ``args`` stays byte for
byte: ``execute``, helpers, comments, line ends.

What the rewrite knows of the runtime (which names read the environment, which packages hold
zod) comes from the rules; this module only finds and splices.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

#: statements that export nothing at run time (opencode never sees them)
_TYPE_ONLY = {"type_alias_declaration", "interface_declaration"}
_FUNCTIONS = {"arrow_function", "function_expression", "function"}
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass
class ToolExport:
    """One export that may be a tool definition, with the spans a rewrite needs (byte offsets)."""

    export: str  # "default", or the export's name
    statement: tuple[int, int]  # the whole export statement
    head_end: int | None  # where the object literal starts: the statement's text before it is the head
    obj: tuple[int, int] | None  # the object literal `{ description, args, execute }`; None: no literal
    call_end: int | None  # for `tool({...})`: where the call ends ([obj end, call_end) is dropped)
    args: tuple[int, int] | None  # the `args: {...}` property
    context_fields: list[str] = field(default_factory=list)  # what execute reads of its context
    context_passed: list[str] = field(default_factory=list)  # where it hands its context on whole


@dataclass
class SourceFile:
    """A file's exports, or why it cannot be read as a tool file (``problem``, ``detail``)."""

    exports: list[ToolExport] = field(default_factory=list)
    env_reads: list[str] = field(default_factory=list)
    env_whole: list[str] = field(default_factory=list)  # where the environment is read as a whole
    #: whether it builds opencode's `{ output, ... }` result anywhere (an object with `output`)
    builds_output: bool = False
    problem: str | None = None  # "parse" or "export-form"
    detail: str = ""


def _parse(source: bytes) -> Tree:
    import tree_sitter
    import tree_sitter_typescript

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_typescript.language_typescript())).parse(source)


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _where(source: bytes, offset: int) -> str:
    """``line:column`` (1-based, columns in characters) of a byte offset."""
    line_start = max(source.rfind(b"\n", 0, offset), source.rfind(b"\r", 0, offset)) + 1
    line = len(_LINE_END.findall(source[:line_start])) + 1
    return f"{line}:{len(source[line_start:offset].decode('utf-8', 'replace')) + 1}"


def read_tool_file(source: bytes, env_readers: list[str]) -> SourceFile:
    """The file's exports and what it reads of the environment (``env_readers``: the objects
    that hold it, like ``process.env``)."""
    tree = _parse(source)
    found = SourceFile()
    if tree.root_node.has_error:
        broken = _first_error(tree.root_node)
        found.problem, found.detail = "parse", _where(source, broken.start_byte if broken else 0)
        return found
    for statement in tree.root_node.named_children:
        if statement.type != "export_statement":
            continue
        exported = _export_of(source, statement)
        if exported is None:
            if _is_type_only(statement):
                continue
            first_line = _text(source, statement).splitlines()[0].strip()
            found.problem, found.detail = "export-form", f"{_where(source, statement.start_byte)} `{first_line}`"
            return found
        found.exports.append(exported)
    found.env_reads, found.env_whole = _env_reads(source, tree.root_node, env_readers)
    found.builds_output = any(
        (node.type == "pair" and _key(source, node) == "output")
        or (node.type == "shorthand_property_identifier" and _text(source, node) == "output")
        or (node.type == "type_identifier" and _text(source, node) == "ToolResult")
        for node in _walk(tree.root_node)
    )
    return found


def _key(source: bytes, pair: Node) -> str:
    key = pair.child_by_field_name("key")
    return _text(source, key).strip("'\"") if key is not None else ""


def _first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            found = _first_error(child)
            if found is not None:
                return found
    return None


def _is_type_only(statement: Node) -> bool:
    declaration = statement.child_by_field_name("declaration")
    return declaration is not None and declaration.type in _TYPE_ONLY


def _export_of(source: bytes, statement: Node) -> ToolExport | None:
    """The export of ``export default <value>`` or ``export const name = <value>``, with the
    spans of a tool's object literal when <value> is one or a call with one (``tool({...})``);
    None for any other form of export."""
    value = statement.child_by_field_name("value")
    if value is not None:
        name = "default"
    else:
        declaration = statement.child_by_field_name("declaration")
        if declaration is None or declaration.type != "lexical_declaration":
            return None
        declarators = [child for child in declaration.named_children if child.type == "variable_declarator"]
        if len(declarators) != 1:
            return None
        name_node, value = declarators[0].child_by_field_name("name"), declarators[0].child_by_field_name("value")
        if name_node is None or name_node.type != "identifier" or value is None:
            return None
        name = _text(source, name_node)
    no_literal = ToolExport(name, (statement.start_byte, statement.end_byte), None, None, None, None)
    call_end = None
    if value.type == "call_expression":
        arguments = value.child_by_field_name("arguments")
        if arguments is None or [child.type for child in arguments.named_children] != ["object"]:
            return no_literal
        call_end = value.end_byte
        value = arguments.named_children[0]
    if value.type != "object":
        return no_literal
    args, execute = None, None
    for member in value.named_children:
        key = member.child_by_field_name("key") if member.type == "pair" else member.child_by_field_name("name")
        key_text = _text(source, key).strip("'\"") if key is not None else ""
        if member.type == "pair" and key_text == "args":
            args = (member.start_byte, member.end_byte)
        if key_text == "execute":
            execute = member if member.type == "method_definition" else member.child_by_field_name("value")
    exported = ToolExport(name, (statement.start_byte, statement.end_byte), value.start_byte,
                          (value.start_byte, value.end_byte), call_end, args)  # fmt: skip
    if execute is not None:
        exported.context_fields, exported.context_passed = _context_fields(source, execute)
    return exported


def _context_fields(source: bytes, function: Node) -> tuple[list[str], list[str]]:
    """The fields ``execute(args, context)`` reads of its second parameter (``context.abort``, or
    destructured ``{ abort }``), and where it uses the context otherwise, as a whole (handed to
    a helper, kept, spread): ``line:column `text```."""
    if function.type not in _FUNCTIONS and function.type != "method_definition":
        return [], []
    parameters = function.child_by_field_name("parameters")
    if parameters is None or len(parameters.named_children) < 2:
        return [], []
    pattern = parameters.named_children[1].child_by_field_name("pattern") or parameters.named_children[1]
    if pattern.type == "object_pattern":
        rests = [part for part in pattern.named_children if part.type == "rest_pattern"]
        passed = [f"{_where(source, part.start_byte)} `{_text(source, part)}`" for part in rests]
        return sorted(set(_pattern_keys(source, pattern))), passed
    if pattern.type != "identifier":
        return [], []
    name = _text(source, pattern)
    body = function.child_by_field_name("body")
    fields = {_property(source, node) for node in _members_of(source, body, {name})}
    fields |= set(_destructured(source, body, {name}))
    return sorted(fields), _whole_uses(source, body, {name})


def _whole_uses(source: bytes, root: Node | None, objects: set[str]) -> list[str]:
    """Where one of ``objects`` (an identifier or a dotted name) is used other than by a field
    (``x.f``, ``x["f"]``) or taken apart (``const { f } = x``): ``line:column `line's text```."""
    found = []
    for node in _walk(root):
        if node.type not in ("identifier", "member_expression") or _text(source, node) not in objects:
            continue
        parent = node.parent
        field_read = parent is not None and parent.child_by_field_name("object") == node
        if field_read and parent is not None and (parent.type == "member_expression" or _static_index(parent)):
            continue
        if parent is not None and parent.type == "variable_declarator" and parent.child_by_field_name("name") == node:
            continue  # the alias itself, declared
        if parent is not None and parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
            target = parent.child_by_field_name("name")
            if target is not None and target.type in ("object_pattern", "identifier"):
                continue  # taken apart or aliased: its reads are found by name
        line = _line_text(source, node.start_byte)
        found.append(f"{_where(source, node.start_byte)} `{line}`")
    return found


def _static_index(subscript: Node) -> bool:
    index = subscript.child_by_field_name("index")
    return index is not None and index.type == "string"


def _line_text(source: bytes, offset: int) -> str:
    start = max(source.rfind(b"\n", 0, offset), source.rfind(b"\r", 0, offset)) + 1
    end = _LINE_END.search(source, offset)
    text = source[start : end.start() if end else len(source)].decode("utf-8", "replace").strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _pattern_keys(source: bytes, pattern: Node) -> list[str]:
    """The keys an object pattern takes: ``{ a, b: c }`` → a, b."""
    keys = []
    for part in pattern.named_children:
        key = part if part.type == "shorthand_property_identifier_pattern" else part.child_by_field_name("key")
        if key is not None:
            keys.append(_text(source, key))
    return keys


def _property(source: bytes, member: Node) -> str:
    found = member.child_by_field_name("property")
    return _text(source, found) if found is not None else ""


def _destructured(source: bytes, root: Node | None, objects: set[str]) -> list[str]:
    """The names taken apart from one of ``objects``: ``const { a, b: c } = <object>``."""
    names = []
    for node in _walk(root):
        if node.type != "variable_declarator":
            continue
        pattern, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if pattern is None or value is None or pattern.type != "object_pattern" or _text(source, value) not in objects:
            continue
        names += _pattern_keys(source, pattern)
    return names


def _walk(node: Node | None) -> list[Node]:
    found, pending = [], [node] if node is not None else []
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(reversed(current.named_children))
    return found


def _members_of(source: bytes, root: Node | None, objects: set[str]) -> list[Node]:
    """Every ``<object>.<property>`` under ``root`` whose object's text is one of ``objects``."""
    members = []
    for node in _walk(root):
        if node.type == "member_expression":
            obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
            if obj is not None and prop is not None and _text(source, obj) in objects:
                members.append(node)
    return members


def _env_reads(source: bytes, root: Node, readers: list[str]) -> tuple[list[str], list[str]]:
    """The variable names read from the environment (``process.env.KEY``,
    ``process.env["KEY"]``, ``const { KEY } = process.env``), through a name that holds it
    (``const env = process.env``, ``const { env } = process``) too, and where it is read as a
    whole (``Object.keys(process.env)``, ``process.env[name]``)."""
    objects = set(readers)
    for _ in range(3):  # an alias of an alias
        before = len(objects)
        for node in _walk(root):
            if node.type != "variable_declarator":
                continue
            target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if target is None or value is None:
                continue
            if target.type == "identifier" and _text(source, value) in objects:
                objects.add(_text(source, target))
            elif target.type == "object_pattern":
                for part in target.named_children:
                    key = (
                        part
                        if part.type == "shorthand_property_identifier_pattern"
                        else part.child_by_field_name("key")
                    )
                    bound = (
                        part
                        if part.type == "shorthand_property_identifier_pattern"
                        else part.child_by_field_name("value")
                    )
                    if (
                        key is not None
                        and bound is not None
                        and bound.type in ("identifier", "shorthand_property_identifier_pattern")
                        and f"{_text(source, value)}.{_text(source, key)}" in objects
                    ):
                        objects.add(_text(source, bound))
        if len(objects) == before:
            break
    names = {_property(source, node) for node in _members_of(source, root, objects)}
    for node in _walk(root):
        if node.type == "subscript_expression":
            obj, index = node.child_by_field_name("object"), node.child_by_field_name("index")
            if obj is not None and index is not None and index.type == "string" and _text(source, obj) in objects:
                names.add(_text(source, index)[1:-1])
    names.update(_destructured(source, root, objects))
    return sorted(names), _whole_uses(source, root, objects)


# The rewrite -------------------------------------------------------------------------------


@dataclass
class Converted:
    """A served module's text, and what in it is left to the user: where it still uses a
    harness package (None: nowhere), every import it keeps (specifier, and the repo-relative
    file of a relative one) and the harness's types it names, whose import went."""

    text: bytes
    harness: str | None
    imports: list[tuple[str, str | None]]
    types: list[str]


def converted_module(
    source: bytes,
    found: SourceFile,
    keep: str,
    parameters: object,
    moved: tuple[str, str],
    packages: tuple[list[str], list[str]],
    wrapper: tuple[str, str],
) -> Converted:
    """The served module for the export ``keep`` of a tool file: that export is the default
    export, a plain object with ``parameters`` (JSON Schema) in place of ``args``; the file's
    other tool exports are left out; relative imports follow the move from folder ``moved[0]``
    to ``moved[1]``; a constant that held a schema for the args and an import of a zod package
    (``packages[0]``) that nothing uses any more go. A file that builds opencode's ``{ output }``
    result gets the ``wrapper`` function (name, source) around its export. Everything else stays
    byte for byte. ``packages[1]``: the harness's packages, which the module must not import."""
    first_end = _LINE_END.search(source)
    eol = first_end.group() if first_end else b"\n"
    edits: list[tuple[int, int, bytes]] = []
    wrap = found.builds_output
    for exported in found.exports:
        if exported.export != keep:
            edits.append((exported.statement[0], _line_after(source, exported.statement[1]), b""))
            continue
        assert exported.obj is not None and exported.head_end is not None, "a tool without its literal is not converted"
        head = b"export default " + (wrapper[0].encode() + b"(" if wrap else b"")
        edits.append((exported.statement[0], exported.head_end, head))
        edits.append((exported.obj[1], exported.call_end or exported.obj[1], b")" if wrap else b""))
        if exported.args is not None:
            start, end = exported.args
            schema = object_literal(parameters, _indent_of(source, start), eol.decode())
            edits.append((start, end, f"parameters: {schema}".encode()))
    edits += _moved_imports(source, _parse(source).root_node, *moved)
    text = _apply(source, edits)
    zod, harness = packages
    text = _without_schema_constants(text, zod)
    text = _apply(text, _unused_imports(text, zod))
    types_only, types = _type_only_imports(text, harness)
    text = _apply(text, types_only)
    if wrap:
        text = text.rstrip(b"\r\n") + eol + wrapper[1].encode().replace(b"\n", eol)
    return Converted(text, _harness_use(text, harness), _imports(text, moved[1]), types)


def _import_names(source: bytes, root: Node, packages: list[str]) -> dict[str, Node]:
    """The names the file's imports of ``packages`` bind, each with its import statement."""
    bound = {}
    for statement in root.named_children:
        specifier = statement.child_by_field_name("source")
        if statement.type != "import_statement" or specifier is None or _text(source, specifier)[1:-1] not in packages:
            continue
        for node in _walk(statement):
            if node.type == "identifier":
                bound[_text(source, node)] = statement
    return bound


def _without_schema_constants(source: bytes, packages: list[str]) -> bytes:
    """The text without the top-level constants built from a zod package's names (``const
    schema = tool.schema``, ``const id = z.string().describe(...)``) that nothing uses any
    more: they held the args' schemas, which are JSON Schema now."""
    while True:
        root = _parse(source).root_node
        tainted = set(_import_names(source, root, packages))
        used = Counter(
            _text(source, node) for node in _walk(root) if node.type in ("identifier", "shorthand_property_identifier")
        )
        constants = []
        for statement in root.named_children:
            if statement.type != "lexical_declaration":
                continue
            declarators = [child for child in statement.named_children if child.type == "variable_declarator"]
            names = [d.child_by_field_name("name") for d in declarators]
            values = [d.child_by_field_name("value") for d in declarators]
            if any(n is None or n.type != "identifier" for n in names) or any(v is None for v in values):
                continue
            refers = {
                _text(source, node) for v in values if v is not None for node in _walk(v) if node.type == "identifier"
            }
            constants.append((statement, [_text(source, n) for n in names if n is not None], refers))
        for _ in constants:  # what a schema constant is built from is schema too
            tainted |= {name for _statement, names, refers in constants if refers & tainted for name in names}
        dead = next((statement for statement, names, refers in constants
                     if refers & tainted and all(used[name] == 1 for name in names)), None)  # fmt: skip
        if dead is None:
            return source
        end = _line_after(source, dead.end_byte)
        before = source[: dead.start_byte]
        blank = _LINE_END.match(source, end)
        if blank is not None and (not before.strip() or before.endswith((b"\n\n", b"\r\n\r\n", b"\r\r"))):
            end = blank.end()  # no two blank lines where the constant stood between them
        source = _apply(source, [(dead.start_byte, end, b"")])


def _harness_use(source: bytes, packages: list[str]) -> str | None:
    """Where the module still imports one of ``packages``: the first name of it the module uses
    and the line that uses it, or the import itself."""
    root = _parse(source).root_node
    bound = _import_names(source, root, packages)
    for node in _walk(root):
        if node.type in ("identifier", "type_identifier") and _text(source, node) in bound:
            statement = bound[_text(source, node)]
            if not (statement.start_byte <= node.start_byte < statement.end_byte):
                return f"`{_text(source, node)}` in `{_line_text(source, node.start_byte)}`"
    for statement in _imports_of(source, root, packages):
        return f"`{_line_text(source, statement.start_byte)}`"
    return None


def _imports(source: bytes, folder: str) -> list[tuple[str, str | None]]:
    """Every specifier the module imports (statically, or by ``import(...)``/``require(...)`` of
    a string), with the repo-relative path of a relative one from the module's ``folder``."""
    found: list[tuple[str, str | None]] = []
    for node in _walk(_parse(source).root_node):
        specifier = None
        if node.type in ("import_statement", "export_statement"):
            specifier = node.child_by_field_name("source")
        elif node.type == "call_expression":
            function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if function is not None and _text(source, function) in ("import", "require") and arguments is not None:
                strings = [child for child in arguments.named_children if child.type == "string"]
                specifier = strings[0] if len(arguments.named_children) == 1 and strings else None
        if specifier is None:
            continue
        name = _text(source, specifier)[1:-1]
        path = os.path.normpath(os.path.join(folder, name)) if name.startswith(("./", "../")) else None
        if (name, path) not in found:
            found.append((name, path))
    return found


def object_literal(value: object, indent: str, eol: str) -> str:
    """``value`` (JSON data) as a JavaScript literal: a mapping one entry a line, keys unquoted
    where they are identifiers, a list of plain values on one line."""
    if isinstance(value, dict) and value:
        inner = indent + "  "
        entries = [
            f"{inner}{key if _is_identifier(key) else json.dumps(key, ensure_ascii=False)}: "
            f"{object_literal(item, inner, eol)}"
            for key, item in value.items()
        ]
        return "{" + eol + ("," + eol).join(entries) + "," + eol + indent + "}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        inner = indent + "  "
        items = [inner + object_literal(item, inner, eol) for item in value]
        return "[" + eol + ("," + eol).join(items) + "," + eol + indent + "]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _is_identifier(key: str) -> bool:
    """Whether ``key`` can stand unquoted as a JavaScript property name (ASCII, `$` allowed)."""
    return key.isascii() and key.replace("$", "_").isidentifier()


def _apply(source: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    for start, end, replacement in sorted(edits, reverse=True):
        source = source[:start] + replacement + source[end:]
    return source


def _line_after(source: bytes, offset: int) -> int:
    """Past the rest of the line at ``offset`` when only blanks (and a `;`) stand there."""
    found = _LINE_END.search(source, offset)
    if found is None:
        return len(source)
    return found.end() if not source[offset : found.start()].strip(b" \t;") else offset


def _indent_of(source: bytes, offset: int) -> str:
    line_start = max(source.rfind(b"\n", 0, offset), source.rfind(b"\r", 0, offset)) + 1
    prefix = source[line_start:offset].decode("utf-8", "replace")
    return prefix[: len(prefix) - len(prefix.lstrip(" \t"))]


def _moved_imports(source: bytes, root: Node, old_folder: str, new_folder: str) -> list[tuple[int, int, bytes]]:
    """Relative import paths (``./lib``, ``../x``) rewritten for the module's new folder."""
    edits = []
    for statement in root.named_children:
        if statement.type not in ("import_statement", "export_statement"):
            continue
        specifier = statement.child_by_field_name("source")
        if specifier is None:
            continue
        path = _text(source, specifier)[1:-1]
        if not path.startswith(("./", "../")):
            continue
        moved = os.path.relpath(os.path.normpath(os.path.join(old_folder, path)), new_folder)
        moved = moved if moved.startswith("../") else "./" + moved
        quote = _text(source, specifier)[0]
        edits.append((specifier.start_byte, specifier.end_byte, f"{quote}{moved}{quote}".encode()))
    return edits


def _unused_imports(source: bytes, packages: list[str]) -> list[tuple[int, int, bytes]]:
    """The imports of ``packages`` none of whose names the rest of the file uses."""
    root = _parse(source).root_node
    used = Counter(_text(source, node) for node in _walk(root) if node.type in ("identifier", "type_identifier"))
    edits = []
    for statement in _imports_of(source, root, packages):
        names = [_text(source, node) for node in _walk(statement) if node.type == "identifier"]
        if all(used[name] <= names.count(name) for name in names):
            edits.append(_removal(source, statement))
    return edits


def _type_only_imports(source: bytes, packages: list[str]) -> tuple[list[tuple[int, int, bytes]], list[str]]:
    """The imports of ``packages`` whose names the rest of the file uses only as types
    (``context: ToolContext``): Bun drops types, so they can go; and the types so named."""
    root = _parse(source).root_node
    values = Counter(
        _text(source, node) for node in _walk(root) if node.type in ("identifier", "shorthand_property_identifier")
    )
    types = Counter(_text(source, node) for node in _walk(root) if node.type == "type_identifier")
    edits, named = [], []
    for statement in _imports_of(source, root, packages):
        names = [_text(source, node) for node in _walk(statement) if node.type == "identifier"]
        if all(values[name] <= names.count(name) for name in names):
            edits.append(_removal(source, statement))
            named += [name for name in names if types[name] > 0]
    return edits, sorted(set(named))


def _imports_of(source: bytes, root: Node, packages: list[str]) -> list[Node]:
    found = []
    for statement in root.named_children:
        specifier = statement.child_by_field_name("source")
        if (
            statement.type == "import_statement"
            and specifier is not None
            and _text(source, specifier)[1:-1] in packages
        ):
            found.append(statement)
    return found


def _removal(source: bytes, statement: Node) -> tuple[int, int, bytes]:
    """The edit that takes a statement out with the rest of its line; at the top of the file,
    with the blank lines after it."""
    end = _line_after(source, statement.end_byte)
    if not source[: statement.start_byte].strip():
        while (blank := _LINE_END.match(source, end)) is not None:
            end = blank.end()
    return statement.start_byte, end, b""
