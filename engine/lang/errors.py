"""What a rules folder can be told: problems with a position, and the error that carries them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..printable import printable

if TYPE_CHECKING:
    from typing import Any


class Problem:
    """One finding about a rules file: ``severity`` is ``error`` or ``warning``; ``file`` is the
    rules file as the user named it."""

    __slots__ = ("column", "file", "line", "message", "severity")

    def __init__(self, file: str, line: int, column: int, message: str, severity: str = "error") -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.severity = severity

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.severity, self.message)

    def text(self) -> str:
        """The report line: ``file:line:col: error[rules] message``. The message may quote a
        value of the rules or of a manifest, and the file is named as the user gave it: both
        are shown escaped, so neither can split the line or forge another."""
        return f"{printable(self.file)}:{self.line}:{self.column}: {self.severity}[rules] {printable(self.message)}"

    def as_tuple(self) -> tuple[str, int, int, str, str]:
        """For the rule cache (``marshal`` takes tuples, not objects)."""
        return (self.file, self.line, self.column, self.message, self.severity)


class Findings:
    """The problems a check of a rule set found so far, each with the file it is in."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, node: dict[str, Any], message: str, file: str, severity: str = "error") -> None:
        """Record ``message`` at the position of the parsed ``node`` (its start, else 1:1)."""
        line, column = node.get("pos", [1, 1])
        self.problems.append(Problem(file, line, column, message, severity))


class RulesError(Exception):
    """A rules folder that cannot run: every problem found in it (at least one error), sorted.
    ``file``, ``line``, ``column`` and ``message`` are those of the first error."""

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        self.problems = [Problem(file, line, column, message)]
        super().__init__(self.problems[0].text())
        self.file = file
        self.line = line
        self.column = column
        self.message = message

    @classmethod
    def of(cls, problems: list[Problem]) -> RulesError:
        """The error of a rule set with these problems, of which at least one is an error."""
        ordered = sorted(problems, key=Problem.sort_key)
        first = next(problem for problem in ordered if problem.severity == "error")
        error = cls(first.file, first.line, first.column, first.message)
        error.problems = ordered
        return error

    def report(self) -> str:
        return "".join(problem.text() + "\n" for problem in self.problems)
