"""One turn of a local session on the standard harness, from start to end: the daemon (``beeuni
daemon``, a subprocess, as a session starts it) serving the session's release, opencode's server
with the plugin the daemon wrote, the prompt, and afterwards opencode's own records of the
session, kept in the state folder.

A session's first turn serves the release ``HEAD`` names then; every later turn (``sessions
prompt``) the release the session serves, and the same conversation goes on. The session moves to
another release only by ``sessions converge``: while a turn runs, its runner passes that on to
the daemon (``session_control.py``), which serves the new release from its next call on; between
turns the next turn's daemon converges before opencode starts, so that its model is offered the
new release's tools.

Both the daemon and opencode run in process groups of their own, and whatever ends the turn
— its end, an error, SIGINT or SIGTERM — stops both groups (their module host and every other
child with them) before the command ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import IO, Any

from ..daemon.box.harness_box import HarnessBox
from ..daemon.edge.handoff import VARIABLE, HandOff
from ..daemon.plugin import PluginMismatch, verify
from . import opencode_turn
from .opencode_server import OpencodeError, OpencodeServer
from .opencode_turn import TurnFolders
from .process_group import Interrupted, interruptible, start_group, stop_group, uninterrupted
from .session_control import ControlServer
from .session_log import error_message, file_end
from .session_store import LOG_NAMES, SessionStore
from .session_texts import SessionTexts

#: seconds the daemon may take to hand over its connection (a failure, not a wait)
DAEMON_START_LIMIT = 120.0
#: seconds a convergence may take (it loads the new release's modules in Bun)
CONVERGE_LIMIT = 300.0
#: how much of a log a start failure quotes
LOG_TAIL = 4000
#: seconds `opencode import` may take to carry an earlier session's conversation over
IMPORT_LIMIT = 120.0
#: what of a session's record opencode would import beside its messages, and is not carried
NOT_CARRIED = ("permission", "revert", "share")
#: how the daemon is started: the beeuni of this interpreter
BEEUNI = "from beeuni.cli.main import main; main()"


class SessionRefused(Exception):
    """The session did not start, and nothing of it is kept: ``status`` 2 for a usage problem
    (no model, an unknown agent or model), 1 for a failure (the daemon or opencode did not
    start, an interrupt while starting)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class SessionRequest:
    """What `sessions new` (or `sessions prompt`) was asked: passed whole to a runner that outlives
    the command. ``session_id`` names the session a later turn continues."""

    repo_root: str
    manifest: str  # its path, as the daemon takes it
    rules: str | None
    prompt: str
    agent: str
    model: str | None
    opencode: str  # its path ("" on the experimental harness, which runs without it)
    bun: str
    session_id: str | None = None
    harness: str = "standard"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> SessionRequest:
        return SessionRequest(**json.loads(text))


@dataclass
class Outcome:
    """How a turn ended: ``completed``, ``error`` or ``interrupted``, with the final answer or the
    error's message."""

    status: str
    answer: str = ""
    error: str = ""


@dataclass
class Runtime:
    """A turn's daemon and opencode: the daemon's channel (its starter's socket), the release it
    serves, opencode's server and the turn's folders."""

    channel: HandOff
    release: str | None
    server: OpencodeServer
    turn: TurnFolders
    data_key: str  # the session's opencode data folder (``SessionStore.opencode_data``)
    converged: dict[str, Any] | None = None  # the daemon's answer to a convergence at the start


def run_session(request: SessionRequest, texts: SessionTexts, announce: Callable[[str], None]) -> Outcome:
    """Start the turn, ``announce`` the session's id, wait for the turn's end and keep the records.
    Raises ``SessionRefused`` (nothing kept) when it cannot start."""
    store = SessionStore(request.repo_root)
    earlier = store.read(request.session_id) if request.session_id is not None else None
    started: list[subprocess.Popen[bytes]] = []
    logs: dict[str, IO[bytes]] = {}
    record: dict[str, Any] | None = None
    runtime: Runtime | None = None
    control: ControlServer | None = None
    writing = threading.Lock()  # the record, written by this thread and by a live convergence
    outcome = Outcome("interrupted")
    data_key = str(earlier.get("opencode_data") or "") if earlier is not None else ""
    if not data_key.isalnum():  # a first turn (or a record from before sessions had their own)
        data_key = secrets.token_hex(8)
    with interruptible():
        try:
            pending = earlier["id"] if earlier is not None else f".starting-{os.getpid()}"
            logs = {name: store.open_log(name, pending, append=earlier is not None) for name in LOG_NAMES}
            with store.starting():
                runtime = _start(request, texts, store, started, logs, pending, earlier, data_key)
                model = _check_model(request, texts, runtime.server)
                _check_agent(request, texts, runtime.server)
                session = {"id": earlier["id"]} if earlier is not None else runtime.server.create_session(request.agent)
            record = _record(request, session, model, runtime, earlier)

            control = live_control(runtime.channel, record, store, writing)
            if earlier is None:
                for name in LOG_NAMES:
                    os.replace(store.log_path(name, pending), store.log_path(name, record["id"]))
            with writing:
                store.write(record)
            announce(record["id"])
            outcome = _prompt(request, runtime.server, record["id"], model)
        except Interrupted:
            if record is None:
                raise SessionRefused(texts.message("interrupted_starting"), 1) from None
            outcome = Outcome("interrupted")
        except OpencodeError as err:
            if record is None:
                raise SessionRefused(texts.message("opencode_failed", detail=str(err)), 1) from None
            outcome = Outcome("error", error=str(err))
        finally:
            with uninterrupted():
                if control is not None:
                    control.close()
                if record is not None and runtime is not None:
                    with writing:
                        _keep_records(store, runtime.server, record, outcome)
                for process in reversed(started):
                    stop_group(process)
                if runtime is not None:
                    runtime.channel.close()
                    shutil.rmtree(runtime.turn.root, ignore_errors=True)
                for handle in logs.values():
                    handle.close()
                if record is None and earlier is None:  # nothing started: no session to keep the logs of
                    for name in LOG_NAMES:
                        with contextlib.suppress(OSError):
                            os.unlink(store.log_path(name, pending))
                    shutil.rmtree(store.opencode_data(data_key).root, ignore_errors=True)
    return outcome


def _start(
    request: SessionRequest,
    texts: SessionTexts,
    store: SessionStore,
    started: list[subprocess.Popen[bytes]],
    logs: dict[str, IO[bytes]],
    pending: str,
    earlier: dict[str, Any] | None,
    data_key: str,
) -> Runtime:
    """The daemon and opencode's server, started side by side. The daemon hands its connection
    to this runner on a socket, which stays this runner's channel to it; the runner checks the
    plugin the daemon wrote, converges the daemon when the session was asked to between turns,
    gives opencode the release's own project configuration, and hands the connection on to
    opencode on another socket, which the plugin reads when opencode first loads its
    configuration — at the first request that names the project, after both are ready
    (``daemon/edge/handoff.py``). opencode reads no configuration but the turn's
    (``opencode_turn.py``) and runs in a box of its own (``daemon/box/harness_box.py``)."""
    env = {**os.environ, "BEEUNI_BUN": request.bun}
    env.pop(VARIABLE, None)  # opencode's hand-off is this runner's own, never an inherited one
    to_daemon, to_opencode = HandOff(), HandOff()
    turn = store.fresh_turn()
    try:
        command = [sys.executable, "-c", BEEUNI, "daemon", request.manifest]  # its default harness: the standard one
        command += ["--agent", request.agent, "--opencode-dir", turn.config]
        command += ["--spill-dir", store.outputs_dir]  # the log names these files after the session's end
        command += ["--connection-fd", str(to_daemon.fd)]
        if earlier is not None and earlier.get("release"):
            command += ["--release", str(earlier["release"])]  # the session's release, not HEAD now
        if request.rules is not None:
            command += ["--rules", request.rules]
        daemon = start_group(command, cwd=request.repo_root, env=env, log=logs["daemon"], pass_fds=(to_daemon.fd,))
        started.append(daemon)
        to_daemon.started()
        server = OpencodeServer.new()
        data = store.opencode_data(data_key)
        data.prepare()
        opencode_env = {**opencode_turn.environment(env, turn, data), **server.environment()}
        opencode_env[VARIABLE] = str(to_opencode.fd)
        if request.agent == texts.session_agent and "OPENCODE_CONFIG_CONTENT" not in opencode_env:
            # the session agent, with opencode's defaults, where opencode's configuration has none
            opencode_env["OPENCODE_CONFIG_CONTENT"] = json.dumps({"agent": {request.agent: {}}})
        read = [store.opencode_dir, store.outputs_dir]
        box, shell = opencode_turn.box(request.repo_root, turn, data, env, request.opencode, read, texts.command_shells)
        # the launcher of the commands' box as the shell, over a `shell` of the release's configuration
        settings = {**texts.opencode_turn_settings, opencode_turn.SHELL_SETTING: shell}
        content = opencode_turn.with_settings(opencode_env.get("OPENCODE_CONFIG_CONTENT"), settings)
        if content is not None:
            opencode_env["OPENCODE_CONFIG_CONTENT"] = content
        opencode_env["SHELL"] = shell
        if box.missing or box.filter_missing:
            detail = "; ".join(reason for reason in (box.missing, box.filter_missing) if reason)
            logs["opencode"].write((texts.message("opencode_not_confined", detail=detail) + "\n").encode())
            logs["opencode"].flush()
        if earlier is not None and earlier.get("opencode_data") != data_key:  # a data folder new to the session
            _carry_conversation(request, store, str(earlier["id"]), turn, opencode_env, box, logs["opencode"])
        opencode = start_group(
            server.command(request.opencode),
            cwd=request.repo_root,
            env=opencode_env,
            log=logs["opencode"],
            pass_fds=(to_opencode.fd,),
            before_exec=box.preparer(),
        )
        started.append(opencode)
        to_opencode.started()
        connection = _daemon_connection(to_daemon, daemon, texts, store.log_path("daemon", pending))
        document = json.loads(connection)
        try:
            if verify(document) != turn.config:
                raise PluginMismatch(f"the plugin is not in {turn.config}")
        except PluginMismatch as err:
            raise SessionRefused(texts.message("plugin_mismatch", detail=str(err)), 1) from None
        runtime = Runtime(to_daemon, document.get("release"), server, turn, data_key)
        root = document.get("release_root")
        if earlier is not None and earlier.get("converge_to"):
            runtime.converged = _converge(to_daemon, str(earlier["converge_to"]))
            if runtime.converged.get("event") == "converged":
                runtime.release = runtime.converged.get("release")
                root = runtime.converged.get("release_root")
        if root:
            for folder in opencode_turn.give_release(str(root), turn, texts.opencode_project_files):
                store.link_package(folder)
        to_opencode.send(connection)
    except BaseException:
        to_daemon.close()
        shutil.rmtree(turn.root, ignore_errors=True)
        raise
    finally:
        to_opencode.close()
    server.wait_ready(lambda: opencode.poll() is None)
    return runtime


def _carry_conversation(
    request: SessionRequest,
    store: SessionStore,
    session_id: str,
    turn: TurnFolders,
    opencode_env: dict[str, str],
    box: HarnessBox,
    log: IO[bytes],
) -> None:
    """A session whose opencode data folder is new (recorded before sessions had one of their own):
    its conversation, as opencode exported it at its last turn, is imported into the new data
    folder (``opencode import``, in the turn's box, with no plugin), so that the turn goes on with
    it. What opencode keeps per session beside the messages (its permission rules, a revert, a
    share) is not carried."""
    export = store.read_export(session_id)
    info = export.get("info") if export is not None else None
    if export is None or not isinstance(info, dict):
        return
    kept = {key: value for key, value in info.items() if key not in NOT_CARRIED}
    carried = {"info": kept, "messages": export.get("messages") or []}
    path = os.path.join(turn.tmp, "conversation.json")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as handle:
        json.dump(carried, handle)
    env = {name: value for name, value in opencode_env.items() if name != VARIABLE}
    env["OPENCODE_PURE"] = "1"  # no plugin: the daemon's is for the turn's server
    command = [request.opencode, "import", path]
    importing = start_group(command, cwd=request.repo_root, env=env, log=log, pass_fds=(), before_exec=box.preparer())
    try:
        importing.wait(timeout=IMPORT_LIMIT)
    except subprocess.TimeoutExpired:
        stop_group(importing)
    finally:
        os.unlink(path)


def live_control(
    channel: HandOff, record: dict[str, Any], store: SessionStore, writing: threading.Lock
) -> ControlServer:
    """While a turn runs: where `sessions converge` reaches its daemon (the record keeps the
    address), the record's release following each convergence."""

    def converge(release: str | None) -> dict[str, Any]:
        answer = _converge(channel, release)
        if answer.get("event") == "converged":
            with writing:
                record["release"] = answer.get("release")
                store.write(record)
        return answer

    control = ControlServer(converge)
    record["control"] = control.address
    return control


def _converge(channel: HandOff, release: str | None) -> dict[str, Any]:
    """Ask the daemon to converge on ``release``; its answer (``restart_runtime`` events of an
    earlier convergence are passed over: the next turn starts opencode anew anyway)."""
    channel.request({"op": "converge", "release": release})
    while True:
        try:
            event = channel.event(CONVERGE_LIMIT)
        except (TimeoutError, OSError) as err:
            return {"event": "convergence_failed", "error": str(err) or type(err).__name__}
        if event is None:
            return {"event": "convergence_failed", "error": "the daemon stopped"}
        if event.get("event") != "restart_runtime":
            return event


def _daemon_connection(hand_off: HandOff, daemon: subprocess.Popen[bytes], texts: SessionTexts, log: str) -> bytes:
    """The connection the daemon hands over once it serves; a refusal with its log when it ends
    (or has not said anything within the limit) instead."""
    try:
        document = hand_off.receive(DAEMON_START_LIMIT)
    except TimeoutError:
        document = b""
    if document:
        return document
    with contextlib.suppress(subprocess.TimeoutExpired):
        daemon.wait(timeout=5)  # it closed its end: it is ending
    status = 2 if daemon.returncode == 2 else 1
    try:
        quoted = file_end(log, LOG_TAIL).strip()
    except OSError:
        quoted = ""
    raise SessionRefused(texts.message("daemon_failed", detail=quoted), status)


def _check_model(request: SessionRequest, texts: SessionTexts, server: OpencodeServer) -> str | None:
    """The model to ask for (None: opencode's configured default); a usage problem when there
    is none, or ``--model`` names one no configured provider has."""
    providers = server.providers()
    if request.model is not None:
        provider, model_id = request.model.split("/", 1)
        if not any(p.get("id") == provider and model_id in (p.get("models") or {}) for p in providers):
            raise SessionRefused(texts.message("unknown_model", detail=request.model))
        return request.model
    if server.configured_model() is not None:
        return None
    if any(not texts.needs_no_configuration(provider) for provider in providers):
        return None  # a provider the user configured: opencode picks its default model
    raise SessionRefused(texts.message("no_model"))


def _check_agent(request: SessionRequest, texts: SessionTexts, server: OpencodeServer) -> None:
    primary = sorted(
        str(agent.get("name"))
        for agent in server.agents()
        if agent.get("mode") in ("primary", "all") and not agent.get("hidden")
    )
    if request.agent not in primary:
        raise SessionRefused(texts.message("unknown_agent", agent=request.agent, detail=", ".join(primary)))


def _record(
    request: SessionRequest,
    session: dict[str, Any],
    model: str | None,
    runtime: Runtime,
    earlier: dict[str, Any] | None,
) -> dict[str, Any]:
    if earlier is not None:  # a later turn: the same session, running again
        record = dict(earlier)
        record.pop("converge_to", None)
        if runtime.converged is not None:
            record["converged"] = runtime.converged
    else:
        created = session.get("time", {}).get("created")
        record = {"id": str(session["id"]), "agent": request.agent, "model": model}
        record["created"] = created if isinstance(created, int) else int(time.time() * 1000)
    reach = {"url": runtime.server.url, "password": runtime.server.password}  # while it runs: `sessions log`
    record.update(status="running", runner=os.getpid(), opencode=reach, prompt=request.prompt, answer="", error="")
    record["release"] = runtime.release  # the commit the session serves (None: a copy of a folder outside git)
    record["opencode_data"] = runtime.data_key
    return record


def _prompt(request: SessionRequest, server: OpencodeServer, session_id: str, model: str | None) -> Outcome:
    answer = server.prompt(session_id, request.agent, model, request.prompt)
    info = answer.get("info") or {}
    text = "\n".join(str(p.get("text", "")) for p in answer.get("parts") or [] if p.get("type") == "text")
    error = info.get("error")
    if error:
        return Outcome("error", answer=text, error=error_message(error))
    return Outcome("completed", answer=text)


def _keep_records(store: SessionStore, server: OpencodeServer, record: dict[str, Any], outcome: Outcome) -> None:
    """opencode's records of the session (aborted first when it was interrupted), and beeuni's
    record with how it ended."""
    try:
        if outcome.status == "interrupted":
            server.abort(record["id"])
        store.write_export(record["id"], server.export(record["id"]))
    except OpencodeError as err:
        if not outcome.error:
            outcome.error = str(err)
    record.update(status=outcome.status, answer=outcome.answer, error=outcome.error)
    record.update(runner=None, opencode=None, control=None)
    record["model"] = record["model"] or _model_used(store.read_export(record["id"]))
    store.write(record)


def _model_used(export: dict[str, Any] | None) -> str | None:
    """The model opencode chose (``PROVIDER/MODEL`` of its last answer), when none was asked for."""
    for message in reversed((export or {}).get("messages") or []):
        info = message.get("info") or {}
        if info.get("role") == "assistant" and info.get("providerID") and info.get("modelID"):
            return f"{info['providerID']}/{info['modelID']}"
    return None
