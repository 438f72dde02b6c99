"""Read one YAML file into located values, refusing what would hurt.

libyaml (through pyyaml's ``CParser``) turns the bytes into events; this module builds the values
from those events itself, without recursion. ``yaml.compose`` would be shorter, but its C
composer recurses once per nesting level and crashes the process on a few ten thousand open
brackets; building from events lets every limit below be checked at the event that breaks it,
with its position:

* a file larger than ``MAX_FILE_BYTES``;
* nesting deeper than ``MAX_DEPTH``;
* more than ``MAX_NODES`` values once aliases are expanded (an "alias bomb" — a few lines of
  anchors that would stand for billions of values), or an alias to a collection that contains it;
* a key that appears twice in one mapping (the first one wins);
* a key that is itself a collection.

Problems are returned as ``LoadProblem`` records; the rules turn them into diagnostics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from .located import (
    LocatedConst,
    LocatedFloat,
    LocatedInt,
    LocatedList,
    LocatedMap,
    LocatedStr,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from .located import Loc

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 250_000

_STR_TAG = "tag:yaml.org,2002:str"
_resolve_tag: Callable[..., str] = Resolver().resolve
_constructor = SafeConstructor()


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


class _Frame:
    """An open mapping or sequence."""

    __slots__ = ("anchor", "key", "seen_keys", "size", "value")

    def __init__(self, value: LocatedMap | LocatedList, anchor: str | None) -> None:
        self.value = value
        self.anchor = anchor
        self.key: LocatedStr | None = None  # a mapping's pending key, waiting for its value
        self.seen_keys: dict[str, LocatedStr] = {}
        self.size = 1


def load_yaml(data: bytes, path: str) -> tuple[Any, list[LoadProblem]]:
    """Parse ``data`` (the bytes of the repo-relative file ``path``).

    Returns the document's root value (``None`` for an empty file, or when a problem stopped
    the reading) and the problems found."""
    if len(data) > MAX_FILE_BYTES:
        limit = f"{MAX_FILE_BYTES // 1024 // 1024} MiB"
        return None, [LoadProblem("too-large", (path, 1, 1), limit=limit)]
    problems: list[LoadProblem] = []
    try:
        root = _Builder(data, path, problems).build()
    except _Abort as abort:
        problems.append(abort.problem)
        return None, problems
    except yaml.MarkedYAMLError as err:
        return None, [*problems, _syntax_problem(err, data, path)]
    except yaml.reader.ReaderError as err:
        return None, [*problems, _reader_problem(err, data, path)]
    except yaml.YAMLError as err:
        return None, [*problems, LoadProblem("yaml-syntax", (path, 1, 1), str(err).splitlines()[0])]
    return root, problems


class _Builder:
    def __init__(self, data: bytes, path: str, problems: list[LoadProblem]) -> None:
        self.data = data
        self.path = path
        self.problems = problems
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, expanded size)
        self.open_anchors: set[str] = set()
        self.nodes = 0

    def loc(self, mark: Any) -> Loc:
        return (self.path, mark.line + 1, mark.column + 1)

    def build(self) -> Any:
        stack: list[_Frame] = []
        root: Any = None
        documents = 0
        events: Iterator[Any] = yaml.parse(self.data, Loader=yaml.CSafeLoader)
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                value, size = self.scalar(event), 1
                if stack and stack[-1].key is None and isinstance(stack[-1].value, LocatedMap):
                    stack[-1].key = LocatedStr(event.value, self.loc(event.start_mark))
                    continue
                if event.anchor:
                    self.anchors[event.anchor] = (value, 1)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                loc = self.loc(event.start_mark)
                if stack and stack[-1].key is None and isinstance(stack[-1].value, LocatedMap):
                    raise _Abort(LoadProblem("complex-key", loc))
                if len(stack) >= MAX_DEPTH:
                    raise _Abort(LoadProblem("too-deep", loc, limit=MAX_DEPTH))
                container = LocatedMap({}, loc) if kind is yaml.MappingStartEvent else LocatedList([], loc)
                if event.anchor:
                    self.open_anchors.add(event.anchor)
                stack.append(_Frame(container, event.anchor))
                self.count(1, event)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                frame = stack.pop()
                value, size = frame.value, frame.size
                if frame.anchor:
                    self.open_anchors.discard(frame.anchor)
                    self.anchors[frame.anchor] = (value, size)
            elif kind is yaml.AliasEvent:
                value, size = self.alias(event)
                if stack and stack[-1].key is None and isinstance(stack[-1].value, LocatedMap):
                    if not isinstance(value, str):
                        raise _Abort(LoadProblem("complex-key", self.loc(event.start_mark)))
                    stack[-1].key = LocatedStr(value, self.loc(event.start_mark))
                    continue
                self.count(size, event)
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _Abort(LoadProblem("multiple-documents", self.loc(event.start_mark)))
                continue
            else:
                continue
            if not stack:
                root = value
            else:
                self.add(stack[-1], value, size)
        return root

    def count(self, size: int, event: Any) -> None:
        self.nodes += size
        if self.nodes > MAX_NODES:
            kind = "alias-bomb" if type(event) is yaml.AliasEvent else "too-many-values"
            raise _Abort(LoadProblem(kind, self.loc(event.start_mark), limit=MAX_NODES))

    def add(self, frame: _Frame, value: Any, size: int) -> None:
        frame.size += size
        container = frame.value
        if isinstance(container, LocatedList):
            container.append(value)
            return
        key = frame.key
        assert key is not None
        frame.key = None
        first = frame.seen_keys.get(key)
        if first is not None:
            self.problems.append(LoadProblem("duplicate-key", key.loc, key=str(key), first_line=first.loc[1]))
            return
        frame.seen_keys[key] = key
        container[key] = value

    def alias(self, event: Any) -> tuple[Any, int]:
        loc = self.loc(event.start_mark)
        if event.anchor in self.open_anchors:
            raise _Abort(LoadProblem("recursive-alias", loc, anchor=event.anchor))
        found = self.anchors.get(event.anchor)
        if found is None:
            raise _Abort(LoadProblem("undefined-alias", loc, anchor=event.anchor))
        return found

    def scalar(self, event: Any) -> Any:
        loc = self.loc(event.start_mark)
        self.count(1, event)
        text = event.value
        plain, _ = event.implicit
        tag = _resolve_tag(yaml.ScalarNode, text, event.implicit) if event.tag in (None, "!") else event.tag
        if tag == _STR_TAG or (not plain and event.tag is None):
            return LocatedStr(text, loc)
        try:
            value = _constructor.construct_object(yaml.ScalarNode(tag, text), deep=True)
        except (ConstructorError, ValueError):
            return LocatedStr(text, loc)
        if value is None or isinstance(value, bool):
            return LocatedConst(value, loc)
        if isinstance(value, int):
            return LocatedInt(value, loc)
        if isinstance(value, float):
            return LocatedFloat(value, loc)
        return LocatedStr(text, loc)


def _syntax_problem(err: yaml.MarkedYAMLError, data: bytes, path: str) -> LoadProblem:
    mark = err.problem_mark or err.context_mark
    loc = (path, mark.line + 1, mark.column + 1) if mark else (path, 1, 1)
    if mark is not None and data[mark.index : mark.index + 1] == b"\t":
        return LoadProblem("tab", loc)
    detail = err.problem or err.context or "invalid YAML"
    if err.context and err.problem and err.context_mark is not None:
        cm = err.context_mark
        detail += f" ({err.context} at line {cm.line + 1}, column {cm.column + 1})"
    return LoadProblem("yaml-syntax", loc, detail)


def _reader_problem(err: yaml.reader.ReaderError, data: bytes, path: str) -> LoadProblem:
    """libyaml reports undecodable or forbidden bytes by byte offset: turn it into line and column."""
    before = data[: err.position]
    line = before.count(b"\n") + 1
    column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
    if isinstance(err.character, int) and err.character >= 0:
        detail = f"{err.reason} (byte 0x{err.character:02x})"
    else:
        detail = str(err.reason)
    return LoadProblem("yaml-syntax", (path, line, column), detail)
