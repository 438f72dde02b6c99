"""Hints for habits from other languages: what a rules author who knows Python, JavaScript or
SQL writes first, and how the rules language says it.

The parser (a syntax error) and the checker (an unknown name or function) look a mistake up
here before they fall back to listing what was expected. These are the language's own syntax and
built-ins, not policy: the tables are data; `tests/golden/rules-habits/` shows them in `rules check`,
and ``tests/test_language.py`` tries every entry.
"""

from __future__ import annotations

#: an operator of another language, as the two characters the parser met → the message
OPERATORS = {
    "&&": "`&&` is written `and` in the rules language: `a and b` (`&` alone intersects two lists)",
    "||": "`||` is written `or` in the rules language: `a or b` (`|` alone is the union of two lists)",
}
#: `!x` (and not `!=`)
NOT = "`!` is written `not` in the rules language: `not x` (`!=` is inequality)"

#: a method called on a value (`x.startswith("a")`) → the built-in that does it, as it is called
METHODS = {
    "startswith": "starts_with(s, prefix)",
    "startsWith": "starts_with(s, prefix)",
    "endswith": "ends_with(s, suffix)",
    "endsWith": "ends_with(s, suffix)",
    "lower": "lower(s)",
    "toLowerCase": "lower(s)",
    "split": "split(s, separator)",
    "join": "join(list, separator)",
    "len": "len(x)",
    "length": "len(x)",
    "keys": "keys(m)",
    "values": "values(m)",
}
#: a method with no built-in of that name
NO_METHODS = (
    "a value has no methods in the rules language, and `{name}` is no built-in: built-ins take the value first, "
    "like `lower(s)`"
)

#: a keyword of another language where the rules language has another → its spelling
KEYWORDS = {
    "elif": "`elif` is written `else if` in the rules language: `if a then x else if b then y else z`",
}

#: another language's literal → the rules language's (`null`, `true` and `false`, lower case)
LITERALS = {
    "None": "null",
    "NULL": "null",
    "Null": "null",
    "nil": "null",
    "undefined": "null",
    "True": "true",
    "TRUE": "true",
    "False": "false",
    "FALSE": "false",
}


def method_hint(name: str) -> str:
    """The message for ``x.name(...)``."""
    builtin = METHODS.get(name)
    if builtin is None:
        return NO_METHODS.format(name=name)
    return f"`.{name}(…)` is a call of a built-in in the rules language: `{builtin}`"


def literal_hint(name: str) -> str | None:
    """The message for a name that is another language's literal, or None."""
    literal = LITERALS.get(name)
    return None if literal is None else f"`{name}` is written `{literal}` in the rules language"


def function_hint(name: str) -> str | None:
    """The message for a call of an unknown function that another language's method names
    (``startswith(s, "a")``), or None."""
    builtin = METHODS.get(name)
    if builtin is None or builtin.split("(", 1)[0] == name:
        return None
    return f"unknown function `{name}`: the rules language's is `{builtin}`"
