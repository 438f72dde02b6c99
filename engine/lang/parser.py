"""Rules source → syntax tree.

The tree is made of plain dicts, lists, strings and numbers (like jmespath's), so that it can be
cached with ``marshal`` and read back without importing Lark. Every node has ``t`` (its type) and,
where an error may point at it, ``pos`` (``[line, column]``). The node types are listed in
``docs/rules-language.md``; the code generator (``codegen.py``) consumes them.

This module is imported only when the rule cache is stale (never for the shipped rules, which
the wheel carries compiled). Lark's own grammar cache (``Lark(..., cache=FILE)``, in beeuni's
cache folder) spares building the parser tables each time: Lark checks the grammar's digest
stored in it, and ignores a file it cannot read.
"""

from __future__ import annotations

import os
import re
import textwrap
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..cache.folder import cache_dir
from . import hints
from .errors import Problem, RulesError

if TYPE_CHECKING:
    from collections.abc import Callable

Node = dict[str, Any]

GRAMMAR = Path(__file__).with_name("grammar.lark")

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
_TERMINAL_NAMES = {
    "NAME": "a name",
    "STRING": "a string",
    "FSTRING": 'a template f"..."',
    "NUMBER": "a number",
    "RULE_ID": "a rule id like `tools/name-format`",
    "COMP_OP": "a comparison",
    "SET_OP": "an operator",
    "$END": "the end of the file",
}


@cache
def _lark() -> Lark:
    return Lark(
        GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        start=["start", "expr"],
        propagate_positions=True,
        maybe_placeholders=True,
        cache=_grammar_cache() or False,
    )


def _grammar_cache() -> str | None:
    """The file of Lark's grammar cache, None when the cache folder cannot be written."""
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return os.path.join(folder, "lark-grammar.pickle") if os.access(folder, os.W_OK) else None


#: a line that starts a definition: where parsing resumes after a syntax error
_DEFINITION_START = re.compile(r"(let|fn|rule)\b")
_DEFINED_NAME = re.compile(r"(?:let|fn)\s+(\w+)")
_OPENING = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
_CLOSING = {"RPAR", "RSQB", "RBRACE"}


class ParsedFile:
    """A rules file's definitions, its syntax errors, and the names defined in the parts that did
    not parse (so that their uses elsewhere are not reported as unknown as well)."""

    def __init__(self) -> None:
        self.definitions: list[Node] = []
        self.problems: list[Problem] = []
        self.lost_names: set[str] = set()


def parse_rules(source: str, file: str) -> ParsedFile:
    """Parse one rules file. A syntax error does not end the reading: it is recorded, and parsing
    resumes at the next line that starts a definition (``let``, ``fn`` or ``rule`` in column 1)."""
    parsed = ParsedFile()
    lines = source.splitlines(keepends=True)
    _parse_lines(lines, 0, len(lines), file, parsed)
    return parsed


def _parse_lines(lines: list[str], start: int, end: int, file: str, parsed: ParsedFile) -> None:
    """Parse ``lines[start:end]`` into ``parsed``, recovering from syntax errors: the definition
    that does not parse is skipped (its names noted), the ones around it are kept."""
    while start < end:
        origin = (start + 1, 1)
        text = "".join(lines[start:end])
        try:
            tree = _lark().parse(text, start="start")
        except UnexpectedInput as err:
            line, column = _shift(*_error_position(text, err), origin)
            index = min(line, end) - 1
            token = getattr(err, "token", None)
            at_end = isinstance(err, UnexpectedEOF) or (token is not None and token.type == "$END")
            # The parser stopped at the end, or on a line that starts a new definition: if a
            # bracket is still open there, the definition before was never closed.
            boundary = end if at_end else index if index > start and _DEFINITION_START.match(lines[index]) else None
            opened = _open_bracket(lines, start, boundary) if boundary is not None else None
            if opened is not None and boundary is not None:
                bracket, bracket_line, bracket_column = opened
                if not at_end:
                    line, column = index + 1, 1
                found = "end of file" if at_end else f"`{lines[index].split()[0]}`"
                where = f"{bracket_line}:{bracket_column}"
                message = f"unexpected {found}: the `{bracket}` opened at {where} is never closed"
                broken = _definition_at(lines, bracket_line - 1, start)
                resume = boundary
            else:
                message = _describe(err, text)
                broken = _definition_at(lines, index, start)
                resume = _next_definition(lines, index, end)
            parsed.problems.append(Problem(file, line, column, message))
            if broken > start:  # the definitions before the broken one
                _parse_lines(lines, start, broken, file, parsed)
            for lost in lines[broken:resume]:
                found_name = _DEFINED_NAME.match(lost)
                if found_name:
                    parsed.lost_names.add(found_name.group(1))
            start = max(resume, start + 1)
            continue
        _transform(tree, file, origin, parsed)
        return


def _error_position(text: str, err: UnexpectedInput) -> tuple[int, int]:
    """Where the parser stopped; the end of the file is just after its last character."""
    token = getattr(err, "token", None)
    if err.line > 0 and (token is None or token.type != "$END"):
        return err.line, err.column
    content = text.rstrip()
    return content.count("\n") + 1, len(content) - content.rfind("\n")


def _transform(tree: Tree[Token], file: str, origin: tuple[int, int], parsed: ParsedFile) -> None:
    """The definitions of ``tree``; one nested more than ``MAX_NESTING`` deep is a problem (every
    later stage walks the tree recursively), and lost."""
    transformer = _ToAst(file, parsed.problems, origin)
    definitions: list[Node] = []
    try:
        definitions = transformer.transform(tree)
    except RecursionError:  # too deep even for the transformer: one definition at a time
        for child in tree.children:
            try:
                definitions.extend(transformer.transform(Tree(tree.data, [child])))
            except RecursionError:
                meta = child.meta if isinstance(child, Tree) else None
                line, column = _shift(meta.line, meta.column, origin) if meta is not None else origin
                parsed.problems.append(Problem(file, line, column, _TOO_DEEP))
                if isinstance(child, Tree) and child.data in ("let_def", "fn_def"):
                    parsed.lost_names.add(str(child.children[0]))
    kept = []
    for definition in definitions:
        deepest = _nested_beyond(definition, MAX_NESTING)
        if deepest is None:
            kept.append(definition)
            continue
        parsed.problems.append(Problem(file, *_shift(deepest[0], deepest[1], origin), _TOO_DEEP))
        if definition["t"] in ("let", "fn"):
            parsed.lost_names.add(definition["name"])
    if origin != (1, 1):
        _shift_positions(kept, origin)
    parsed.definitions.extend(kept)


#: how deep an expression may nest (brackets, operators, calls): far deeper than rules need (the
#: shipped ones reach 13), not so deep that the checker, the code generator or Python's own
#: compiler, which all recurse, run out of stack
MAX_NESTING = 100
_TOO_DEEP = f"nested more than {MAX_NESTING} deep: split it with `let`s or functions"


def _nested_beyond(definition: Node, limit: int) -> list[int] | None:
    """The position of the first expression nested more than ``limit`` deep in ``definition``
    (walked without recursion: the point is that it may be too deep for that)."""
    stack: list[tuple[Any, int]] = [(definition, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            depth += 1
            if depth > limit and "pos" in node:
                return list(node["pos"])
            stack.extend((value, depth) for key, value in node.items() if isinstance(value, dict | list))
        elif isinstance(node, list):
            stack.extend((item, depth) for item in node if isinstance(item, dict | list))
    return None


def _definition_at(lines: list[str], index: int, start: int) -> int:
    """The line where the definition holding line ``index`` begins (at least ``start``)."""
    for candidate in range(index, start, -1):
        if _DEFINITION_START.match(lines[candidate]):
            return candidate
    return start


def _next_definition(lines: list[str], index: int, end: int) -> int:
    """The first line after ``index`` that starts a definition (or ``end``)."""
    for candidate in range(index + 1, end):
        if _DEFINITION_START.match(lines[candidate]):
            return candidate
    return end


def _open_bracket(lines: list[str], start: int, end: int) -> tuple[str, int, int] | None:
    """The innermost bracket left open in ``lines[start:end]``, with its line and column."""
    stack: list[Token] = []
    try:
        for item in _lark().lex("".join(lines[start:end])):
            if item.type in _OPENING:
                stack.append(item)
            elif item.type in _CLOSING and stack:
                stack.pop()
    except UnexpectedInput:
        pass  # a character the lexer refuses: what came before it is enough
    if not stack:
        return None
    opened = stack[-1]
    return str(opened), start + (opened.line or 1), opened.column or 1


def _shift(line: int, column: int, origin: tuple[int, int]) -> tuple[int, int]:
    """A position inside an embedded source (a template's ``{...}``) as a position in the file."""
    if line <= 0:
        return origin
    return (origin[0] + line - 1, column + origin[1] - 1 if line == 1 else column)


def _describe(err: UnexpectedInput, text: str) -> str:
    """What the parser met, and what it expected there — or, for a habit from another language
    (``&&``, ``x.startswith(…)``, ``elif``), how the rules language says it."""
    habit = _habit(err, text)
    if habit is not None:
        return habit
    if isinstance(err, UnexpectedCharacters):
        return f"unexpected character {err.char!r}"
    expected = sorted(_TERMINAL_NAMES.get(name, _literal(name)) for name in getattr(err, "expected", ()) or ())
    allowed = f"; expected {', '.join(expected)}" if expected else ""
    if isinstance(err, UnexpectedEOF):
        return f"unexpected end of file{allowed}"
    assert isinstance(err, UnexpectedToken)
    found = "end of file" if err.token.type == "$END" else f"`{err.token}`"
    return f"unexpected {found}{allowed}"


#: a method's name right before a `(` the parser did not expect: `x.startswith(`
_METHOD_BEFORE = re.compile(r"\.\s*(?P<name>[A-Za-z_]\w*)\s*$")


def _habit(err: UnexpectedInput, text: str) -> str | None:
    """The hint of ``hints.py`` for the syntax error ``err`` in ``text``, or None."""
    if isinstance(err, UnexpectedCharacters):
        at = err.pos_in_stream or 0
        return hints.NOT if err.char == "!" and text[at + 1 : at + 2] != "=" else None
    token = getattr(err, "token", None)
    start = getattr(token, "start_pos", None)
    if token is None or token.type == "$END" or start is None:
        return None
    pair = text[max(start - 1, 0) : start + 1]
    if pair in hints.OPERATORS:
        return hints.OPERATORS[pair]
    if token.type == "NAME" and str(token) in hints.KEYWORDS:
        return hints.KEYWORDS[str(token)]
    if token.type == "LPAR":
        method = _METHOD_BEFORE.search(text, max(start - 200, 0), start)
        if method is not None:
            return hints.method_hint(method["name"])
    return None


def _literal(terminal: str) -> str:
    for definition in _lark().terminals:
        if definition.name == terminal:
            return f"`{definition.pattern.value}`"
    return terminal.lower()


def decode_string(token: str) -> str:
    """A string literal's text. ``\\n``, ``\\t``, ``\\\\`` and escaped quotes are decoded; any other
    backslash stays as written, so regular expressions read as they do in Python raw strings.
    Triple-quoted strings are dedented (they hold the rules' docs)."""
    if token.startswith('"""'):
        return textwrap.dedent(token[3:-3]).strip("\n")
    body = token[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def _pos(meta: Any) -> list[int]:
    return [meta.line, meta.column]


def _node(kind: str, *fields: str) -> Callable[[Any, Any, list[Any]], Node]:
    """A transformer method that makes a node of ``kind`` whose ``fields`` are its children (a
    token as its text)."""

    def make(self: Any, meta: Any, items: list[Any]) -> Node:
        values = (str(item) if isinstance(item, Token) else item for item in items)
        return {"t": kind, **dict(zip(fields, values, strict=True)), "pos": _pos(meta)}

    return make


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    """Lark's tree → plain nodes. A mistake inside a template is recorded in ``problems`` (its
    position shifted by ``origin``, where the parsed text begins in the file) and the template
    left empty, so that the rest of the file is still checked."""

    def __init__(self, file: str, problems: list[Problem], origin: tuple[int, int] = (1, 1)) -> None:
        super().__init__()
        self.file = file
        self.problems = problems
        self.origin = origin

    # definitions ---------------------------------------------------------------------------

    def start(self, meta: Any, items: list[Node]) -> list[Node]:
        return items  # the definitions (and a call's arguments: ``args``)

    args = start

    def let_def(self, meta: Any, items: list[Any]) -> Node:
        name, expr = items
        return {"t": "let", "name": str(name), "expr": expr, "pos": _pos(meta), "file": self.file}

    def fn_def(self, meta: Any, items: list[Any]) -> Node:
        name, params, body = items
        return {
            "t": "fn",
            "name": str(name),
            "params": params or [],
            "body": body,
            "pos": _pos(meta),
            "file": self.file,
        }

    def fn_expr(self, meta: Any, items: list[Node]) -> Node:
        return items[0]

    def fn_block(self, meta: Any, items: list[Any]) -> Node:
        *bindings, expr = items
        return {"t": "block", "lets": bindings, "expr": expr, "pos": _pos(meta)}

    def binding(self, meta: Any, items: list[Any]) -> list[Any]:
        return [str(items[0]), items[1]]

    def rule_def(self, meta: Any, items: list[Any]) -> Node:
        rule_id, *clauses = items
        return {"t": "rule", "id": str(rule_id), "clauses": clauses, "pos": _pos(meta), "file": self.file}

    def severity_clause(self, meta: Any, items: list[Token]) -> Node:
        return {"t": "severity", "value": str(items[0]), "pos": [items[0].line, items[0].column]}

    def doc_clause(self, meta: Any, items: list[Token]) -> Node:
        """A doc is a string, or a template rendered when the rules are compiled."""
        token = items[0]
        if token.type == "FSTRING":
            return {"t": "doc", "value": self.template(meta, [token]), "pos": _pos(meta)}
        return {"t": "doc", "value": decode_string(str(token)), "pos": _pos(meta)}

    let_clause = _node("let_clause", "name", "expr")
    for_clause = _node("for", "vars", "iter")
    when_clause = _node("when", "expr")
    at_clause = _node("at", "expr")
    message_clause = _node("message", "expr")
    fix_clause = _node("fix", "expr")

    def target(self, meta: Any, items: list[Token | None]) -> list[str]:
        """A loop's variables (and a function's parameters: ``params``)."""
        return [str(item) for item in items if item is not None]

    params = target

    # expressions ---------------------------------------------------------------------------

    if_expr = _node("if", "cond", "then", "else")
    or_expr = _node("or", "left", "right")
    and_expr = _node("and", "left", "right")
    not_expr = _node("not", "expr")
    in_expr = _node("in", "left", "right")
    index = _node("index", "obj", "key")
    list_comp = _node("comp", "element", "vars", "iter", "cond")
    compare = _node("compare", "left", "op", "right")
    binop = _node("binop", "left", "op", "right")
    attr = _node("attr", "obj", "name")
    name = _node("name", "name")

    def not_in_expr(self, meta: Any, items: list[Node]) -> Node:
        member = {"t": "in", "left": items[0], "right": items[1], "pos": _pos(meta)}
        return {"t": "not", "expr": member, "pos": _pos(meta)}

    def call(self, meta: Any, items: list[Any]) -> Node:
        return {"t": "call", "fn": str(items[0]), "args": items[1] or [], "pos": _pos(meta)}

    def string(self, meta: Any, items: list[Token]) -> Node:
        return {"t": "value", "value": decode_string(str(items[0])), "pos": _pos(meta)}

    def template(self, meta: Any, items: list[Token]) -> Node:
        try:
            parts = self._template_parts(items[0])
        except RulesError as err:
            line, column = _shift(err.line, err.column, self.origin)
            self.problems.append(Problem(self.file, line, column, err.message))
            parts = []
        return {"t": "template", "parts": parts, "pos": _pos(meta)}

    def number(self, meta: Any, items: list[Token]) -> Node:
        text = str(items[0])
        return {"t": "value", "value": float(text) if "." in text else int(text), "pos": _pos(meta)}

    def true(self, meta: Any, items: list[Any]) -> Node:
        return {"t": "value", "value": True, "pos": _pos(meta)}

    def false(self, meta: Any, items: list[Any]) -> Node:
        return {"t": "value", "value": False, "pos": _pos(meta)}

    def null(self, meta: Any, items: list[Any]) -> Node:
        return {"t": "value", "value": None, "pos": _pos(meta)}

    def list_literal(self, meta: Any, items: list[Node | None]) -> Node:
        return {"t": "list", "items": [item for item in items if item is not None], "pos": _pos(meta)}

    def map_literal(self, meta: Any, items: list[Any]) -> Node:
        return {"t": "map", "pairs": [item for item in items if item is not None], "pos": _pos(meta)}

    def pair(self, meta: Any, items: list[Any]) -> list[Any]:
        key = items[0]
        text = decode_string(str(key)) if key.type == "STRING" else str(key)
        return [text, items[1]]

    # templates -----------------------------------------------------------------------------

    def _template_parts(self, token: Token) -> list[Any]:
        """``f"a {x} b"`` → ``["a ", <expr x>, " b"]``; ``{{`` and ``}}`` stand for braces.

        Every position is found through ``_raw_offsets`` (where each character of the decoded
        text stands in the token), so that a mistake on any line of a dedented triple-quoted template is
        reported on its own line and column. The expression of a triple-quoted template is read
        as written (its lines' indentation kept: it matters to no expression)."""
        raw = str(token)
        body = decode_string(raw[1:])
        offsets = _raw_offsets(raw, len(body))
        as_written = raw.startswith('f"""')
        parts: list[Any] = []
        text = ""
        i = 0
        while i < len(body):
            char = body[i]
            if char in "{}" and body[i : i + 2] in ("{{", "}}"):
                text += char
                i += 2
                continue
            if char == "}":
                raise RulesError(self.file, *self._at(token, offsets[i]), "single `}` in a template")
            if char != "{":
                text += char
                i += 1
                continue
            end = body.find("}", i)
            if end < 0:
                raise RulesError(self.file, *self._at(token, offsets[i]), "unclosed `{` in a template")
            if text:
                parts.append(text)
                text = ""
            origin = self._at(token, offsets[i] + 1)
            source = raw[offsets[i] + 1 : offsets[end]] if as_written else body[i + 1 : end]
            try:
                tree = _lark().parse(source, start="expr")
            except UnexpectedInput as err:
                raise RulesError(self.file, *_shift(err.line, err.column, origin), _describe(err, source)) from None
            parts.append(_shift_positions(_ToAst(self.file, self.problems).transform(tree), origin))
            i = end + 1
        if text:
            parts.append(text)
        return parts

    @staticmethod
    def _at(token: Token, index: int) -> tuple[int, int]:
        """The line and column of ``index`` in the template ``token``'s text (its start if -1)."""
        raw = str(token)
        index = max(index, 0)
        line_start = raw.rfind("\n", 0, index)
        line = (token.line or 1) + raw.count("\n", 0, index)
        column = (token.column or 1) + index if line_start < 0 else index - line_start
        return line, column


def _raw_offsets(raw: str, length: int) -> list[int]:
    """For each of the ``length`` characters of a template's decoded text
    (``decode_string(raw[1:])``), its index in ``raw``: escapes decoded in a one-line template,
    the margin ``textwrap.dedent`` took and the blank lines around it in a triple-quoted one."""
    offsets: list[int] = []
    if raw.startswith('f"""'):
        inner = raw[4:-3]
        start = 4
        dedented = textwrap.dedent(inner)
        for line, kept in zip(inner.split("\n"), dedented.split("\n"), strict=False):
            offsets.extend(range(start + len(line) - len(kept), start + len(line) + 1))  # (with its newline)
            start += len(line) + 1
        leading = len(dedented) - len(dedented.lstrip("\n"))
        offsets = offsets[leading : leading + length]
        return offsets + [len(raw) - 3] * (length - len(offsets))  # (dedent keeps every line: never)
    index, end = 2, len(raw) - 1
    while index < end:
        if raw[index] == "\\" and index + 1 < end:
            offsets.append(index)
            if raw[index + 1] not in _ESCAPES:
                offsets.append(index + 1)  # a backslash that stays: two characters
            index += 2
            continue
        offsets.append(index)
        index += 1
    return offsets[:length]


def _shift_positions(node: Any, origin: tuple[int, int]) -> Any:
    """Make the positions of a template's embedded expression point into the rules file."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pos":
                node[key] = list(_shift(value[0], value[1], origin))
            else:
                _shift_positions(value, origin)
    elif isinstance(node, list):
        for item in node:
            _shift_positions(item, origin)
    return node
