"""What each command does, apart from how its arguments are parsed.

Each function returns the exit code. Both the Typer application (``app.py``) and the fast path
for ``validate`` (``main.py``) call these, so a command behaves the same whichever way it came in.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.lang import RulesError
from ..engine.paths import manifest_path
from ..engine.printable import printable
from ..engine.project import ManifestNotFound, ProjectRun, load_rules, locate, open_project
from . import report
from .shared import DEFAULT_MODULE_LIMIT, EXIT_ERRORS, EXIT_FAILURE, EXIT_OK, TEXT_FORMATS, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    from ..engine.lang.evaluator import Diagnostic
    from .formats import Findings

#: the rules' regular expression for the help part of a message, shown apart in a code frame
HELP_PATTERN = "HELP_PATTERN"
#: the rules' JSON Schema of a manifest
MANIFEST_SCHEMA = "MANIFEST_SCHEMA"
#: the rules' end of the summary line when fixes exist
FIX_HINT = "fix_hint"


def guarded(command: Callable[[], int]) -> int:
    """Run a command; a bad rules file, a missing manifest or a crash is a message and exit 2."""
    try:
        return command()
    except KeyboardInterrupt:
        sys.stderr.write("beeuni: interrupted\n")
    except Exception as err:  # the promise: never a traceback, unless asked for
        sys.stderr.write(failure_message(err) + "\n")
    return EXIT_FAILURE


def failure_message(err: Exception) -> str:
    """What reports a failure: a broken rule set by every problem in it, one line each, at its
    position; anything else in one line, named."""
    if isinstance(err, RulesError):
        return err.report().rstrip("\n")
    if isinstance(err, ManifestNotFound | UsageError):
        return f"beeuni: {printable(str(err))}"
    if os.environ.get("BEEUNI_DEBUG"):
        import traceback

        traceback.print_exc()
    return f"beeuni: internal error: {type(err).__name__}: {printable(str(err))}"


class Checked:
    """One manifest named on the command line: its run, or why it could not be checked."""

    __slots__ = ("failure", "run", "shown")

    def __init__(self, shown: str | None, run: ProjectRun | None, failure: str | None) -> None:
        self.shown = shown  # how it is named in the output; None when it is the only one
        self.run = run
        self.failure = failure


def validate(
    paths: list[str],
    output_format: str = "text",
    rules: str | None = None,
    *,
    output: str | None = None,
    quiet: bool = False,
    max_warnings: int | None = None,
    modules: bool = False,
    module_timeout: float = DEFAULT_MODULE_LIMIT,
) -> int:
    """Check each manifest; several are reported one after the other, each under its path, and
    the exit status is the worst of them. The format goes to standard output, or with ``output``
    to that file while standard output gets text. ``quiet`` shows errors only; ``max_warnings``
    turns more warnings than that (all manifests together) into a failure, exit 1. With
    ``modules``, every declared module is also loaded in Bun, each within ``module_timeout``
    seconds, and the rules check what that showed."""
    checked = _check(paths, rules, module_timeout if modules else None)
    if output is not None:
        import io

        from ..engine.paths import write_file_atomically

        written = io.StringIO()
        _write_validation(output_format, checked, quiet, written, to_terminal=False)
        write_file_atomically(os.path.abspath(output), written.getvalue().encode("utf-8"))
        output_format = "text"
    _write_validation(output_format, checked, quiet, sys.stdout, to_terminal=True)
    worst = max(EXIT_FAILURE if c.run is None else EXIT_ERRORS if c.run.count("error") else EXIT_OK for c in checked)
    warnings = sum(c.run.count("warning") for c in checked if c.run is not None)
    if max_warnings is not None and warnings > max_warnings:
        plural = "s" if warnings != 1 else ""
        sys.stderr.write(f"beeuni: {warnings} warning{plural}, more than --max-warnings {max_warnings} allows\n")
        worst = max(worst, EXIT_ERRORS)
    return worst


def _check(paths: list[str], rules: str | None, module_limit: float | None) -> list[Checked]:
    if len(paths) == 1:
        run = open_project(paths[0], rules, release_view=True)
        if module_limit is not None:
            _add_module_facts(run, module_limit)
        return [Checked(None, run, None)]
    program = load_rules(rules)
    checked = []
    for path in paths:
        shown = os.path.normpath(manifest_path(path))  # as given, the file name added to a folder
        try:
            repo, manifest = locate(path)
            run = ProjectRun(repo, manifest, program, release_view=True)
            if module_limit is not None:
                _add_module_facts(run, module_limit)
            run.diagnostics()
            checked.append(Checked(shown, run, None))
        except Exception as err:  # one manifest's failure is reported for it; the others still run
            checked.append(Checked(shown, None, failure_message(err)))
    return checked


def _add_module_facts(run: ProjectRun, limit: float) -> None:
    from .modules import add_module_facts

    add_module_facts(run, limit)


def _shown_diagnostics(run: ProjectRun, quiet: bool) -> list[Diagnostic]:
    diagnostics = run.diagnostics()
    return [d for d in diagnostics if d.severity == "error"] if quiet else diagnostics


def _write_validation(
    output_format: str, checked: list[Checked], quiet: bool, stream: TextIO, to_terminal: bool
) -> None:
    """Write the format to ``stream``; ``to_terminal``: this is the command's own output, which
    also reports failures and (for text) each manifest's count on standard error."""
    if output_format in TEXT_FORMATS:
        framed = output_format == "full" or (output_format == "text" and to_terminal and stream.isatty())
        for index, c in enumerate(checked):
            if c.shown is not None:
                stream.write(("\n" if index else "") + f"==> {c.shown} <==\n")
            if c.run is None:
                if to_terminal:
                    sys.stderr.write(f"{c.failure}\n")
                continue
            if framed:
                _write_frames(c.run, _shown_diagnostics(c.run, quiet), stream)
            else:
                report.write_diagnostics(_shown_diagnostics(c.run, quiet), stream)
            if to_terminal and not quiet:
                counts = report.summary(d.severity for d in c.run.diagnostics())
                sys.stderr.write(f"{c.shown or c.run.manifest}: {counts}{fix_hint(c.run)}\n")
        return
    if to_terminal:
        for c in checked:
            if c.failure is not None:
                sys.stderr.write(f"{c.failure}\n")
    if output_format == "json":
        documents = [
            {"path": c.shown, "failure": c.failure}
            if c.run is None
            else {"path": c.shown, **report.validate_document(c.run.manifest, _shown_diagnostics(c.run, quiet))}
            for c in checked
        ]
        report.write_json(
            documents if len(checked) > 1 else {k: v for k, v in documents[0].items() if k != "path"}, stream
        )
        return
    from . import formats

    formats.write(output_format, _findings(checked, quiet), stream)


def fix_hint(run: ProjectRun) -> str:
    """The end of the summary line when fixes exist: the rules' ``fix_hint`` of how many."""
    fixable = sum(1 for d in run.diagnostics() if d.fix is not None)
    if not fixable or FIX_HINT not in run.program["fns"]:
        return ""
    return str(run.call(FIX_HINT, fixable))


def _write_frames(run: ProjectRun, diagnostics: list[Diagnostic], stream: TextIO) -> None:
    """Code frames; ``HELP_PATTERN`` is RE2, as every pattern of the rules (``output`` checked
    that it compiles, with a group)."""
    from ..engine.lang import patterns
    from ..engine.yaml.spans import Sources, read_from
    from .frames import write_frames

    help_pattern = patterns.regex(str(run.output(HELP_PATTERN))) if HELP_PATTERN in run.program["lets"] else None
    write_frames(diagnostics, Sources(read_from(run.repo.root)), help_pattern, stream, report.use_colour(stream))


def _findings(checked: list[Checked], quiet: bool) -> Findings:
    """The diagnostics of every manifest, for a CI format: each file named by its path from the
    root of the git repository that holds it, else from the current folder (``ci_paths.py``),
    for one manifest as for several; the folder they are named from, when all share one, is
    SARIF's ``%SRCROOT%``."""
    import copy

    from ..engine.lang.evaluator import Diagnostic
    from ..engine.yaml.spans import Sources, read_from
    from .ci_paths import base_folder
    from .formats import Findings

    diagnostics = []
    full_paths: dict[str, str] = {}  # a file as named → its path on disk
    bases = set()
    runs = [c.run for c in checked if c.run is not None]
    for run in runs:
        base = base_folder(run.repo.root)
        bases.add(base)

        def named(file: str, root: str = run.repo.root, base: str = base) -> str:
            full = os.path.join(root, file)
            name = os.path.relpath(full, base)
            full_paths[name] = full
            return name

        for d in _shown_diagnostics(run, quiet):
            moved = Diagnostic(d.rule, d.severity, d.message, named(d.file), d.line, d.column, d.fix_value)
            if d.fix is not None:
                moved.fix = copy.copy(d.fix)
                moved.fix.file = named(d.fix.file)
            diagnostics.append(moved)
    read = read_from(os.sep)
    sources = Sources(lambda file: read(full_paths[file]) if file in full_paths else None)
    rules_metadata = runs[0].program["rules"] if runs else []
    return Findings(diagnostics, rules_metadata, sources, bases.pop() if len(bases) == 1 else None)


def tools_ls(
    path: str,
    rules: str | None,
    as_json: bool,
    agent: str | None = None,
    harness: str | None = None,
    parent: str | None = None,
    release: str | None = None,
) -> int:
    """What a session gets: of the working tree in the release view ``validate`` uses (git's
    index; before a repository's first commit a session serves the folder, and so does this), or
    with ``release`` of that commit as a session serves it (``release_listing.py``)."""
    if release is not None:
        from .release_listing import listed_release

        with listed_release(path, rules, release) as (run, commit):
            return _tools_ls(run, as_json, agent, harness, parent, commit)
    return _tools_ls(open_project(path, rules, release_view=_has_release(path)), as_json, agent, harness, parent, None)


def _has_release(path: str) -> bool:
    """Whether the project is in a git repository with a commit: a session serves a release then,
    else a copy of the folder as it is (outside git, or before the first commit)."""
    from ..engine.paths import git_top
    from ..engine.release.snapshot import ReleaseError, commit_of

    found = git_top(locate(path)[0].root)
    try:
        return found is not None and commit_of(found[0], None) is not None
    except ReleaseError:  # a repository git cannot read: the index says what it can
        return True


def _tools_ls(
    run: ProjectRun, as_json: bool, agent: str | None, harness: str | None, parent: str | None, commit: str | None
) -> int:
    from ..engine.release.served import error_line, refusal

    document = tools_ls_document(run, agent, harness, parent)
    refused = refusal(run)
    if commit is not None:
        document["release"] = commit
    if refused is not None:  # no session starts on it: it serves no tool
        document.update(tools=[], refused=error_line(refused))
    if as_json:
        report.write_json(document)
    else:
        footer = run.output("tools_ls_footer")  # read (and checked) before anything is written
        rows = [(tool["name"], tool["kind"], tool["source"]) for tool in document["tools"]]
        sys.stdout.write(report.table(("NAME", "KIND", "SOURCE"), rows))
        if footer and refused is None:
            sys.stdout.write("\n" + "".join(printable(line) + "\n" for line in footer))
    if refused is not None:
        from ..daemon.messages import say

        text = say(run.output("DAEMON_MESSAGES"), "release_invalid", detail=error_line(refused))
        sys.stderr.write(f"beeuni: {text}\n")
    return note_errors(run)


def tools_ls_document(
    run: ProjectRun, agent: str | None = None, harness: str | None = None, parent: str | None = None
) -> dict[str, Any]:
    """What `beeuni tools ls --json` prints (also what a rule test's expected selection holds):
    the session's tools, or with ``agent`` what that agent sees on ``harness`` (as a subagent of
    ``parent``, if given), and the fields that say which view this is. A tool the release lacks
    what it needs for is not among them but in ``unreleased``, with why."""
    from ..engine.release.served import unreleased

    which: dict[str, Any] = {}
    if agent is None:
        if harness is not None or parent is not None:
            raise UsageError("--harness and --parent go with --agent NAME")
        records = run.output("session_tools")
    else:
        harness = _harness(run, harness)
        _agent(run, agent)
        which.update(agent=agent, harness=harness)
        if parent is None:
            records = run.call("agent_tools", agent, harness)
        else:
            _agent(run, parent)
            problem = run.call("delegation_problem", parent, harness)
            if problem is not None:
                raise UsageError(problem)
            which["parent"] = parent
            records = run.call("subagent_tools", agent, parent, harness)
    missing = unreleased(run)
    declared = {tool["name"]: tool for tool in run.output("session_tools")}
    return {
        "manifest": run.manifest,
        "tools_key": run.output("tools_key"),
        "tools": [
            {key: record[key] for key in ("name", "kind", "source")}
            for record in records
            if record["name"] not in missing
        ],
        "removed": run.output("removed_beeuni_tools"),
        "unreleased": [
            {"name": name, "kind": declared[name]["kind"], "source": declared[name]["source"], "reason": reason}
            for name, reason in missing.items()
            if name in declared
        ],
        **which,
    }


def _harness(run: ProjectRun, harness: str | None) -> str:
    known: list[str] = run.output("HARNESSES")
    chosen = harness if harness is not None else run.output("DEFAULT_HARNESS")
    if chosen not in known:
        raise UsageError(f"unknown harness `{chosen}`; harnesses: {', '.join(known)}")
    return chosen


def _agent(run: ProjectRun, name: str) -> None:
    known: list[str] = run.output("agent_names")
    if name not in known:
        listed = ", ".join(known) if known else "none"
        raise UsageError(f"no agent named `{name}` in {run.manifest}; agents: {listed}")


def daemon(
    path: str = ".",
    *,
    port: int = 0,
    harness: str = "standard",
    agent: str = "beeuni",
    opencode_dir: str | None = None,
    connection_fd: int | None = None,
    timeout: float = 300.0,
    max_body: int = 1024 * 1024,
    spill_dir: str | None = None,
    max_output: int = 64 * 1024 * 1024,
    require_confinement: bool = False,
    release: str | None = None,
    read_timeout: float = 30.0,
    rules: str | None = None,
) -> int:
    """Start the daemon and serve until stopped (``daemon/server.py``); the defaults are the
    command line's (a test compares them with the Typer command's)."""
    from ..daemon.host.probe_process import LoadProcess

    # started first: its Python's start and imports overlap the daemon's, not the release's take
    loader = LoadProcess()
    try:
        from ..daemon.server import serve
        from .shared import bun

        return serve(
            bun(rules, path),
            path,
            rules,
            harness,
            agent,
            port,
            opencode_dir,
            connection_fd,
            timeout,
            max_body,
            spill_dir,
            max_output,
            require_confinement,
            release,
            read_timeout,
            loader,
        )
    finally:
        loader.close()


def resolve(path: str, rules: str | None, as_json: bool) -> int:
    """Print the resolved tool set."""
    from ..engine.resolve import resolve as resolve_tool_set

    run = open_project(path, rules)
    report.write_resolved(resolve_tool_set(run), as_json)
    return note_errors(run)


def resolve_schema() -> int:
    from ..engine.resolved import ResolvedToolSet

    report.write_json(ResolvedToolSet.model_json_schema())
    return EXIT_OK


def note_errors(run: ProjectRun) -> int:
    """Listing commands still list; a manifest with errors is said on stderr and exits 1."""
    errors = run.count("error")
    if not errors:
        return EXIT_OK
    sys.stderr.write(f"beeuni: {run.manifest} has {errors} error{'s' if errors != 1 else ''}; run `beeuni validate`\n")
    return EXIT_ERRORS


def manifest_schema(rules: str | None) -> int:
    """The JSON Schema of a manifest, as the rules define it (``MANIFEST_SCHEMA``)."""
    from ..engine.project import rules_only

    run = rules_only(rules)
    if MANIFEST_SCHEMA not in run.program["lets"]:
        raise UsageError(f"the rules define no `{MANIFEST_SCHEMA}`, the JSON Schema this command prints")
    report.write_json(run.output(MANIFEST_SCHEMA))
    return EXIT_OK


def rules_list(rules: str | None, as_json: bool) -> int:
    program = load_rules(rules)
    entries = sorted(program["rules"], key=lambda rule: rule["id"])
    if as_json:
        report.write_json([_rule_summary(rule) for rule in entries])
        return EXIT_OK
    rows = [(rule["id"], rule["severity"], rule["doc"].split("\n\n")[0].replace("\n", " ")) for rule in entries]
    sys.stdout.write(report.table(("RULE", "SEVERITY", "SUMMARY"), rows))
    return EXIT_OK


def rules_check(rules: str | None, output_format: str = "text") -> int:
    """Every problem of a rules folder, sorted; exit 1 when one is an error. ``output_format``:
    text, or a machine format of ``formats/`` (each problem a diagnostic of the id ``rules``)."""
    from ..engine.lang.errors import Problem
    from .shared import tested_folder

    sys.stderr.write(f"checking {tested_folder(rules, 'check')}\n")
    try:
        problems = [Problem(*found) for found in load_rules(rules)["problems"]]
    except RulesError as err:
        problems = err.problems
    if output_format == "text":
        sys.stdout.write("".join(problem.text() + "\n" for problem in problems))
    else:
        from ..engine.lang.evaluator import Diagnostic
        from ..engine.yaml.spans import Sources
        from . import formats

        found = [
            Diagnostic("rules", p.severity, printable(p.message), printable(p.file), p.line, p.column) for p in problems
        ]
        formats.write(output_format, formats.Findings(found, [], Sources(lambda _: None)), sys.stdout)
    sys.stderr.write(f"{rules or 'rules'}: {report.summary(problem.severity for problem in problems)}\n")
    return EXIT_ERRORS if any(problem.severity == "error" for problem in problems) else EXIT_OK


def rules_explain(name: str, rules: str | None) -> int:
    """A rule's id, severity and doc; or a `let`'s or `fn`'s place, doc comment and text."""
    from ..engine.project import rules_folder

    program = load_rules(rules)
    found = {rule["id"]: rule for rule in program["rules"]}
    rule = found.get(name)
    if rule is None:
        from .rules_helpers import explain_helper, helpers

        defined = {helper.name: helper for helper in helpers(program, rules_folder(rules)[0])}
        if name in defined:
            sys.stdout.write(explain_helper(defined[name]))
            return EXIT_OK
        from ..engine.lang.similar import closest_name

        close = closest_name(name, [*found, *defined])
        hint = f"; did you mean `{close}`?" if close else "; `beeuni rules list` lists the rules"
        raise UsageError(f"no rule, `let` or `fn` named `{name}`{hint}")
    summary = _rule_summary(rule)
    sys.stdout.write(
        f"{summary['id']} ({summary['severity']})\ndefined at {summary['defined_at']}\n\n{summary['doc']}\n"
    )
    return EXIT_OK


def _rule_summary(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": rule["id"],
        "severity": rule["severity"],
        "doc": rule["doc"],
        "defined_at": f"{rule['file']}:{rule['pos'][0]}",
    }


def secrets_set(assignment: str, path: str, rules: str | None) -> int:
    from ..daemon.serving.secrets import SecretStore

    name, equals, source = assignment.partition("=")
    if not equals or source != "-":
        hint = "a value on the command line ends up in shell history"
        raise UsageError(f"write `{name or 'NAME'}=-` and pass the value on standard input: {hint}")
    run = open_project(path, rules)
    problem = run.call("secret_name_problem", name)
    if problem is not None:
        raise UsageError(problem)
    data = sys.stdin.buffer.read()  # bytes: a value is stored exactly, or refused, never altered
    data = data[:-1] if data.endswith(b"\n") else data
    try:
        value = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(run.call("secrets_refusal", "not-utf8", name)) from None
    if not value:
        raise UsageError(run.call("secrets_refusal", "empty", name))
    SecretStore(run.repo.root).set(name, value)
    sys.stderr.write(f"beeuni: stored secret {name} for {run.repo.root}\n")
    return EXIT_OK


def secrets_rm(name: str, path: str, rules: str | None) -> int:
    from ..daemon.serving.secrets import SecretStore

    run = open_project(path, rules)
    if not SecretStore(run.repo.root).remove(name):
        raise UsageError(run.call("secrets_refusal", "not-set", name))
    sys.stderr.write(f"beeuni: removed secret {name} for {run.repo.root}\n")
    return EXIT_OK


def secrets_ls(path: str) -> int:
    from ..daemon.serving.secrets import SecretStore

    repo, _ = locate(path)
    for name in SecretStore(repo.root).names():
        sys.stdout.write(name + "\n")
    return EXIT_OK
