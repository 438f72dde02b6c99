"""The console script's entry point.

``beeuni validate`` runs in every CI job, and Typer alone takes longer to import than the whole
check of a small manifest. So the common forms of ``validate`` are parsed here by hand and go
straight to ``commands.validate``; anything else — ``--help``, a mistake, every other command —
goes to the Typer application, which owns the documented interface. A test runs both paths on
the same arguments and requires the same output.
"""

from __future__ import annotations

import gc
import sys


def parse_validate(argv: list[str]) -> tuple[list[str], str, str | None] | None:
    """``validate [PATH...] [--format text|json] [--rules DIR]`` → (paths, format, rules), or
    None for anything this parser does not take (Typer then handles it, errors included)."""
    if not argv or argv[0] != "validate":
        return None
    paths: list[str] = []
    output_format, rules = "text", None
    args = iter(argv[1:])
    for arg in args:
        name, has_value, value = arg.partition("=")
        if name in ("--format", "--rules") and arg.startswith("--"):
            if not has_value:
                value = next(args, "")
            if not value or value.startswith("-"):
                return None
            if name == "--format":
                if value not in ("text", "json"):
                    return None
                output_format = value
            else:
                rules = value
        elif arg.startswith("-"):
            return None
        else:
            paths.append(arg)
    return (paths or ["."], output_format, rules)


def main() -> None:
    # A command is a short process that builds many small objects and frees them at exit: the
    # cyclic garbage collector would only walk them again and again (a third of a large run).
    gc.disable()
    fast = parse_validate(sys.argv[1:])
    if fast is not None:
        from . import commands

        paths, output_format, rules = fast
        sys.exit(commands.guarded(lambda: commands.validate(paths, output_format, rules)))
    from .app import app

    app()


if __name__ == "__main__":
    main()
