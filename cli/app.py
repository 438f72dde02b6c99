"""The ``beeuni`` command line, as a Typer application.

Commands are thin: they parse arguments and call ``commands.py``. Every command takes
``--rules DIR`` to run against edited rules without reinstalling.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer.core import MarkupMode

from . import commands
from .shared import DEFAULT_MODULE_LIMIT, beeuni_version

if TYPE_CHECKING:
    from collections.abc import Callable

#: help and usage errors in Rich's panels on a terminal only; elsewhere Click's plain text, which
#: depends on no terminal width, and Rich is not imported (the groups added below follow the
#: application's mode: Typer builds them with it)
MARKUP: MarkupMode = "rich" if sys.stdout.isatty() else None

app = typer.Typer(
    name="beeuni",
    rich_markup_mode=MARKUP,
    help="Validate a Beeuni project's manifest and resolve the tools its sessions get.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
tools_app = typer.Typer(help="Show and change the tools a session gets.", no_args_is_help=True)
rules_app = typer.Typer(help="List, explain, check and test the rules that validate a manifest.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")
app.add_typer(rules_app, name="rules")

RulesOption = Annotated[
    str | None,
    typer.Option("--rules", metavar="DIR", help="Rules folder to use instead of the shipped rules."),
]
PathArgument = Annotated[str, typer.Argument(help="A manifest, or a folder holding beeuni.yaml.")]
PathsArgument = Annotated[
    list[str] | None, typer.Argument(help="Manifests, or folders holding beeuni.yaml (default: the current folder).")
]
#: the formats of shared.py, as Typer takes choices (test_import_cycles.py holds them equal)
OutputFormat = Literal["text", "concise", "full", "json", "github", "sarif", "gitlab"]
RulesCheckFormat = Literal["text", "github", "sarif", "gitlab"]


def _run(command: Callable[[], int]) -> None:
    """Run the command; its exit status is the process's."""
    raise typer.Exit(commands.guarded(command))


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"beeuni {beeuni_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Validate a Beeuni project's manifest and resolve the tools its sessions get."""


@app.command()
def validate(
    paths: PathsArgument = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            help="text (code frames on a terminal, else one line each), concise (one line each), "
            "full (code frames), json, github (workflow commands), sarif (SARIF 2.1.0) or gitlab (Code Quality).",
        ),
    ] = "text",
    output: Annotated[
        str | None,
        typer.Option("--output", metavar="FILE", help="Write the format to FILE; standard output gets text."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only.")] = False,
    max_warnings: Annotated[
        int | None,
        typer.Option("--max-warnings", metavar="N", min=0, help="Exit 1 when there are more than N warnings."),
    ] = None,
    rules: RulesOption = None,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Apply the rules' fixes (imports too), then check again and print what remains."),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the fixes as a unified diff and write nothing (exit 1 if any).")
    ] = False,
    modules: Annotated[
        bool, typer.Option("--modules", help="Also load every declared module in Bun (calling nothing) and check it.")
    ] = False,
    module_timeout: Annotated[
        float, typer.Option("--module-timeout", metavar="S", help="Seconds one module may take to load.")
    ] = DEFAULT_MODULE_LIMIT,
) -> None:
    """Check manifests: one line per diagnostic (a code frame on a terminal), grouped per manifest
    when there are several. Exit 1 on an error, 2 on a failure (the worst of all manifests)."""
    options: dict[str, Any] = {"output": output, "quiet": quiet, "max_warnings": max_warnings}
    if fix or diff:
        from .fix import validate_fix

        _run(lambda: validate_fix(paths or ["."], output_format, rules, not diff, **options))
    options.update(modules=modules, module_timeout=module_timeout)
    _run(lambda: commands.validate(paths or ["."], output_format, rules, **options))


@tools_app.command("ls")
def tools_ls(
    path: PathArgument = ".",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    agent: Annotated[
        str | None, typer.Option("--agent", metavar="NAME", help="List what this agent sees, harness tools included.")
    ] = None,
    harness: Annotated[
        str | None, typer.Option("--harness", metavar="HARNESS", help="standard (default) or experimental.")
    ] = None,
    parent: Annotated[
        str | None, typer.Option("--parent", metavar="AGENT", help="List what --agent sees as this agent's subagent.")
    ] = None,
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            metavar="REV",
            help="List the tools of a release (a commit, a branch, a tag) as a session on it serves them.",
        ),
    ] = None,
    rules: RulesOption = None,
) -> None:
    """List the tools a session (or an agent) gets, then the Beeuni tools the project removed and
    the tools the release lacks something for, with why. Without --release, the release is what
    `validate` checks: the files git's index holds."""
    _run(lambda: commands.tools_ls(path, rules, as_json, agent, harness, parent, release))


@tools_app.command("eject")
def tools_eject(
    name: Annotated[str, typer.Argument(help="The Beeuni tool to copy into the project.")],
    path: PathArgument = ".",
    force: Annotated[bool, typer.Option("--force", help="Overwrite the copy, or replace another module.")] = False,
    rules: RulesOption = None,
) -> None:
    """Make the project's own copy of a Beeuni tool and point the manifest at it."""
    from .eject import eject

    _run(lambda: eject(name, path, rules, force))


@tools_app.command("new")
def tools_new(
    name: Annotated[str, typer.Argument(help="The new tool's name.")],
    path: PathArgument = ".",
    module: Annotated[
        str | None,
        typer.Option("--path", metavar="FILE", help="The module's repo-relative path (default tools/NAME.ts)."),
    ] = None,
    rules: RulesOption = None,
) -> None:
    """Write a project tool's module skeleton and declare it under `tools:`."""
    from .new_tool import new_tool

    _run(lambda: new_tool(name, path, rules, module))


@tools_app.command("migrate")
def tools_migrate(
    path: PathArgument = ".",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and change nothing.")] = False,
    module_timeout: Annotated[
        float, typer.Option("--module-timeout", metavar="S", help="Seconds each tool file may take to load.")
    ] = DEFAULT_MODULE_LIMIT,
    rules: RulesOption = None,
) -> None:
    """Move the opencode custom tools of a project to the daemon: delete copies of Beeuni tools,
    convert the others into served modules under tools/."""
    from .migrate import migrate

    _run(lambda: migrate(path, rules, dry_run, module_timeout))


@tools_app.command("call")
def tools_call(
    name: Annotated[str, typer.Argument(help="The tool to call.")],
    path: PathArgument = ".",
    agent: Annotated[str, typer.Option("--agent", metavar="NAME", help="The calling agent.")] = "beeuni",
    harness: Annotated[str, typer.Option("--harness", help="standard or experimental.")] = "standard",
    arguments: Annotated[
        str, typer.Option("--args", metavar="JSON", help="The arguments as JSON; `-` reads them from stdin.")
    ] = "{}",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {output | error, status, duration_ms, spilled}.")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds the call may run.")] = 300.0,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the tool as the daemon lists it (its parameters); do not run it.")
    ] = False,
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            metavar="REV",
            help="Call the tool of a release (a commit, as a session serves it) instead of the working tree.",
        ),
    ] = None,
    rules: RulesOption = None,
) -> None:
    """Call a tool once, as a session would, without starting the daemon. It runs the working tree
    as it is (your edits, untracked files included); a session runs its release, what git tracks
    at a commit: `--release HEAD` calls that."""
    from .call import tools_call as call

    _run(lambda: call(name, path, rules, agent, harness, arguments, as_json, timeout, schema, release))


cr_app = typer.Typer(
    help="Change requests: the working tree's change, committed, pushed and opened.", no_args_is_help=True
)
app.add_typer(cr_app, name="cr")


@cr_app.command("open")
def cr_open(
    title: Annotated[str, typer.Option("--title", metavar="TITLE", help="The commit's and the request's title.")],
    path: PathArgument = ".",
    body: Annotated[str | None, typer.Option("--body", metavar="TEXT", help="The request's description.")] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", metavar="BRANCH", help="The branch to merge into (default: the current branch's upstream)."
        ),
    ] = None,
    rules: RulesOption = None,
) -> None:
    """Open a change request of the working tree's change: one commit on a new branch, with the
    tracked files changed and what the release needs (never stray files), checked as `validate`
    checks it, pushed, and opened with the forge's own client where one is logged in. Your
    branch, index and working tree stay as they are."""
    from .change_request import cr_open as open_

    _run(lambda: open_(title, body, base, path, rules))


@app.command()
def init(
    path: Annotated[str, typer.Argument(help="The project's folder (made if missing).")] = ".",
    rules: RulesOption = None,
) -> None:
    """Write a new project's beeuni.yaml: the Beeuni tools under `tools:` and the session agent.
    Never overwrites a manifest (exit 2)."""
    from .init_project import init as init_

    _run(lambda: init_(path, rules))


@app.command()
def daemon(
    path: PathArgument = ".",
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port).")] = 0,
    harness: Annotated[str, typer.Option("--harness", help="standard or experimental.")] = "standard",
    agent: Annotated[str, typer.Option("--agent", metavar="NAME", help="The session's agent.")] = "beeuni",
    opencode_dir: Annotated[
        str | None, typer.Option("--opencode-dir", help="opencode's config folder (default: <repo>/.opencode).")
    ] = None,
    connection_fd: Annotated[
        int | None,
        typer.Option(
            "--connection-fd",
            metavar="N",
            help="An inherited socket: the daemon writes its URL and token to it, once serving, and closes it.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a tool call may run.")] = 300.0,
    max_body: Annotated[
        int, typer.Option("--max-body", metavar="BYTES", min=1, help="Largest arguments of a call (413 beyond).")
    ] = 1024 * 1024,
    spill_dir: Annotated[
        str | None,
        typer.Option(
            "--spill-dir", help="Keep large outputs here (default: a private temporary folder, removed at exit)."
        ),
    ] = None,
    max_output: Annotated[
        int,
        typer.Option("--max-output", metavar="BYTES", min=1, help="Largest output of a tool call (413 beyond)."),
    ] = 64 * 1024 * 1024,
    require_confinement: Annotated[
        bool,
        typer.Option(
            "--require-confinement",
            help="Refuse to start when tool modules cannot be confined (Landlock, seccomp, PID namespaces) or the"
            " token guarded (Yama).",
        ),
    ] = False,
    release: Annotated[
        str | None,
        typer.Option(
            "--release", metavar="REV", help="The commit to serve (default: the one HEAD names at the start)."
        ),
    ] = None,
    read_timeout: Annotated[
        float,
        typer.Option(
            "--read-timeout", metavar="SECONDS", min=0.001, help="Seconds a request may take to arrive (408 beyond)."
        ),
    ] = 30.0,
    rules: RulesOption = None,
) -> None:
    """Serve the session's tools on 127.0.0.1 for both harnesses (started at session start): the
    release — the files git tracks at one commit — never the working tree."""
    options = dict(locals())  # each by its name, as commands.daemon takes them (a test compares the two)
    _run(lambda: commands.daemon(**options))


sessions_app = typer.Typer(help="Run a local session on either harness and read its log.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")


@sessions_app.command("new")
def sessions_new(
    prompt: Annotated[str, typer.Option("--prompt", metavar="TEXT", help="What to ask the agent.")],
    path: PathArgument = ".",
    agent: Annotated[
        str | None, typer.Option("--agent", metavar="NAME", help="The agent (default: the session agent).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", metavar="PROVIDER/MODEL", help="The model (default: opencode's configured one)."),
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the end and print the final answer.")] = False,
    harness: Annotated[
        str,
        typer.Option(
            "--harness",
            metavar="HARNESS",
            help="standard (opencode, the default) or experimental (the turn loop in the daemon).",
        ),
    ] = "standard",
    rules: RulesOption = None,
) -> None:
    """Start a session: the daemon and its harness, with the project's tools; print its id."""
    from .sessions import sessions_new as new

    _run(lambda: new(path, rules, prompt, agent, model, wait, harness))


@sessions_app.command("prompt")
def sessions_prompt(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id.")],
    prompt: Annotated[str, typer.Option("--prompt", metavar="TEXT", help="What to ask the agent.")],
    path: PathArgument = ".",
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the end and print the final answer.")] = False,
    rules: RulesOption = None,
) -> None:
    """A later turn of a session: the same conversation, served from the session's release."""
    from .sessions import sessions_prompt as prompt_

    _run(lambda: prompt_(session_id, path, rules, prompt, wait))


@sessions_app.command("converge")
def sessions_converge(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id.")],
    path: PathArgument = ".",
    release: Annotated[
        str | None, typer.Option("--release", metavar="REV", help="The commit to serve (default: HEAD now).")
    ] = None,
    rules: RulesOption = None,
) -> None:
    """Move a session to another release: at once while a turn runs (from its next tool call on),
    else from its next turn on."""
    from .sessions import sessions_converge as converge

    _run(lambda: converge(session_id, path, rules, release))


@sessions_app.command("log")
def sessions_log(
    session_id: Annotated[str, typer.Argument(metavar="ID", help="The session's id.")],
    path: PathArgument = ".",
    as_json: Annotated[bool, typer.Option("--json", help="Print {session, messages} as JSON.")] = False,
    rules: RulesOption = None,
) -> None:
    """Print a session's messages in order, with every tool call and its status."""
    from .sessions import sessions_log as log

    _run(lambda: log(session_id, path, rules, as_json))


@sessions_app.command("ls")
def sessions_ls(
    path: PathArgument = ".",
    as_json: Annotated[bool, typer.Option("--json", help="Print the sessions as JSON.")] = False,
    rules: RulesOption = None,
) -> None:
    """List the project's sessions, newest first."""
    from .sessions import sessions_ls as ls

    _run(lambda: ls(path, rules, as_json))


secrets_app = typer.Typer(help="Store the project's secrets (values are never printed).", no_args_is_help=True)
app.add_typer(secrets_app, name="secrets")


@secrets_app.command("set")
def secrets_set(
    assignment: Annotated[
        str, typer.Argument(metavar="NAME=-", help="The secret's name; the value is read from stdin.")
    ],
    path: PathArgument = ".",
    rules: RulesOption = None,
) -> None:
    """Store a secret for the project; the value is read from standard input."""
    _run(lambda: commands.secrets_set(assignment, path, rules))


@secrets_app.command("rm")
def secrets_rm(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The secret to remove.")],
    path: PathArgument = ".",
    rules: RulesOption = None,
) -> None:
    """Remove a secret of the project."""
    _run(lambda: commands.secrets_rm(name, path, rules))


@secrets_app.command("ls")
def secrets_ls(path: PathArgument = ".") -> None:
    """List the names of the project's secrets (never their values)."""
    _run(lambda: commands.secrets_ls(path))


@app.command()
def resolve(
    path: PathArgument = ".",
    as_json: Annotated[bool, typer.Option("--json", help="Print the resolved tool set as JSON.")] = False,
    schema: Annotated[bool, typer.Option("--schema", help="Print the JSON Schema of the resolved tool set.")] = False,
    rules: RulesOption = None,
) -> None:
    """Resolve the tool set the daemon loads: per harness, what each agent and subagent sees."""
    if schema:
        _run(commands.resolve_schema)
    _run(lambda: commands.resolve(path, rules, as_json))


@app.command()
def schema(rules: RulesOption = None) -> None:
    """Print the JSON Schema of beeuni.yaml, built from the rules' data, for editors."""
    _run(lambda: commands.manifest_schema(rules))


@app.command()
def lsp(rules: RulesOption = None) -> None:
    """Run the language server on standard input and output (for editors)."""
    from .lsp.server import serve

    _run(lambda: serve(rules))


@rules_app.command("list")
def rules_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    rules: RulesOption = None,
) -> None:
    """List every rule: id, severity and summary."""
    _run(lambda: commands.rules_list(rules, as_json))


@rules_app.command("check")
def rules_check(
    rules_dir: Annotated[
        str | None, typer.Argument(metavar="[DIR]", help="The rules folder to check (default: the shipped rules).")
    ] = None,
    rules: RulesOption = None,
    output_format: Annotated[
        RulesCheckFormat, typer.Option("--format", help="text, github, sarif or gitlab (as for validate).")
    ] = "text",
) -> None:
    """Check a rules folder without any manifest: print every problem. Exit 1 on an error."""
    _run(lambda: commands.rules_check(_one_folder(rules_dir, rules), output_format))


def _one_folder(argument: str | None, option: str | None) -> str | None:
    if argument is not None and option is not None and argument != option:
        raise typer.BadParameter(f"two rules folders given: {argument} and --rules {option}")
    return argument if argument is not None else option


@rules_app.command("explain")
def rules_explain(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A rule id, like tools/name-format, or a `let` or `fn`.")],
    rules_dir: Annotated[
        str | None, typer.Argument(metavar="[DIR]", help="The rules folder (default: the shipped rules).")
    ] = None,
    rules: RulesOption = None,
) -> None:
    """Show a rule's documentation, or where a `let` or `fn` is defined, its doc comment and text."""
    _run(lambda: commands.rules_explain(name, _one_folder(rules_dir, rules)))


@rules_app.command("test")
def rules_test(
    folder: Annotated[
        str | None, typer.Argument(metavar="DIR", help="Rules folder whose tests/ to run (default: the shipped rules).")
    ] = None,
) -> None:
    """Run the test cases kept beside the rules (DIR/tests/<case>/); report failures and coverage."""
    from .rule_tests import rules_test

    _run(lambda: rules_test(folder))


@rules_app.command("diff")
def rules_diff(
    base: Annotated[str, typer.Option("--base", metavar="DIR", help="The rules before the change.")],
    projects: Annotated[
        list[str] | None, typer.Argument(metavar="PROJECT...", help="Projects: manifests or folders holding one.")
    ] = None,
    corpus: Annotated[
        str | None, typer.Option("--corpus", metavar="FILE", help="A file listing projects, one per line.")
    ] = None,
    output_format: Annotated[
        Literal["text", "json", "markdown"], typer.Option("--format", help="Output format.")
    ] = "text",
    fail_on: Annotated[
        Literal["any", "new-errors"],
        typer.Option("--fail-on", help="any: exit 1 on any change; new-errors: only on new errors."),
    ] = "any",
    workers: Annotated[
        int | None, typer.Option("--workers", metavar="N", help="Local processes (default: every core).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", metavar="ADDRESS", help="Run on this Dask scheduler (needs the dask extra)."),
    ] = None,
    rules: Annotated[
        str | None,
        typer.Option("--rules", metavar="DIR", help="The rules after the change (default: the shipped rules)."),
    ] = None,
) -> None:
    """Compare two rule sets over projects: diagnostics, session tools and agents' visible tools
    that change. Exit 0 when nothing changed, 1 when something did, 2 on a usage or rules error."""
    from .rules_diff import rules_diff as run

    _run(lambda: run(projects or [], corpus, base, rules, output_format, fail_on, workers, scheduler))


@rules_app.command("doc")
def rules_doc(
    folder: Annotated[
        str | None, typer.Argument(metavar="DIR", help="Rules folder to document (default: the shipped rules).")
    ] = None,
    of_helpers: Annotated[
        bool, typer.Option("--helpers", help="Print the reference of the helpers: every `let` and `fn`.")
    ] = False,
) -> None:
    """Print the manifest reference: every rule with its doc and examples from its test cases."""
    from .rules_doc import rules_doc

    _run(lambda: rules_doc(folder, of_helpers))
