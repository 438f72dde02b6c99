"""libyaml's event parser, without the pure-Python half of pyyaml.

The YAML of a manifest is read by libyaml, through the parser of pyyaml's C extension
(``yaml._yaml.CParser``, which ``yaml.CSafeLoader`` extends). But ``import yaml`` first imports
all of pyyaml's Python loader and dumper — a reader that compiles a large Unicode regular
expression, a constructor that imports ``datetime`` and ``base64``, a resolver, a representer —
a third of a small ``validate`` run, none of which reading events needs: measured with ``import
yaml`` instead, the first run (``--no-cache``) of the starter takes 46 ms instead of 25.

So, when nothing has imported ``yaml`` yet, this module makes the package without running its
``__init__``: the four small modules the extension takes its classes from (errors, tokens,
events, nodes) are pyyaml's own; the eight of which it takes only an exception class (reader,
scanner, parser, composer, constructor, emitter, serializer, representer) are stood in for by
modules holding just that class, a subclass of pyyaml's ``YAMLError`` or ``MarkedYAMLError``
like the original, of the same name. Once the extension is loaded the stand-ins are dropped
again. The package stays
in ``sys.modules``, and the first use of anything it lacks (``yaml.safe_load``,
``yaml.YAMLError``, ``yaml.reader``…) runs its ``__init__`` there and then: code that imports
``yaml`` later in the process gets the whole of pyyaml, the very classes libyaml's events and
errors are made of, and from then on the extension raises pyyaml's own exception classes again.

When ``yaml`` was imported before, it is used as it is.
"""

from __future__ import annotations

import sys
from _frozen_importlib import module_from_spec

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType
    from typing import Any

    from yaml.reader import ReaderError

#: pyyaml's modules that define the classes of what the extension makes (errors, tokens, events, nodes)
_REAL = ("error", "tokens", "events", "nodes")
#: pyyaml's modules the extension takes only an exception class from → its name
_STOOD_IN = {
    "reader": "ReaderError",
    "scanner": "ScannerError",
    "parser": "ParserError",
    "composer": "ComposerError",
    "constructor": "ConstructorError",
    "emitter": "EmitterError",
    "serializer": "SerializerError",
    "representer": "RepresenterError",
}
#: those of them that are a ``MarkedYAMLError`` (with the positions of the problem), not a plain ``YAMLError``
_MARKED = frozenset(("ScannerError", "ParserError", "ComposerError", "ConstructorError"))
#: the stand-in for pyyaml's ``ReaderError``, when one was made
_READER_STAND_IN: list[type[ReaderError]] = []


def _bare_package(name: str) -> tuple[ModuleType, Any] | None:
    """The package ``name`` made from its spec, its ``__init__`` not run, and that spec; None when
    it is no package found on the path. The spec is found as ``importlib.util.find_spec`` finds it
    (whose import costs more than it saves)."""
    spec = None
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            break
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return None
    return module_from_spec(spec), spec


def _import(name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


def _load_extension() -> None:
    """Load ``yaml._yaml`` into a ``yaml`` package whose ``__init__`` has not run (see above)."""
    made = _bare_package("yaml")
    if made is None:
        return  # not a package this module knows how to take apart: imported the usual way
    package, spec = made
    sys.modules["yaml"] = package
    for name in _REAL:
        _import("yaml." + name)
    from yaml.error import MarkedYAMLError, YAMLError

    class ReaderError(YAMLError):
        """libyaml's complaint about the bytes themselves (one that is not UTF-8, a control
        character), by offset: the attributes and the text of pyyaml's ``ReaderError``."""

        def __init__(self, name: Any, position: int, character: Any, encoding: str, reason: str) -> None:
            self.name = name
            self.position = position
            self.character = character
            self.encoding = encoding
            self.reason = reason

        def __str__(self) -> str:
            where = f'  in "{self.name}", position {self.position}'
            if isinstance(self.character, bytes):
                return f"'{self.encoding}' codec can't decode byte #x{ord(self.character):02x}: {self.reason}\n{where}"
            return f"unacceptable character #x{self.character:04x}: {self.reason}\n{where}"

    for name, class_name in _STOOD_IN.items():
        stand_in = type(sys)(f"yaml.{name}")
        if class_name == "ReaderError":
            error_class: type = ReaderError
            _READER_STAND_IN.append(ReaderError)  # type: ignore[arg-type]  # (pyyaml's attributes: see above)
        else:
            error_class = type(class_name, (MarkedYAMLError if class_name in _MARKED else YAMLError,), {})
        error_class.__module__, error_class.__qualname__ = stand_in.__name__, class_name
        setattr(stand_in, class_name, error_class)
        sys.modules[stand_in.__name__] = stand_in
        setattr(package, name, stand_in)
    try:
        extension = _import("yaml._yaml")
    finally:
        for name in _STOOD_IN:
            del sys.modules[f"yaml.{name}"]
            delattr(package, name)
    package.__dict__["__getattr__"] = _completing(package, spec, extension)


def _completing(package: ModuleType, spec: Any, extension: ModuleType) -> Any:
    """The package's ``__getattr__`` (PEP 562): the first name it lacks runs its ``__init__``,
    and the extension is given pyyaml's own exception classes back."""

    def __getattr__(name: str) -> Any:
        package.__dict__.pop("__getattr__", None)
        spec.loader.exec_module(package)
        for module_name, class_name in _STOOD_IN.items():
            setattr(extension, class_name, getattr(_import(f"yaml.{module_name}"), class_name))
        return getattr(package, name)

    return __getattr__


if "yaml" not in sys.modules:
    _load_extension()

# pyyaml's own parser and classes, from the package made above
from yaml._yaml import CParser  # noqa: E402
from yaml.error import MarkedYAMLError, YAMLError  # noqa: E402
from yaml.events import (  # noqa: E402
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

__all__ = [
    "AliasEvent",
    "CParser",
    "DocumentStartEvent",
    "MappingEndEvent",
    "MappingStartEvent",
    "MarkedYAMLError",
    "ScalarEvent",
    "SequenceEndEvent",
    "SequenceStartEvent",
    "YAMLError",
    "events",
    "reader_errors",
    "tokens",
]


def events(data: str | bytes) -> Iterator[Any]:
    """libyaml's events of ``data``, as ``yaml.parse(data, Loader=yaml.CSafeLoader)`` gives them."""
    parser = CParser(data)
    while (event := parser.get_event()) is not None:
        yield event


def tokens(data: str | bytes) -> Iterator[Any]:
    """libyaml's tokens of ``data``, as ``yaml.scan(data, Loader=yaml.CSafeLoader)`` gives them."""
    parser = CParser(data)
    while (token := parser.get_token()) is not None:
        yield token


def reader_errors() -> tuple[type[ReaderError], ...]:
    """The classes of libyaml's reader errors: pyyaml's, and the stand-in the extension raised
    until ``yaml`` was completed (see above); an ``except`` names them by calling this."""
    return (*_READER_STAND_IN, sys.modules["yaml._yaml"].ReaderError)
