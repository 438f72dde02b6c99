"""Importing a package's extension module without running the package's ``__init__``.

Two packages beeuni reads with on every run wrap a C extension in a Python layer that a run does
not need and whose imports cost more than the run's own work on a small project: pyyaml's
loaders and dumpers (``yaml/libyaml.py``), and google-re2's ``re``-like wrapper, which imports
``functools`` and ``collections`` (``lang/patterns.py``). The import system's own pieces do the
work, found the way ``importlib.util.find_spec`` finds them (whose import costs more than it
saves).
"""

from __future__ import annotations

import sys
from _frozen_importlib import module_from_spec

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def find_spec(name: str) -> Any:
    """The import system's spec for the top-level module ``name``, or None."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def bare_package(name: str) -> tuple[ModuleType, Any] | None:
    """The package ``name`` made from its spec, its ``__init__`` not run, and that spec; None when
    ``name`` is no package found on the path (then it is to be imported the usual way)."""
    spec = find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return None
    return module_from_spec(spec), spec


def submodule_alone(package: str, name: str) -> ModuleType:
    """``package.name`` imported without ``package``'s ``__init__``, when nothing has imported
    ``package`` yet. The package itself is not kept: a later ``import package`` runs its
    ``__init__`` as usual, which finds the submodule already loaded."""
    full = f"{package}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    made = None if package in sys.modules else bare_package(package)
    if made is None:
        __import__(full)
        return sys.modules[full]
    sys.modules[package] = made[0]
    try:
        __import__(full)
    finally:
        del sys.modules[package]
    return sys.modules[full]
