"""What each command does, apart from how its arguments are parsed.

Each function returns the exit code. Both the Typer application (``app.py``) and the fast path
for ``validate`` (``main.py``) call these, so a command behaves the same whichever way it came in.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..engine.lang import RulesError
from ..engine.lang.values import text
from ..engine.project import MANIFEST_NAME, ManifestNotFound, ProjectRun, load_rules, locate, open_project
from . import report

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

EXIT_OK, EXIT_ERRORS, EXIT_FAILURE = 0, 1, 2


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
    """The one line that reports a failure: a rules error at its position, anything else named."""
    if isinstance(err, RulesError):
        return f"{err.file}:{err.line}:{err.column}: error[rules] {err.message}"
    if isinstance(err, ManifestNotFound | UsageError):
        return f"beeuni: {err}"
    if os.environ.get("BEEUNI_DEBUG"):
        import traceback

        traceback.print_exc()
    return f"beeuni: internal error: {type(err).__name__}: {err}"


class UsageError(Exception):
    """A request the command cannot serve (an unknown agent, a bad combination of options)."""


def validate(paths: list[str], output_format: str, rules: str | None) -> int:
    """Check each manifest; several are reported one after the other, each under its path, and
    the exit status is the worst of them."""
    if len(paths) == 1:
        return _validate_one(open_project(paths[0], rules), output_format, None)
    program = load_rules(rules)
    documents: list[dict[str, Any]] = []
    worst = EXIT_OK
    for index, path in enumerate(paths):
        shown = shown_manifest(path)
        if output_format == "text":
            sys.stdout.write(("\n" if index else "") + f"==> {shown} <==\n")
        try:
            repo, manifest = locate(path)
            code = _validate_one(ProjectRun(repo, manifest, program), output_format, shown, documents)
        except Exception as err:  # one manifest's failure is reported for it; the others still run
            sys.stderr.write(failure_message(err) + "\n")
            documents.append({"path": shown, "failure": failure_message(err)})
            code = EXIT_FAILURE
        worst = max(worst, code)
    if output_format == "json":
        report.write_json(documents)
    return worst


def shown_manifest(path: str) -> str:
    """How a manifest named on the command line is shown: as given, the file name added to a folder."""
    return os.path.normpath(os.path.join(path, MANIFEST_NAME) if os.path.isdir(path) else path)


def _validate_one(
    run: ProjectRun, output_format: str, shown: str | None, documents: list[dict[str, Any]] | None = None
) -> int:
    """One manifest's diagnostics; with ``documents`` (several manifests) its JSON document is
    collected there, under its ``path``, instead of written."""
    diagnostics = run.diagnostics()
    if output_format == "json":
        document = report.validate_document(run.manifest, diagnostics)
        if documents is None:
            report.write_json(document)
        else:
            documents.append({"path": shown, **document})
    else:
        report.write_diagnostics(diagnostics)
        sys.stderr.write(f"{shown or run.manifest}: {report.summary(diagnostics)}\n")
    return EXIT_ERRORS if run.count("error") else EXIT_OK


def tools_ls(
    path: str,
    rules: str | None,
    as_json: bool,
    agent: str | None = None,
    harness: str | None = None,
    parent: str | None = None,
) -> int:
    run = open_project(path, rules)
    which: dict[str, Any] = {}
    tools = _listed_tools(run, agent, harness, parent, which)
    document: dict[str, Any] = {
        "manifest": run.manifest,
        "tools_key": bool(run.output("tools_key")),
        "tools": tools,
        "removed": [str(name) for name in run.output("removed_beeuni_tools")],
        **which,
    }
    if as_json:
        report.write_json(document)
    else:
        rows = [(tool["name"], tool["kind"], tool["source"]) for tool in document["tools"]]
        sys.stdout.write(report.table(("NAME", "KIND", "SOURCE"), rows))
        footer = [text(line) for line in run.output("tools_ls_footer") or []]
        if footer:
            sys.stdout.write("\n" + "".join(line + "\n" for line in footer))
    return _note_errors(run)


def _listed_tools(
    run: ProjectRun, agent: str | None, harness: str | None, parent: str | None, extra: dict[str, Any]
) -> list[dict[str, str]]:
    """The session's tools, or with ``agent`` what that agent sees on ``harness`` (as a subagent
    of ``parent``, if given); ``extra`` receives the JSON fields that say which view this is."""
    if agent is None:
        if harness is not None or parent is not None:
            raise UsageError("--harness and --parent go with --agent NAME")
        records = run.output("session_tools")
    else:
        harness = _harness(run, harness)
        _agent(run, agent)
        extra.update(agent=agent, harness=harness)
        if parent is None:
            records = run.call("agent_tools", agent, harness)
        else:
            _agent(run, parent)
            problem = run.call("delegation_problem", parent, harness)
            if problem is not None:
                raise UsageError(text(problem))
            extra["parent"] = parent
            records = run.call("subagent_tools", agent, parent, harness)
    return [{key: text(record.get(key)) for key in ("name", "kind", "source")} for record in records]


def _harness(run: ProjectRun, harness: str | None) -> str:
    known = [str(name) for name in run.output("HARNESSES")]
    chosen = harness if harness is not None else text(run.output("DEFAULT_HARNESS"))
    if chosen not in known:
        raise UsageError(f"unknown harness `{chosen}`; harnesses: {', '.join(known)}")
    return chosen


def _agent(run: ProjectRun, name: str) -> None:
    known = [str(agent) for agent in run.output("agent_names")]
    if name not in known:
        listed = ", ".join(known) if known else "none"
        raise UsageError(f"no agent named `{name}` in {run.manifest}; agents: {listed}")


def resolve(path: str, rules: str | None, as_json: bool) -> int:
    from ..engine.resolved import resolve as resolve_tool_set

    run = open_project(path, rules)
    resolved = resolve_tool_set(run)
    if as_json:
        sys.stdout.write(resolved.model_dump_json(indent=2) + "\n")
        return _note_errors(run)
    rows = []
    for harness in resolved.harnesses:
        views = {view.id: view for view in harness.views}
        for agent in harness.agents:
            secrets = resolved.secrets.get(agent.name, [])
            rows.append(
                (
                    harness.name,
                    agent.name,
                    len(views[agent.view].tools) + len(agent.connectors),
                    "yes" if agent.can_delegate else "no",
                    secrets if isinstance(secrets, str) else ", ".join(secrets) or "-",
                )
            )
    sys.stdout.write(report.table(("HARNESS", "AGENT", "TOOLS", "SUBAGENTS", "SECRETS"), rows))
    return _note_errors(run)


def resolve_schema() -> int:
    from ..engine.resolved import ResolvedToolSet

    report.write_json(ResolvedToolSet.model_json_schema())
    return EXIT_OK


def _note_errors(run: Any) -> int:
    """Listing commands still list; a manifest with errors is said on stderr and exits 1."""
    errors = run.count("error")
    if not errors:
        return EXIT_OK
    sys.stderr.write(f"beeuni: {run.manifest} has {errors} error{'s' if errors != 1 else ''}; run `beeuni validate`\n")
    return EXIT_ERRORS


def rules_list(rules: str | None, as_json: bool) -> int:
    program = load_rules(rules)
    entries = sorted(program["rules"], key=lambda rule: rule["id"])
    if as_json:
        report.write_json([_rule_summary(rule) for rule in entries])
        return EXIT_OK
    rows = [(rule["id"], rule["severity"], rule["doc"].split("\n\n")[0].replace("\n", " ")) for rule in entries]
    sys.stdout.write(report.table(("RULE", "SEVERITY", "SUMMARY"), rows))
    return EXIT_OK


def rules_explain(rule_id: str, rules: str | None) -> int:
    program = load_rules(rules)
    found = {rule["id"]: rule for rule in program["rules"]}
    rule = found.get(rule_id)
    if rule is None:
        from difflib import get_close_matches

        close = get_close_matches(rule_id, list(found), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else "; `beeuni rules list` lists them"
        raise UsageError(f"no rule `{rule_id}`{hint}")
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
    from ..daemon.secrets import SecretStore

    name, equals, source = assignment.partition("=")
    if not equals or source != "-":
        hint = "a value on the command line ends up in shell history"
        raise UsageError(f"write `{name or 'NAME'}=-` and pass the value on standard input: {hint}")
    run = open_project(path, rules)
    problem = run.call("secret_name_problem", name)
    if problem is not None:
        raise UsageError(text(problem))
    value = sys.stdin.read()
    value = value[:-1] if value.endswith("\n") else value
    SecretStore(run.repo.root).set(name, value)
    sys.stderr.write(f"beeuni: stored secret {name} for {run.repo.root}\n")
    return EXIT_OK


def secrets_ls(path: str) -> int:
    from ..daemon.secrets import SecretStore

    repo, _ = locate(path)
    for name in SecretStore(repo.root).names():
        sys.stdout.write(name + "\n")
    return EXIT_OK
