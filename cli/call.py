"""``beeuni tools call NAME``: one call of a tool as a session would make it, without a daemon.

With ``--schema`` the tool is not run: its name, description and parameters are printed as the
daemon's listing (``GET /beeuni/tools``) shows them, which is what the model is offered.

The output goes to standard output (a returned object as indented JSON); a thrown error's message,
or the daemon's refusal, to standard error. Exit 0 on an answer, 1 when the tool failed (threw,
ran out of time, its host died), 2 when the call was refused (no such tool loaded: 404; the agent
does not see it: 403; arguments that are no JSON object) or could not be made.
"""

from __future__ import annotations

import json
import sys

from .shared import EXIT_ERRORS, EXIT_FAILURE, EXIT_OK, UsageError, bun

#: the rules' text for `tools call` of a name the session does not have (when they define one)
UNKNOWN_TOOL = "tools_call_unknown"


def tools_call(
    name: str,
    path: str,
    rules: str | None,
    agent: str,
    harness: str,
    arguments: str,
    as_json: bool,
    timeout: float,
    schema: bool = False,
    release: str | None = None,
) -> int:
    from ..daemon.host.call_once import call_once, describe_once
    from ..daemon.serving.session import Session, StartRefused

    if arguments == "-":
        arguments = sys.stdin.read()
    try:
        session = Session(
            path, rules, harness, agent, bun(rules, path), timeout, only=name, release=release, working_tree=not release
        )
        report = describe_once(session, name) if schema else call_once(session, name, arguments)
    except StartRefused as err:
        raise UsageError(str(err)) from None
    if report.status == 404 and report.refused:
        report.error = _unknown_tool(name, path, rules) or report.error
    if as_json:
        document: dict[str, object] = {"output": report.output} if report.error is None else {"error": report.error}
        document.update(status=report.status, duration_ms=round(report.duration_ms, 1), spilled=report.spilled)
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    elif report.error is None:
        output = report.output or ""
        sys.stdout.write(output if output.endswith("\n") or not output else output + "\n")
    else:
        sys.stderr.write(f"beeuni: {report.error}\n")
    if report.error is None:
        return EXIT_OK
    return EXIT_FAILURE if report.refused else EXIT_ERRORS


def _unknown_tool(name: str, path: str, rules: str | None) -> str | None:
    """The rules' ``tools_call_unknown``: for a name the session does not have, the nearest one
    and those it has; None when the rules do not say (a module that did not load, say)."""
    from ..engine.project import open_project

    run = open_project(path, rules)
    if UNKNOWN_TOOL not in run.program["fns"]:
        return None
    hint: str | None = run.call(UNKNOWN_TOOL, name)
    return hint
