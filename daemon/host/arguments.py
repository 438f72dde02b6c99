"""Each call's arguments, checked against its module's ``parameters`` before the module runs —
once, in the daemon, so that both harnesses refuse the same calls with the same text.

One validator per module, built when the module loads, for the JSON Schema draft its
``$schema`` names (2020-12 when it names none). A refusal names the property, what is wrong
and what is allowed; the words are the rules' (``ARGUMENT_MESSAGES``: one template per
validation keyword, with the blanks ``{property}``, ``{value}`` and ``{allowed}``). This module
only fills the blanks from jsonschema's error: which property, which value, which bound.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, validator_for

from ...engine.printable import printable

SHOWN_VALUE = 80  # characters of a value shown in a refusal, then "…"


class InvalidSchema(Exception):
    """A module's ``parameters`` are not valid JSON Schema: the module does not load."""


def validator_of(parameters: Any) -> Validator:
    """The validator of ``parameters``, checked against the metaschema of the draft it names."""
    cls = validator_for(parameters, default=Draft202012Validator)
    try:
        cls.check_schema(parameters)
    except SchemaError as err:
        where = "/".join(str(part) for part in err.absolute_path)
        raise InvalidSchema(err.message + (f" (at `{where}`)" if where else "")) from None
    validator: Validator = cls(parameters)
    return validator


def argument_problem(validator: Validator, args: Any, texts: dict[str, Any]) -> str | None:
    """Why ``args`` do not fit the schema (the most relevant error, as jsonschema ranks them), or
    None. ``texts`` are the rules' ``ARGUMENT_MESSAGES``."""
    if validator.is_valid(args):  # the common case, without building errors
        return None
    error = best_match(validator.iter_errors(args))
    if error is None:  # is_valid said no, so there is an error; this keeps mypy and a broken validator honest
        return None
    keyword = str(error.validator)
    template = texts["keywords"].get(keyword, texts["other"])
    fields = _fields(error, keyword, texts["root"])
    return str(template).format_map(defaultdict(str, {name: printable(value) for name, value in fields.items()}))


def _fields(error: ValidationError, keyword: str, root: str) -> dict[str, str]:
    """The blanks of a refusal: the property (dotted path from the arguments), the value found
    and what the keyword allows."""
    path = [str(part) for part in error.absolute_path]
    allowed: Any = error.validator_value
    value: Any = error.instance
    schema: Any = error.schema
    if keyword == "required" and isinstance(error.instance, dict):
        # the error stands at the object; the property is the first required name it lacks
        missing = [name for name in allowed if name not in error.instance]
        path.append(str(missing[0]) if missing else "")
    elif keyword == "additionalProperties" and isinstance(error.instance, dict):
        known = set(schema.get("properties", {}) if isinstance(schema, dict) else {})
        extra = sorted(name for name in error.instance if name not in known)
        path.append(extra[0] if extra else "")
        value = error.instance.get(extra[0]) if extra else None
        allowed = sorted(known)
    return {
        "property": ".".join(path) if path else root,
        "value": _shown(value),
        "allowed": _allowed(allowed),
        "keyword": keyword,
    }


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= SHOWN_VALUE else text[: SHOWN_VALUE - 1] + "…"


def _allowed(allowed: Any) -> str:
    """What a keyword allows, as a refusal shows it, in backticks: a list item by item, a string
    as it is, anything else as JSON."""
    if isinstance(allowed, list):
        return ", ".join(f"`{item if isinstance(item, str) else _shown(item)}`" for item in allowed)
    return f"`{allowed if isinstance(allowed, str) else _shown(allowed)}`"
