"""``beeuni sessions new|prompt|converge|log|ls``: a local session on the standard harness — the
daemon, Bun and opencode, as a session runs them — its later turns, its convergence on another
release, and its records, read back from the project's state folder.

``new`` prints the session's id as soon as opencode has made the session. With ``--wait`` it
runs the session itself and prints the final answer: exit 0 when the session ended normally, 1
when it ended in an error or was interrupted (SIGINT, SIGTERM), 2 for a usage problem (no model
configured, an unknown agent or model). Without ``--wait`` a runner of its own (a new process
session, so the terminal closing does not stop it) runs the session and the command ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..daemon.changes import SHORT
from ..daemon.messages import say
from ..engine.lang.values import text
from ..engine.paths import git_top
from ..engine.printable import printable
from ..engine.project import ProjectRun, open_project, rules_only
from ..engine.release.snapshot import ReleaseError, commit_of
from .commands import failure_message
from .opencode_server import OpencodeError, OpencodeServer, find_opencode
from .session_control import ask
from .session_log import log_lines, messages_of, started
from .session_runner import Outcome, SessionRefused, SessionRequest, run_session
from .session_store import SessionStore
from .session_texts import SessionTexts
from .shared import EXIT_ERRORS, EXIT_FAILURE, EXIT_OK, UsageError, bun

#: the runner of a session started without --wait
DETACHED_RUNNER = "from beeuni.cli.sessions import run_detached; run_detached()"
#: the fields of beeuni's record that `log --json` and `ls --json` print (not how to reach opencode)
PUBLIC_FIELDS = ("id", "agent", "model", "prompt", "created", "status", "release", "answer", "error")


def sessions_new(
    path: str,
    rules: str | None,
    prompt: str,
    agent: str | None,
    model: str | None,
    wait: bool,
    harness: str = "standard",
) -> int:
    run = open_project(path, rules)
    texts = SessionTexts(run)
    harnesses = [text(name) for name in run.output("HARNESSES")]
    if harness not in harnesses:
        raise UsageError(f"unknown harness `{printable(harness)}`; harnesses: {', '.join(harnesses)}")
    if model is not None and not run.call("session_model_ok", model):
        raise UsageError(texts.message("model_format", detail=printable(model)))
    request = _request(run, rules, texts, prompt, agent or texts.session_agent, model, harness)
    return _turn(request, texts, wait)


def sessions_prompt(session_id: str, path: str, rules: str | None, prompt: str, wait: bool) -> int:
    """A later turn of the session: the same conversation, the session's release."""
    run = open_project(path, rules)
    texts = SessionTexts(run)
    record = _record_of(SessionStore(run.repo.root), session_id, texts)
    if current_status(record) == "running":
        raise UsageError(texts.message("turn_running", id=record["id"]))
    model = record.get("model")
    harness = str(record.get("harness") or "standard")
    request = _request(
        run, rules, texts, prompt, str(record["agent"]), model if isinstance(model, str) else None, harness
    )
    return _turn(replace(request, session_id=str(record["id"])), texts, wait)


def _request(
    run: ProjectRun, rules: str | None, texts: SessionTexts, prompt: str, agent: str, model: str | None, harness: str
) -> SessionRequest:
    if harness == run.output("DEFAULT_HARNESS"):
        opencode = find_opencode()
        if opencode is None:
            raise UsageError(texts.message("opencode_missing"))
    else:  # a harness whose turn loop runs in the daemon: no opencode, an agent of the manifest's
        opencode = ""
        agents = [text(name) for name in run.output("agent_names")]
        if agent != texts.session_agent and agent not in agents:
            detail = ", ".join([texts.session_agent, *agents])
            raise UsageError(texts.message("unknown_session_agent", agent=printable(agent), detail=detail))
    return SessionRequest(
        repo_root=run.repo.root,
        manifest=os.path.join(run.repo.root, run.manifest),
        rules=None if rules is None else os.path.abspath(rules),
        prompt=prompt,
        agent=agent,
        model=model,
        opencode=opencode,
        bun=bun(run),
        harness=harness,
    )


def _turn(request: SessionRequest, texts: SessionTexts, wait: bool) -> int:
    if not wait:
        return _start_detached(request)
    announced: list[str] = []

    def announce(session_id: str) -> None:
        announced.append(session_id)
        sys.stdout.write(session_id + "\n")
        sys.stdout.flush()

    try:
        outcome = run_turn(request, texts, announce)
    except SessionRefused as refusal:
        sys.stderr.write(f"beeuni: {refusal}\n")
        return refusal.status
    return _report(outcome, announced[0] if announced else "", texts)


def run_turn(request: SessionRequest, texts: SessionTexts, announce: Callable[[str], None]) -> Outcome:
    """One turn on the request's harness: opencode's (``session_runner``), or the daemon's own
    turn loop (``experimental_runner``)."""
    if request.opencode:
        return run_session(request, texts, announce)
    from .experimental_runner import run_experimental

    return run_experimental(request, texts, announce)


def sessions_converge(session_id: str, path: str, rules: str | None, release: str | None) -> int:
    """Move the session to the release ``release`` names (None: ``HEAD`` now): at once while one of
    its turns runs, else from its next turn on."""
    run = open_project(path, rules)
    texts = SessionTexts(run)
    store = SessionStore(run.repo.root)
    record = _record_of(store, session_id, texts)
    address = record.get("control")
    if current_status(record) == "running" and isinstance(address, dict):
        answer = ask(address, release)
        if answer is not None:
            if answer.get("event") != "converged":
                failed = texts.message("converge_failed", id=record["id"], detail=printable(str(answer.get("error"))))
                sys.stderr.write(f"beeuni: {failed}\n")
                return EXIT_ERRORS
            summary = run.call("release_changes", answer["changes"])
            sys.stdout.write(texts.message("converged_now", id=record["id"], detail=printable(summary)) + "\n")
            return EXIT_OK
    found = git_top(run.repo.root)
    if not record.get("release") or found is None:
        raise UsageError(texts.message("converge_no_release", id=record["id"]))
    try:
        commit = commit_of(found[0], release)
    except ReleaseError as err:
        raise UsageError(say(run.output("DAEMON_MESSAGES"), err.key, detail=err.detail)) from None
    assert commit is not None  # (the session serves a release: the repository has a commit)
    record["converge_to"] = commit
    store.write(record)
    sys.stdout.write(texts.message("converge_next_turn", id=record["id"], detail=commit[:SHORT]) + "\n")
    return EXIT_OK


def _record_of(store: SessionStore, session_id: str, texts: SessionTexts) -> dict[str, Any]:
    record = store.read(session_id)
    if record is None:
        raise UsageError(texts.message("no_session", id=printable(session_id)))
    return record


def _report(outcome: Outcome, session_id: str, texts: SessionTexts) -> int:
    if outcome.answer:
        sys.stdout.write("\n".join(printable(line) for line in outcome.answer.splitlines()) + "\n")
    if outcome.status == "completed":
        return EXIT_OK
    if outcome.status == "interrupted":
        sys.stderr.write(f"beeuni: {texts.message('interrupted', id=session_id)}\n")
    else:
        sys.stderr.write(f"beeuni: {texts.message('ended_in_error', id=session_id, detail=printable(outcome.error))}\n")
    return EXIT_ERRORS


def _start_detached(request: SessionRequest) -> int:
    """Start a runner of its own for the session; print the id it announces. A runner that ends
    before (the session could not start) has its message and exit status passed on."""
    runner = subprocess.Popen(
        [sys.executable, "-c", DETACHED_RUNNER, request.to_json()],
        cwd=request.repo_root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert runner.stdout is not None and runner.stderr is not None
    announced = runner.stdout.readline().decode("utf-8", "replace").strip()
    if announced:
        sys.stdout.write(announced + "\n")
        return EXIT_OK
    message = runner.stderr.read().decode("utf-8", "replace")
    sys.stderr.write(message)
    return runner.wait() or EXIT_FAILURE


def run_detached() -> None:
    """The runner of a session started without --wait (``sys.argv[1]``: the request as JSON):
    it announces the id on its standard output, which it then closes, and runs to the end."""
    request = SessionRequest.from_json(sys.argv[1])

    def announce(session_id: str) -> None:
        sys.stdout.write(session_id + "\n")
        sys.stdout.flush()
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)  # the command that waited for the id has ended: nothing reads these
        os.dup2(quiet, 2)

    try:
        texts = SessionTexts(rules_only(request.rules))
        outcome = run_turn(request, texts, announce)
    except SessionRefused as refusal:
        sys.stderr.write(f"beeuni: {refusal}\n")
        sys.exit(refusal.status)
    except Exception as err:  # the promise: a message, never a traceback
        sys.stderr.write(failure_message(err) + "\n")
        sys.exit(EXIT_FAILURE)
    sys.exit(EXIT_OK if outcome.status == "completed" else EXIT_ERRORS)


def sessions_log(session_id: str, path: str, rules: str | None, as_json: bool) -> int:
    run = open_project(path, rules)
    texts = SessionTexts(run)
    store = SessionStore(run.repo.root)
    record = _record_of(store, session_id, texts)
    record["status"] = current_status(record)
    messages = messages_of(_export(store, record), text(run.output("DAEMON_MESSAGES")["spilled"]))
    if as_json:
        document = {"session": public(record), "messages": messages}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        for line in log_lines(record, messages, texts):
            sys.stdout.write(line + "\n")
    return EXIT_OK


def _export(store: SessionStore, record: dict[str, Any]) -> dict[str, Any] | None:
    """opencode's records: asked of the running opencode while the session runs, else kept."""
    reach = record.get("opencode")
    if record["status"] == "running" and isinstance(reach, dict):
        try:
            return OpencodeServer(str(reach["url"]), str(reach["password"])).export(record["id"])
        except (OpencodeError, KeyError):
            pass
    return store.read_export(record["id"])


def sessions_ls(path: str, rules: str | None, as_json: bool) -> int:
    run = open_project(path, rules)
    texts = SessionTexts(run)
    records = SessionStore(run.repo.root).records()
    for record in records:
        record["status"] = current_status(record)
    records.sort(key=lambda r: (r.get("created") if isinstance(r.get("created"), int) else 0, str(r["id"])))
    records.reverse()  # newest first
    if as_json:
        sys.stdout.write(json.dumps([public(r) for r in records], indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    if not records:
        sys.stdout.write(texts.message("ls_none") + "\n")
        return EXIT_OK
    rows = [texts.message("ls_header").split("\t")]
    for record in records:
        prompt = printable(str(record.get("prompt", "")).strip().split("\n", 1)[0])
        line = texts.message(
            "ls_row",
            id=record["id"],
            created=started(record.get("created")),
            agent=printable(str(record.get("agent"))),
            status=record["status"],
            detail=prompt[: texts.prompt_characters],
        )
        rows.append(line.split("\t"))
    for line in aligned(rows):
        sys.stdout.write(line + "\n")
    return EXIT_OK


def aligned(rows: list[list[str]]) -> list[str]:
    """Rows of cells (the rules' templates, tab-separated) in columns as wide as their widest cell."""
    widths: dict[int, int] = {}
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths.get(index, 0), len(cell))
    return ["  ".join(cell.ljust(widths[index]) for index, cell in enumerate(row)).rstrip() for row in rows]


def current_status(record: dict[str, Any]) -> str:
    """A record's status; one that says running whose runner is gone was interrupted."""
    status = str(record.get("status"))
    runner = record.get("runner")
    if status == "running" and not (isinstance(runner, int) and _alive(runner)):
        return "interrupted"
    return status


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def public(record: dict[str, Any]) -> dict[str, Any]:
    return {field: record.get(field) for field in PUBLIC_FIELDS}
