"""One turn of a local session on the experimental harness, from start to end: the daemon
(``beeuni daemon --harness experimental``, a subprocess, as a session starts it) serving the
session's release, the model chosen from opencode's configuration (``model_config.py``), and the
turn, which the daemon's turn loop runs (``daemon/turns/``) when asked on its starter's channel.
No opencode is started.

The session's conversation is kept in the state folder between turns (``SessionStore``: the
model's message history, and the turn loop's record of each turn in the shape `sessions log`
reads). As on the standard harness, a later turn serves the session's release and starts a daemon
of its own — converged first when `sessions converge` asked for it between turns, so the runtime
is new when a tool changed and the conversation goes on; while a turn runs, `sessions converge`
reaches the daemon through this runner (``session_control.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

from ..daemon.edge.handoff import HandOff
from ..daemon.turns.model import ModelChoice
from .model_config import ConfigProblem, ModelProblem, NoModel, choose, settings
from .process_group import Interrupted, interruptible, start_group, stop_group, uninterrupted
from .session_control import ControlServer
from .session_runner import (
    BEEUNI,
    Outcome,
    SessionRefused,
    SessionRequest,
    _converge,
    _daemon_connection,
    live_control,
)
from .session_store import SessionStore
from .session_texts import SessionTexts

#: seconds a turn may take at most (its model requests and tool calls; a failure, not a wait)
TURN_LIMIT = 24 * 3600.0


def run_experimental(request: SessionRequest, texts: SessionTexts, announce: Callable[[str], None]) -> Outcome:
    """Start the turn, ``announce`` the session's id, run the turn and keep the records. Raises
    ``SessionRefused`` (nothing kept) when it cannot start."""
    store = SessionStore(request.repo_root)
    earlier = store.read(request.session_id) if request.session_id is not None else None
    pending = earlier["id"] if earlier is not None else f".starting-{os.getpid()}"
    record: dict[str, Any] | None = None
    daemon: subprocess.Popen[bytes] | None = None
    channel = HandOff()
    control: ControlServer | None = None
    writing = threading.Lock()
    outcome = Outcome("interrupted")
    end: dict[str, Any] | None = None
    log = store.open_log("daemon", pending, append=earlier is not None)
    with interruptible():
        try:
            with store.starting():
                daemon = _start_daemon(request, channel, earlier, log)
                document = _connection_of(channel, daemon, texts, store.log_path("daemon", pending))
                release, root = document.get("release"), document.get("release_root")
                converged = None
                if earlier is not None and earlier.get("converge_to"):
                    converged = _converge(channel, str(earlier["converge_to"]))
                    if converged.get("event") == "converged":
                        release, root = converged.get("release"), converged.get("release_root")
                choice = _model(request, texts, root if isinstance(root, str) else None)
            record = _record(request, earlier, choice.name, release, converged)

            control = live_control(channel, record, store, writing)
            if earlier is None:
                os.replace(store.log_path("daemon", pending), store.log_path("daemon", record["id"]))
            with writing:
                store.write(record)
            announce(record["id"])
            history = store.read_history(record["id"]) if earlier is not None else []
            turn = {"op": "turn", "agent": request.agent, "prompt": request.prompt, "history": history}
            channel.request({**turn, "model": asdict(choice)})
            end = _turn_end(channel)
            outcome = Outcome(
                str(end.get("status") or "error"), str(end.get("answer") or ""), str(end.get("error") or "")
            )
        except Interrupted:
            if record is None:
                raise SessionRefused(texts.message("interrupted_starting"), 1) from None
            outcome = Outcome("interrupted")
        finally:
            with uninterrupted():
                if control is not None:
                    control.close()
                if daemon is not None:
                    stop_group(daemon)
                channel.close()
                log.close()
                if record is not None:
                    with writing:
                        _keep_records(store, record, outcome, end)
                elif earlier is None:
                    with contextlib.suppress(OSError):
                        os.unlink(store.log_path("daemon", pending))
    return outcome


def _start_daemon(
    request: SessionRequest, channel: HandOff, earlier: dict[str, Any] | None, log: IO[bytes]
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BEEUNI_BUN": request.bun}
    command = [sys.executable, "-c", BEEUNI, "daemon", request.manifest, "--harness", request.harness]
    command += ["--agent", request.agent, "--connection-fd", str(channel.fd)]
    if earlier is not None and earlier.get("release"):
        command += ["--release", str(earlier["release"])]  # the session's release, not HEAD now
    if request.rules is not None:
        command += ["--rules", request.rules]
    daemon = start_group(command, cwd=request.repo_root, env=env, log=log, pass_fds=(channel.fd,))
    channel.started()
    return daemon


def _connection_of(channel: HandOff, daemon: subprocess.Popen[bytes], texts: SessionTexts, log: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(_daemon_connection(channel, daemon, texts, log))
    return found


def _model(request: SessionRequest, texts: SessionTexts, release_root: str | None) -> ModelChoice:
    """The model of the turn; a usage problem (exit 2) when none is configured or it cannot be
    spoken."""
    try:
        config = settings(release_root)
        return choose(config, request.model, texts.model_providers, texts.model_packages)
    except ConfigProblem as problem:
        raise SessionRefused(texts.message("config_unreadable", path=problem.path, detail=problem.detail)) from None
    except NoModel:
        raise SessionRefused(texts.message("no_model")) from None
    except ModelProblem as problem:
        raise SessionRefused(texts.message(problem.key, **problem.blanks)) from None


def _record(
    request: SessionRequest,
    earlier: dict[str, Any] | None,
    model: str,
    release: Any,
    converged: dict[str, Any] | None,
) -> dict[str, Any]:
    if earlier is not None:
        record = dict(earlier)
        record.pop("converge_to", None)
        if converged is not None:
            record["converged"] = converged
    else:
        record = {"id": f"ses_{secrets.token_hex(13)}", "agent": request.agent, "harness": request.harness}
        record["created"] = int(time.time() * 1000)
    record.update(status="running", runner=os.getpid(), model=model, prompt=request.prompt, answer="", error="")
    record["release"] = release
    return record


def _turn_end(channel: HandOff) -> dict[str, Any]:
    """The daemon's ``turn_end`` (its ``tool`` events passed over); an error when it stops first."""
    while True:
        try:
            event = channel.event(TURN_LIMIT)
        except (TimeoutError, OSError) as err:
            return {"status": "error", "error": str(err) or type(err).__name__}
        if event is None:
            return {"status": "error", "error": "the daemon stopped during the turn"}
        kind = event.get("event")
        if kind == "turn_end":
            return event
        if kind == "error":
            return {"status": "error", "error": str(event.get("error"))}


def _keep_records(store: SessionStore, record: dict[str, Any], outcome: Outcome, end: dict[str, Any] | None) -> None:
    """The conversation (continued), the turn's messages added to the session's, and the record
    with how the turn ended."""
    if end is not None and isinstance(end.get("history"), list) and end["history"]:
        store.write_history(record["id"], end["history"])
    export = store.read_export(record["id"]) or {"info": {"id": record["id"]}, "messages": []}
    if end is not None and isinstance(end.get("messages"), list):
        export["messages"] = list(export.get("messages") or []) + end["messages"]
    elif outcome.status == "interrupted":
        info = {"role": "user", "agent": record["agent"]}
        export["messages"] = [
            *list(export.get("messages") or []),
            {"info": info, "parts": [{"type": "text", "text": record["prompt"]}]},
        ]
    store.write_export(record["id"], export)
    record.update(status=outcome.status, answer=outcome.answer, error=outcome.error, runner=None, control=None)
    store.write(record)
