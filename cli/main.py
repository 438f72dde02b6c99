"""The entry point of the ``beeuni`` command (``main``).

The common forms of ``validate``, ``resolve`` and ``daemon`` (as a session's starter runs it) are
parsed here by hand and go straight to ``commands``, without importing Typer (``fast_command``);
anything else — ``--help``, a mistake, every other command — goes to the Typer application,
which owns the documented interface. A test runs both paths on the same arguments and requires
the same output.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

from .shared import FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    #: a command's options with a value (→ keyword, conversion) and its flags (→ keyword)
    Takes = tuple[dict[str, tuple[str, Callable[[str], Any]]], dict[str, str]]


def _choice(*allowed: str) -> Callable[[str], str]:
    def chosen(value: str) -> str:
        if value not in allowed:
            raise ValueError(value)
        return value

    return chosen


def _count(value: str) -> int:
    if not value.isdigit():
        raise ValueError(value)
    return int(value)


#: what each command takes here (a value the conversion refuses is Typer's to report)
VALIDATE: Takes = (
    {
        "--format": ("output_format", _choice(*FORMATS)),
        "--rules": ("rules", str),
        "--output": ("output", str),
        "--max-warnings": ("max_warnings", _count),
        "--module-timeout": ("module_timeout", float),
    },
    {"--quiet": "quiet", "-q": "quiet", "--modules": "modules"},
)
RESOLVE: Takes = ({"--rules": ("rules", str)}, {"--json": "as_json"})


def _at_least(least: float, convert: Callable[[str], float]) -> Callable[[str], Any]:
    def converted(value: str) -> Any:
        number = convert(value)
        if not number >= least:
            raise ValueError(value)
        return number

    return converted


DAEMON: Takes = (
    {
        "--port": ("port", _count),
        "--harness": ("harness", str),
        "--agent": ("agent", str),
        "--opencode-dir": ("opencode_dir", str),
        "--connection-fd": ("connection_fd", _count),
        "--timeout": ("timeout", float),
        "--max-body": ("max_body", _at_least(1, _count)),
        "--spill-dir": ("spill_dir", str),
        "--max-output": ("max_output", _at_least(1, _count)),
        "--release": ("release", str),
        "--read-timeout": ("read_timeout", _at_least(0.001, float)),
        "--rules": ("rules", str),
    },
    {"--require-confinement": "require_confinement"},
)


def parse(args: list[str], takes: Takes) -> tuple[list[str], dict[str, Any]] | None:
    """The paths and the keyword arguments of ``args``, each option at most once; None for
    anything this parser does not take (Typer then handles it, errors included)."""
    values, flags = takes
    paths: list[str] = []
    options: dict[str, Any] = {}
    arguments = iter(args)
    for arg in arguments:
        name, has_value, value = arg.partition("=")
        if name in values and arg.startswith("--"):
            keyword, convert = values[name]
            if not has_value:
                value = next(arguments, "")
            if not value or value.startswith("-") or keyword in options:
                return None
            try:
                options[keyword] = convert(value)
            except ValueError:
                return None
        elif arg in flags and flags[arg] not in options:
            options[flags[arg]] = True
        elif arg.startswith("-"):
            return None
        else:
            paths.append(arg)
    return paths, options


def parse_validate(argv: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """``validate [PATH...] [--format F] [--rules DIR] [--output FILE] [--quiet] [--max-warnings N]
    [--modules] [--module-timeout S]`` → (paths, keyword arguments of
    ``commands.validate``)."""
    parsed = parse(argv[1:], VALIDATE) if argv[:1] == ["validate"] else None
    return None if parsed is None else (parsed[0] or ["."], parsed[1])


def parse_resolve(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``resolve [PATH] [--json] [--rules DIR]`` → (path, keyword arguments of
    ``commands.resolve``); ``--schema`` is Typer's."""
    parsed = parse(argv[1:], RESOLVE) if argv[:1] == ["resolve"] else None
    if parsed is None or len(parsed[0]) > 1:
        return None
    return (parsed[0] or ["."])[0], {"rules": None, "as_json": False, **parsed[1]}


def parse_daemon(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``daemon [PATH] [--port N] [--harness H] … [--require-confinement]`` → (path, keyword
    arguments of ``commands.daemon``)."""
    parsed = parse(argv[1:], DAEMON) if argv[:1] == ["daemon"] else None
    if parsed is None or len(parsed[0]) > 1:
        return None
    return (parsed[0] or ["."])[0], parsed[1]


def main() -> None:
    """Run the command of ``sys.argv``."""
    # A command is a short process that builds many small objects and frees them at exit: the
    # cyclic garbage collector would only walk them again and again (a third of a large run),
    # and once more at exit, unless they are frozen out of its reach first.
    gc.disable()
    from .closed_pipe import drop_output_once_the_reader_leaves

    drop_output_once_the_reader_leaves()
    try:
        status = fast_command(sys.argv[1:])
        if status is None:
            from .app import app

            app()
            return
        sys.exit(status)
    finally:
        gc.freeze()


def fast_command(argv: list[str]) -> int | None:
    """Saves 77 % of ``validate`` of the starter, 54 % of 2,000 tools, 34 % of ``resolve`` of 2,000;
    13 % of a release's first daemon start (622 against 541 ms), 21 % of a later one (518 against
    411 ms: each turn's).

    The exit status of ``validate``, ``resolve`` or ``daemon`` in a form parsed here, run; None for
    anything else (the Typer application's). Through Typer, the starter's first run takes 866 M
    instructions instead of 202."""
    fast = parse_validate(argv)
    if fast is not None:
        paths, options = fast
        from . import commands

        return commands.guarded(lambda: commands.validate(paths, **options))
    resolving = parse_resolve(argv)
    if resolving is not None:
        path, keywords = resolving
        from . import commands

        return commands.guarded(lambda: commands.resolve(path, **keywords))
    serving = parse_daemon(argv)
    if serving is not None:  # each turn's start waits for it
        path, keywords = serving
        from . import commands

        return commands.guarded(lambda: commands.daemon(path, **keywords))
    return None


if __name__ == "__main__":
    main()
