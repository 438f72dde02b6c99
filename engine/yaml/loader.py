"""Read one YAML file into located values, refusing what would hurt.

libyaml (through pyyaml's ``CSafeLoader``) turns the bytes into events; this module builds the values
from those events itself, without recursion. ``yaml.compose`` would be shorter, but its C
composer recurses once per nesting level and crashes the process on a few ten thousand open
brackets; building from events lets every limit below be checked at the event that breaks it,
with its position:

* a file larger than ``MAX_FILE_BYTES``;
* nesting deeper than ``MAX_DEPTH``;
* more than ``MAX_NODES`` values once aliases are expanded (an "alias bomb" — a few lines of
  anchors that would stand for billions of values), or an alias to a collection that contains it;
* a key that appears twice in one mapping (the first one wins);
* a key that is itself a collection;
* a number written with more than ``MAX_NUMBER_CHARS`` characters (Python would refuse to print
  it, and a long sexagesimal ``1:00:00…`` takes quadratic time to compute);
* a tag its scalar does not fit (``!!bool maybe``, ``!!int ""``);
* the merge key ``<<``, which beeuni does not support (the entry is left out, said at ``<<``).

Problems are returned as ``LoadProblem`` records; the rules turn them into diagnostics.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from yaml import (
    AliasEvent,
    CSafeLoader,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    MarkedYAMLError,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    YAMLError,
)
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.reader import ReaderError
from yaml.resolver import Resolver

from .located import (
    LocatedConst,
    LocatedFloat,
    LocatedInt,
    LocatedList,
    LocatedMap,
    LocatedStr,
)
from .source_text import LINE_BREAKS

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .located import Loc

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 250_000
MAX_NUMBER_CHARS = 1000

_CORE_TAG = "tag:yaml.org,2002:"
STR_TAG = _CORE_TAG + "str"
_MERGE_TAG = _CORE_TAG + "merge"
_BOOL_TAG, _NULL_TAG = _CORE_TAG + "bool", _CORE_TAG + "null"
_NUMBER_TAGS = frozenset({_CORE_TAG + "int", _CORE_TAG + "float"})
#: tags whose values are a few words, which plain text of the same value resolves to
_WHOLE_WORD_TAGS = frozenset({_BOOL_TAG, _NULL_TAG})
#: characters YAML 1.1 (libyaml) reads as line breaks, where editors and YAML 1.2 see none
_INVISIBLE_BREAKS = {
    "\x85": "U+0085 NEL (next line)",
    "\u2028": "U+2028 LS (line separator)",
    "\u2029": "U+2029 PS (paragraph separator)",
}
_INVISIBLE_BREAK_BYTES = tuple(character.encode() for character in _INVISIBLE_BREAKS)


#: pyyaml's resolver and safe constructor: the tag and the value of a scalar
_CONSTRUCTOR = SafeConstructor()
_RESOLVE: Callable[..., str] = Resolver().resolve


def plain_tag(text: str) -> str:
    """The tag YAML 1.1 gives a plain (unquoted, untagged) scalar of this text: pyyaml's
    resolver's answer."""
    return _RESOLVE(ScalarNode, text, (True, False))


class LoadProblem:
    """Something wrong with a file, found while reading it. ``kind`` is a stable name the rules
    match on (``yaml-syntax``, ``duplicate-key``, ``alias-bomb``, ...); ``detail`` is a short
    English fragment from the parser, for kinds whose text the rules cannot know in advance."""

    __slots__ = ("detail", "extra", "kind", "loc")

    def __init__(self, kind: str, loc: Loc, detail: str = "", **extra: Any) -> None:
        self.kind = kind
        self.loc = loc
        self.detail = detail
        self.extra = extra

    def as_fact(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at": LocatedConst(None, self.loc),
            "file": self.loc[0],
            "detail": self.detail,
            **self.extra,
        }


class _Abort(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        self.problem = problem


def load_yaml(data: bytes, path: str) -> tuple[Any, list[LoadProblem]]:
    """Parse ``data`` (the bytes of the repo-relative file ``path``).

    Returns the document's root value (``None`` for an empty file, or when a problem stopped
    the reading) and the problems found."""
    root, problems, _ = load_yaml_counted(data, path)
    return root, problems


def load_yaml_counted(data: bytes, path: str) -> tuple[Any, list[LoadProblem], int]:
    """``load_yaml``, and how many values the file holds (aliases expanded)."""
    if len(data) > MAX_FILE_BYTES:
        limit = f"{MAX_FILE_BYTES // 1024 // 1024} MiB"
        return None, [LoadProblem("too-large", (path, 1, 1), limit=limit)], 0
    invisible = _invisible_break(data, path)
    if invisible is not None:
        return None, [invisible], 0
    problems: list[LoadProblem] = []
    builder = _Builder(data, path, problems)
    try:
        root = builder.build()
    except _Abort as abort:
        problems.append(abort.problem)
        return None, problems, builder.nodes
    except MarkedYAMLError as err:
        return None, [*problems, _syntax_problem(err, data, path)], builder.nodes
    except ReaderError as err:
        return None, [*problems, _reader_problem(err, data, path)], builder.nodes
    except YAMLError as err:
        return None, [*problems, LoadProblem("yaml-syntax", (path, 1, 1), str(err).splitlines()[0])], builder.nodes
    return root, problems, builder.nodes


def load_yaml_part(data: bytes, path: str, first_line: int, depth: int) -> tuple[Any, int] | None:
    """Parse ``data``, lines of a file that start at line ``first_line``, as a value nested
    ``depth`` collections deep in that file (``engine/yaml/reparse.py``): positions and the depth
    limit as in the whole file. The value and how many values it holds; None when it does not
    parse, or has a problem."""
    problems: list[LoadProblem] = []
    builder = _Builder(data, path, problems, first_line - 1, depth)
    try:
        root = builder.build()
    except (_Abort, YAMLError):
        return None
    return (root, builder.nodes) if not problems else None


class _Builder:
    def __init__(
        self, data: bytes, path: str, problems: list[LoadProblem], line_offset: int = 0, depth: int = 0
    ) -> None:
        self.data = data
        self.path = path
        self.problems = problems
        self.line_offset = line_offset
        self.depth = depth
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, expanded size)
        self.open_anchors: set[str] = set()
        self.nodes = 0

    def loc(self, mark: Any) -> Loc:
        return (self.path, mark.line + 1 + self.line_offset, mark.column + 1)

    def build(self) -> Any:
        """The document's value, from libyaml's events, read one by one.

        This loop is the hot path of reading a large manifest (some ten thousand events), so it
        keeps its state in local variables and does inline what would otherwise be a call per
        event: the open collection (``top``: a mapping or a list, None at the document's level)
        and its pending key are locals, and ``stack`` holds the state of the collections that
        enclose it. Values are made without their classes' ``__init__``/``__new__`` (an empty
        dict or list, a string, then its ``loc``), which is what those do."""
        path, first_line, depth = self.path, self.line_offset + 1, self.depth
        problems, anchors, open_anchors = self.problems, self.anchors, self.open_anchors
        new_str, new_map, new_list = str.__new__, dict.__new__, list.__new__
        #: per enclosing collection: (collection, is a mapping, pending key, skip its entry,
        #: anchor, the count of values before it)
        stack: list[tuple[Any, bool, LocatedStr | None, bool, str | None, int]] = []
        top: Any = None
        is_map = False
        key: LocatedStr | None = None  # the open mapping's key, waiting for its value
        skip = False  # the pending key's entry is left out (a merge key)
        root: Any = None
        documents = 0
        # `nodes` counts every value, keys included, aliases expanded (the limit); the size of
        # an anchored collection (what an alias to it adds) leaves keys out: `nodes - keys`.
        nodes = keys = 0
        next_event: Callable[[], Any] = CSafeLoader(self.data).get_event
        try:
            while (event := next_event()) is not None:
                kind = event.__class__
                if kind is ScalarEvent:
                    mark = event.start_mark
                    loc = (path, mark.line + first_line, mark.column + 1)
                    nodes += 1
                    if nodes > MAX_NODES:
                        raise _Abort(LoadProblem("too-many-values", loc, limit=MAX_NODES))
                    text, tag = event.value, event.tag
                    if is_map and key is None:
                        keys += 1
                        key = new_str(LocatedStr, text)
                        key.loc = loc
                        if tag is not None or (event.implicit[0] and (text[:1] == "<" or len(text) > MAX_NUMBER_CHARS)):
                            plain = plain_tag(text) if tag is None else None
                            self.scalar(event, loc, plain)  # for its problems: a bad tag, a too long number
                            skip = plain == _MERGE_TAG
                            if skip:
                                problems.append(LoadProblem("merge-key", loc))
                        continue
                    plain = plain_tag(text) if tag is None and event.implicit[0] else None
                    if tag is None and (plain is None or plain == STR_TAG):
                        value = new_str(LocatedStr, text)
                        value.loc = loc
                    else:
                        value = self.scalar(event, loc, plain)
                    if event.anchor:
                        anchors[event.anchor] = (value, 1)
                elif kind is MappingStartEvent or kind is SequenceStartEvent:
                    mark = event.start_mark
                    loc = (path, mark.line + first_line, mark.column + 1)
                    if is_map and key is None:
                        raise _Abort(LoadProblem("complex-key", loc))
                    if len(stack) + depth >= MAX_DEPTH:
                        raise _Abort(LoadProblem("too-deep", loc, limit=MAX_DEPTH))
                    anchor = event.anchor
                    if anchor:
                        open_anchors.add(anchor)
                    stack.append((top, is_map, key, skip, anchor, nodes - keys))
                    is_map = kind is MappingStartEvent
                    top = new_map(LocatedMap) if is_map else new_list(LocatedList)
                    top.loc = loc
                    key, skip = None, False
                    nodes += 1
                    if nodes > MAX_NODES:
                        raise _Abort(LoadProblem("too-many-values", loc, limit=MAX_NODES))
                    continue
                elif kind is MappingEndEvent or kind is SequenceEndEvent:
                    value = top
                    top, is_map, key, skip, anchor, before = stack.pop()
                    if anchor:
                        open_anchors.discard(anchor)
                        anchors[anchor] = (value, nodes - keys - before)
                elif kind is AliasEvent:
                    loc = self.loc(event.start_mark)
                    value, size = self.alias(event.anchor, loc)
                    if is_map and key is None:
                        if not isinstance(value, str):
                            raise _Abort(LoadProblem("complex-key", loc))
                        key = LocatedStr(value, loc)
                        continue
                    nodes += size
                    if nodes > MAX_NODES:
                        raise _Abort(LoadProblem("alias-bomb", loc, limit=MAX_NODES))
                elif kind is DocumentStartEvent:
                    documents += 1
                    if documents > 1:
                        raise _Abort(LoadProblem("multiple-documents", self.loc(event.start_mark)))
                    continue
                else:
                    continue
                if top is None:
                    root = value
                elif not is_map:
                    top.append(value)
                else:
                    assert key is not None
                    if skip:
                        skip = False
                    elif key in top:
                        problems.append(_duplicate(top, key))
                    else:
                        top[key] = value
                    key = None
        finally:
            self.nodes = nodes
        return root

    def alias(self, anchor: str, loc: Loc) -> tuple[Any, int]:
        """The value an alias repeats, and how many values it counts for."""
        if anchor in self.open_anchors:
            raise _Abort(LoadProblem("recursive-alias", loc, anchor=anchor))
        found = self.anchors.get(anchor)
        if found is None:
            raise _Abort(LoadProblem("undefined-alias", loc, anchor=anchor))
        return found

    def scalar(self, event: Any, loc: Loc, plain: str | None = None) -> Any:
        """The value of a scalar event; ``plain``: its text's ``plain_tag`` if the caller has it
        (a long text that may be a number is not resolved twice)."""
        text = event.value
        tag = event.tag
        explicit = tag is not None and tag != "!"
        if not explicit:
            if not event.implicit[0]:  # quoted, or a block scalar: text
                return LocatedStr(text, loc)
            tag = plain if plain is not None else plain_tag(text)
        if tag == STR_TAG:
            return LocatedStr(text, loc)
        if tag in _NUMBER_TAGS and len(text) > MAX_NUMBER_CHARS:
            raise _Abort(LoadProblem("too-long-number", loc, limit=MAX_NUMBER_CHARS))
        if tag not in _CONSTRUCTOR.yaml_constructors:  # a tag of its own (`!local`): the text
            return LocatedStr(text, loc)
        try:
            if explicit and tag in _WHOLE_WORD_TAGS and plain_tag(text) != tag:
                raise ValueError(text)  # pyyaml would read `!!null maybe` as null
            value = _CONSTRUCTOR.construct_document(ScalarNode(tag, text))  # (which keeps no node)
        except Exception:  # pyyaml's constructors fail in many ways on text that does not fit
            if explicit:  # (plain text that only looks like a date, `2001-13-45`, is a string)
                self.problems.append(LoadProblem("bad-tag", loc, tag="!!" + tag.removeprefix(_CORE_TAG), value=text))
            return LocatedStr(text, loc)
        if value is None or isinstance(value, bool):
            return LocatedConst(value, loc)
        if isinstance(value, int):
            return LocatedInt(value, loc)
        if isinstance(value, float):
            return LocatedFloat(value, loc)
        return LocatedStr(text, loc)


def _duplicate(mapping: LocatedMap, key: LocatedStr) -> LoadProblem:
    """``key`` once more in ``mapping`` (the first one stays), said with the first one's line."""
    first = next(earlier for earlier in mapping if earlier == key)
    return LoadProblem("duplicate-key", key.loc, key=str(key), first_line=first.loc[1])


def _syntax_problem(err: MarkedYAMLError, data: bytes, path: str) -> LoadProblem:
    text = data.decode(_encoding(data), "replace")
    mark = err.problem_mark or err.context_mark
    line, column = _mark_position(mark, text) if mark is not None else (1, 1)
    if mark is not None and text[mark.index : mark.index + 1] == "\t":
        return LoadProblem("tab", (path, line, column))
    detail = err.problem or err.context or "invalid YAML"
    if err.context and err.problem and err.context_mark is not None:
        context_line, context_column = _mark_position(err.context_mark, text)
        detail += f" ({err.context} at line {context_line}, column {context_column})"
    return LoadProblem("yaml-syntax", (path, line, column), detail)


def _reader_problem(err: ReaderError, data: bytes, path: str) -> LoadProblem:
    """libyaml reports undecodable bytes and forbidden characters by byte offset, and for a
    sequence that is not UTF-8 names the byte after it: Python's decoder finds the first wrong
    byte itself. Either becomes a line and a column."""
    encoding = _encoding(data)
    try:
        data.decode(encoding)
    except UnicodeDecodeError as bad:
        before = data[: bad.start].decode(encoding)
        line, column = _position(before, len(before))
        name = "UTF-16" if encoding == "utf-16" else "UTF-8"
        detail = f"byte 0x{data[bad.start]:02x} is not {name}; save the file as UTF-8"
        return LoadProblem("yaml-syntax", (path, line, column), detail)
    before = data[: err.position].decode(encoding, "replace")
    line, column = _position(before, len(before))
    if isinstance(err.character, int) and err.character >= 0:
        detail = f"{err.reason} (U+{err.character:04X})"
    else:
        detail = str(err.reason)
    return LoadProblem("yaml-syntax", (path, line, column), detail)


def _invisible_break(data: bytes, path: str) -> LoadProblem | None:
    """A NEL, LS or PS character: YAML 1.1 (libyaml) reads it as a line break, where an editor
    or a YAML 1.2 reader shows none — a comment would go on in the next line, and every later
    line number would be off. Said at the first one, by name."""
    found = [index for index in (data.find(code) for code in _INVISIBLE_BREAK_BYTES) if index >= 0]
    if not found:
        return None
    text = data[: min(found)].decode("utf-8-sig", "replace")
    character = data[min(found) :].decode("utf-8", "replace")[0]
    line, column = _position(text, len(text))
    return LoadProblem("invisible-break", (path, line, column), character=_INVISIBLE_BREAKS[character])


def _encoding(data: bytes) -> str:
    """How libyaml decodes the file: UTF-16 after its byte order mark, else UTF-8."""
    return "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"


def _mark_position(mark: Any, text: str) -> tuple[int, int]:
    """A libyaml mark as 1-based line and column — at the end of the file's last line when
    libyaml points past it (it adds a line break to a file without one)."""
    if mark.index < len(text):
        return mark.line + 1, mark.column + 1
    return _position(text, len(text))


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``text[index]``, lines counted as libyaml counts them; the end
    of a file that ends with a line break is the end of its last line, not a line after it."""
    if index == len(text) and index > 0:
        final = LINE_BREAKS.search(text, max(index - 2, 0))
        if final is not None and final.end() == index:
            index = final.start()
    breaks = list(LINE_BREAKS.finditer(text, 0, index))
    line_start = breaks[-1].end() if breaks else 0
    return len(breaks) + 1, index - line_start + 1
