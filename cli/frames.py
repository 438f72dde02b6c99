"""Code frames: a diagnostic with the source line it points at, the way ruff and rustc print.

    beeuni.yaml:9:1: warning[manifest/unknown-key] unknown key `agnets` is ignored (known keys: …)
      |
    9 | agnets:
      | ^^^^^^ manifest/unknown-key
      |
      = help: did you mean `agents`?

The carets span the reported value (``engine/yaml/spans.py``). The help line is the part of the
message that the rules' ``HELP_PATTERN`` matches (its first group); the rest stays in the first
line. Written for ``validate`` on a terminal and for ``--format full``; everything else prints
one line per diagnostic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from ..engine.lang.evaluator import Diagnostic
    from ..engine.lang.patterns import Regex
    from ..engine.yaml.spans import Sources

#: ANSI styles (SGR parameters) of the parts of a frame, used on a colour terminal
STYLES = {"error": "1;31", "warning": "1;33", "info": "1;36", "location": "1", "rule": "2", "gutter": "1;34"}


class Painter:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, part: str, text: str) -> str:
        return f"\x1b[{STYLES[part]}m{text}\x1b[0m" if self.colour and text else text


def split_help(message: str, help_pattern: Regex | None) -> tuple[str, str | None]:
    """The message without its help part, and the help part (None when there is none)."""
    found = help_pattern.search(message) if help_pattern is not None else None
    if found is None:
        return message, None
    return message[: found.start()] + message[found.end() :], found.group(1)


def header(d: Diagnostic, message: str, paint: Painter) -> str:
    severity = paint(d.severity if d.severity in STYLES else "info", d.severity)
    return f"{paint('location', f'{d.file}:{d.line}:{d.column}:')} {severity}{paint('rule', f'[{d.rule}]')} {message}"


def frame(d: Diagnostic, sources: Sources, help_pattern: Regex | None, paint: Painter) -> str:
    message, help_text = split_help(d.message, help_pattern)
    lines = [header(d, message, paint)]
    source = sources.line(d.file, d.line)
    gutter = " " * len(str(d.line))
    bar = paint("gutter", f"{gutter} |")
    if source is not None:
        span = sources.span(d.file, d.line, d.column)
        shown = source.replace("\t", " ")
        end = span.end_column if span.end_line == d.line else len(shown) + 1
        width = max(1, end - d.column)
        carets = paint(d.severity if d.severity in STYLES else "info", "^" * width)
        lines += [
            bar,
            f"{paint('gutter', f'{d.line} |')} {shown}".rstrip(),
            f"{bar} {' ' * (d.column - 1)}{carets} {paint('rule', d.rule)}",
        ]
    if help_text is not None:
        lines += [bar, f"{gutter} {paint('gutter', '=')} help: {help_text}"]
    return "\n".join(lines) + "\n"


def write_frames(
    diagnostics: Sequence[Diagnostic],
    sources: Sources,
    help_pattern: Regex | None,
    stream: TextIO,
    colour: bool,
) -> None:
    paint = Painter(colour)
    stream.write("\n".join(frame(d, sources, help_pattern, paint) for d in diagnostics))


def write_lines(diagnostics: Sequence[Diagnostic], stream: TextIO) -> None:
    """One coloured line per diagnostic (``--format concise`` on a terminal)."""
    paint = Painter(True)
    stream.write("".join(header(d, d.message, paint) + "\n" for d in diagnostics))
