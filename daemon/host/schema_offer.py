"""Where a harness would not offer the model a module's ``parameters`` as written.

The experimental harness hands the model the schema itself. The standard harness's plugin hands
opencode each property's schema as zod metadata, and opencode builds the object around them
with zod's ``toJSONSchema``: what that path cannot carry is data in the rules
(``SCHEMA_CARRIED``: per harness, the top-level keywords it keeps, the keywords a property may
not use because zod takes them for itself, and the keywords it drops when their value is a
boolean). This module only walks a schema for them; the texts are the rules'
(``carry_problem``), the same for ``validate --modules`` and the daemon's log.
"""

from __future__ import annotations

from typing import Any


def uncarried(parameters: Any, carried: dict[str, list[str]], harness: str) -> list[dict[str, str]]:
    """Each place where ``parameters`` would reach ``harness``'s model changed: ``{harness, kind,
    keyword, at}`` (``at`` is the path of keys from the top, joined by ``/``), in schema order."""
    found: list[dict[str, str]] = []

    def problem(kind: str, keyword: str, at: str) -> None:
        found.append({"harness": harness, "kind": kind, "keyword": keyword, "at": at})

    if not isinstance(parameters, dict):
        return found
    for keyword in parameters:
        if keyword not in carried["top_level"]:
            problem("top_level", keyword, "")
    properties = parameters.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            if not isinstance(schema, dict):
                problem("not_an_object", "", f"properties/{name}")
                continue
            for keyword in schema:
                if keyword in carried["property_reserved"]:
                    problem("reserved", keyword, f"properties/{name}")
    dropped = set(carried["dropped_if_boolean"])
    stack: list[tuple[Any, str]] = [(parameters, "")]
    while stack:  # no recursion: a schema may nest deeper than Python's stack
        value, at = stack.pop()
        entries = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        children = []
        for key, item in entries:
            if isinstance(key, str) and key in dropped and isinstance(item, bool):
                problem("boolean", key, at)
            children.append((item, f"{at}/{key}" if at else str(key)))
        stack.extend(reversed(children))
    return found
