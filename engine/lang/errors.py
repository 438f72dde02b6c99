"""The one error a rules file can raise: a mistake, reported like a manifest diagnostic."""

from __future__ import annotations


class RulesError(Exception):
    """A mistake in a rules file — syntax, an unknown name, a wrong arity, a missing clause — or
    a rule that failed while it ran. ``file`` is the rules file as the user named it."""

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{file}:{line}:{column}: {message}")
        self.file = file
        self.line = line
        self.column = column
        self.message = message
