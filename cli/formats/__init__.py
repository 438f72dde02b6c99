"""Machine formats of diagnostics for CI systems: GitHub workflow commands, SARIF, GitLab Code
Quality.

Each writer takes ``Findings`` — a list of diagnostics, the metadata of the rules that may have
produced them, and the sources they point into — so any command that reports diagnostics
(``validate``, ``rules check``) writes every format by building one. A format's module is
imported only when it is chosen.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TextIO

    from ...engine.lang.evaluator import Diagnostic
    from ...engine.yaml.spans import Sources


class Findings(NamedTuple):
    diagnostics: Sequence[Diagnostic]
    #: ``{id, severity, doc}`` of every rule that ran (a result whose rule is not listed still
    #: gets a descriptor with its id alone)
    rules: Sequence[Mapping[str, Any]]
    sources: Sources
    #: the folder the files are named from (SARIF's ``%SRCROOT%``), when one is
    root: str | None = None


def write(format_name: str, findings: Findings, stream: TextIO) -> None:
    module = import_module(f"{__name__}.{format_name}")
    module.write(findings, stream)
