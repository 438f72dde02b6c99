"""What a host program hands a rule set and reads back from it — the language's side of the
contract. The engine's side, with its facts and names, is ``engine/contract/rules_interface.py``.

Shapes of facts are written as data, the way JSON Schema is, but shorter:

    "string", "number", "bool", "any"        a value of that type ("any": manifest data)
    ["shape"]                                a list of items of that shape
    {"*": shape}                             a map from strings to values of that shape
    {"field": shape, ...}                    a record: a map with exactly these fields
    {"*": shape, "$keys": {"k": shape}}      a map whose entries at those keys have those shapes
    {"$data": shape}                         data expected to have that shape, never sure to:
                                             a field its shape lacks is a warning, nothing else

The checker reads them to find a misspelled field (``t.nmae``) before any manifest does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from .errors import Problem

    #: A further check of a whole rules folder: (compiled program, folder, folder as shown) → problems.
    FolderCheck = Callable[[dict[str, Any], str, str], list[Problem]]


class Interface:
    """``facts``: name → shape of each value the host hands over; ``values``: the ``let`` names
    it reads back; ``functions``: the functions it calls, with their parameters' names;
    ``checks``: further checks of a rules folder, run when it is compiled (after the language's
    own, on a program without errors); ``optional_values`` and ``optional_functions``: names the
    host reads when a rule set defines them (a feature that is off without them); ``data_shape``:
    the name of a ``let`` that declares, as a literal shape, what the data the host hands over
    holds (a manifest, say), and the function that gives the facts' shapes with that data's
    parts marked ``{"$data": shape}`` — so that ``rules check`` can warn of a field the data
    cannot have."""

    def __init__(
        self,
        facts: Mapping[str, Any],
        values: Sequence[str] = (),
        functions: Mapping[str, Sequence[str]] | None = None,
        checks: Sequence[FolderCheck] = (),
        optional_values: Sequence[str] = (),
        optional_functions: Mapping[str, Sequence[str]] | None = None,
        data_shape: tuple[str, Callable[[Any], Mapping[str, Any]]] | None = None,
    ) -> None:
        self.facts = dict(facts)
        self.values = tuple(values)
        self.functions = {name: tuple(params) for name, params in (functions or {}).items()}
        self.checks = tuple(checks)
        self.optional_values = tuple(optional_values)
        self.optional_functions = {name: tuple(params) for name, params in (optional_functions or {}).items()}
        self.data_shape = data_shape

    def fingerprint(self) -> str:
        """What the compiled program depends on, for the rule cache's key."""
        checks = [f"{check.__module__}.{check.__qualname__}" for check in self.checks]
        optional = (self.optional_values, self.optional_functions)
        shaped = None if self.data_shape is None else (self.data_shape[0], self.data_shape[1].__qualname__)
        return repr((self.facts, self.values, self.functions, checks, optional, shaped))
