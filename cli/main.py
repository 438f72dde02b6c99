"""The ``beeuni`` command's entry point (``main``, called by the script bin/beeuni).

``beeuni validate`` runs in every CI job, and Typer alone takes longer to import than the whole
check of a small manifest. So the common forms of ``validate``, ``resolve`` and ``rules check``
(a maintainer's loop, and a CI step of a rules repository) are parsed here by hand and go
straight to ``commands``; anything else — ``--help``, a mistake, every other
command — goes to the Typer application, which owns the documented interface. A test runs both
paths on the same arguments and requires the same output. Measured through Typer instead, the
first run (``--no-cache``) of the starter takes 237 ms instead of 31.

For the same reason the modules of these commands do not import ``typing`` at run time (a tenth
of a small run): each says ``TYPE_CHECKING = False`` where ``from typing import TYPE_CHECKING``
would stand, which type checkers read the same way.
"""

from __future__ import annotations

import gc
import sys

from .shared import FORMATS, RULES_CHECK_FORMATS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

#: the options of ``validate`` that take a value → the keyword of ``commands.validate``
VALUE_OPTIONS = {
    "--format": "output_format",
    "--rules": "rules",
    "--output": "output",
    "--max-warnings": "max_warnings",
    "--module-timeout": "module_timeout",
}


def parse_validate(argv: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """``validate [PATH...] [--format F] [--rules DIR] [--output FILE] [--quiet] [--max-warnings N]
    [--modules] [--module-timeout S] [--no-cache]``
    → (paths, keyword arguments of ``commands.validate``), or None for anything this parser does
    not take (Typer then handles it, errors included)."""
    if not argv or argv[0] != "validate":
        return None
    paths: list[str] = []
    options: dict[str, Any] = {}
    args = iter(argv[1:])
    for arg in args:
        name, has_value, value = arg.partition("=")
        keyword = VALUE_OPTIONS.get(name)
        if keyword is not None and arg.startswith("--"):
            if not has_value:
                value = next(args, "")
            if not value or value.startswith("-") or keyword in options:
                return None
            if (name == "--format" and value not in FORMATS) or (name == "--max-warnings" and not value.isdigit()):
                return None
            if name == "--module-timeout":
                try:
                    options[keyword] = float(value)
                except ValueError:
                    return None
            else:
                options[keyword] = int(value) if name == "--max-warnings" else value
        elif arg in ("--quiet", "-q") and "quiet" not in options:
            options["quiet"] = True
        elif arg == "--modules" and "modules" not in options:
            options["modules"] = True
        elif arg == "--no-cache" and "no_cache" not in options:
            options["no_cache"] = True
        elif arg.startswith("-"):
            return None
        else:
            paths.append(arg)
    return (paths or ["."], options)


def parse_resolve(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``resolve [PATH] [--json] [--rules DIR] [--no-cache]`` → (path, keyword arguments of
    ``commands.resolve``), or None for anything else (``--schema`` included: Typer takes it)."""
    if not argv or argv[0] != "resolve":
        return None
    path: str | None = None
    options: dict[str, Any] = {"rules": None, "as_json": False}
    args = iter(argv[1:])
    for arg in args:
        name, has_value, value = arg.partition("=")
        if name == "--rules":
            if not has_value:
                value = next(args, "")
            if not value or value.startswith("-") or options["rules"] is not None:
                return None
            options["rules"] = value
        elif arg == "--json" and not options["as_json"]:
            options["as_json"] = True
        elif arg == "--no-cache" and "no_cache" not in options:
            options["no_cache"] = True
        elif arg.startswith("-") or path is not None:
            return None
        else:
            path = arg
    return (path or ".", options)


def parse_rules_check(argv: list[str]) -> tuple[str | None, str] | None:
    """``rules check [DIR] [--rules DIR] [--format F]`` → (the rules folder or None for the
    shipped rules, the format), or None for anything else (Typer takes it, and reports two
    different folders)."""
    if argv[:2] != ["rules", "check"]:
        return None
    folder: str | None = None
    option: str | None = None
    output_format: str | None = None
    args = iter(argv[2:])
    for arg in args:
        name, has_value, value = arg.partition("=")
        if name in ("--rules", "--format"):
            if not has_value:
                value = next(args, "")
            if not value or value.startswith("-"):
                return None
            if name == "--rules" and option is None:
                option = value
            elif name == "--format" and output_format is None and value in RULES_CHECK_FORMATS:
                output_format = value
            else:
                return None
        elif arg.startswith("-") or folder is not None:
            return None
        else:
            folder = arg
    if folder is not None and option is not None and folder != option:
        return None
    return (folder if folder is not None else option, output_format or "text")


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
    """The exit status of ``validate``, ``resolve`` or ``rules check`` in a form parsed here, run;
    None for anything else (the Typer application's)."""
    fast = parse_validate(argv)
    if fast is not None:
        paths, options = fast
        # a project unchanged since its last check is answered before the check is even imported;
        # `--no-cache` imports nothing of the result cache
        probe = None
        if not options.get("no_cache", False):
            from . import cached_results

            probe, hit = cached_results.look_up(
                paths,
                options.get("rules"),
                options.get("modules", False),
                options.get("output_format", "text"),
                options.get("output"),
                options.get("quiet", False),
                options.get("max_warnings"),
            )
            if hit is not None:
                return hit
        from . import commands

        return commands.guarded(lambda: commands.validate(paths, probe=probe, **options))
    resolving = parse_resolve(argv)
    if resolving is not None:
        path, keywords = resolving
        resolve_probe = None
        if not keywords.get("no_cache", False):
            from . import cached_results

            resolve_probe, hit = cached_results.look_up_resolve(path, keywords["rules"], keywords["as_json"])
            if hit is not None:
                return hit
        from . import commands

        return commands.guarded(lambda: commands.resolve(path, probe=resolve_probe, **keywords))
    checking = parse_rules_check(argv)
    if checking is not None:
        from . import commands

        rules, output_format = checking
        return commands.guarded(lambda: commands.rules_check(rules, output_format))
    return None


if __name__ == "__main__":
    main()
