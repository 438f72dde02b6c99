"""A session as the daemon serves it: the resolved tool set, the module host, and reloads.

Everything about *which* tool an agent sees comes from the engine's resolved tool set; this
module only looks things up in it. It watches the files the tool set was made from (the
manifest, its imports, the tool modules, the rules) and, when one changes, resolves again
between calls — never during one: a reload waits for the running calls to finish, and new calls
wait for the reload.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..engine.lang import rules_files
from ..engine.paths import Repository
from ..engine.project import ProjectRun, load_rules, locate, rules_folder
from ..engine.resolve import resolve
from ..engine.resolved import Harness, ResolvedToolSet
from ..engine.visible import visible
from . import strict_json
from .arguments import InvalidSchema, argument_problem, validator_of
from .carried import uncarried
from .grants import AgentKey, Grants, narrowed, widenings
from .host import DEFAULT_MAX_OUTPUT, FRESH, STATUS_OF_REASON, CallOutcome, ModuleHost
from .log import log
from .log import write as log_line
from .messages import say
from .sandbox import confinement_for, landlock_missing
from .secrets import SecretStore, state_dir

if TYPE_CHECKING:
    from typing import Any

    from jsonschema.protocols import Validator


class UnknownHarness(Exception):
    """The session was asked for a harness the rules do not define."""


class ConfinementRequired(Exception):
    """``--require-confinement``, and the module host cannot be confined (the rules' text)."""


class CallRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Loaded:
    """One generation of the session: a resolved tool set and the host that runs its modules,
    with the lookups calls need, made once."""

    resolved: ResolvedToolSet
    host: ModuleHost
    watched: dict[str, tuple[int, int]]
    harness: Harness
    grants: Grants
    ceiling: Grants  # what the session's first tool set granted: grants never widen past it
    validators: dict[str, Validator]  # one per served tool: a module whose schema is invalid is not served
    argument_messages: dict[str, Any]
    view_outputs: dict[str, Validator]  # the overrides whose output a web UI view reads
    visible: dict[AgentKey, list[str]] = field(default_factory=dict)


class Session:
    def __init__(
        self,
        path: str,
        rules: str | None,
        harness: str,
        agent: str,
        bun: str,
        timeout: float,
        only: str | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
        require_confinement: bool = False,
    ) -> None:
        self.repo, self.manifest = locate(path)
        self.only = only  # load this one tool's module, not the session's others (`beeuni tools call`)
        self.rules = rules
        self.harness = harness
        self.agent = agent
        self.bun = bun
        self.timeout = timeout
        self.max_output = max_output
        self.require_confinement = require_confinement
        self.secrets = SecretStore(self.repo.root)
        self.current: Loaded | None = None
        self._in_flight = 0
        self._reloading = False
        self._reload_lock = asyncio.Lock()
        self._reloaded = asyncio.Event()
        self._drained = asyncio.Event()
        self._view_misfits: set[str] = set()  # the overrides whose output misfit was logged this session

    # the tool set ------------------------------------------------------------------------

    def _resolve(self) -> tuple[ResolvedToolSet, dict[str, tuple[int, int]], ProjectRun]:
        # A Repository remembers what its folders hold; a fresh one per resolve, so that a reload
        # sees the repository as it is now (a module created since the last one included).
        run = ProjectRun(Repository(self.repo.root), self.manifest, load_rules(self.rules))
        resolved = ResolvedToolSet.model_validate(resolve(run))
        files = [self.repo.absolute(str(f["path"])) for f in run.merged.files]
        files += [self.repo.absolute(tool.module) for tool in resolved.tools if tool.module]
        folder, _ = rules_folder(self.rules)
        files += [os.path.join(folder, tool.builtin) for tool in resolved.tools if tool.builtin]
        files += rules_files(folder)
        return resolved, {path: _stamp(path) for path in files}, run

    def _modules(self, resolved: ResolvedToolSet) -> dict[str, str]:
        modules = {}
        for tool in resolved.tools:
            if self.only is not None and tool.name != self.only:
                continue
            if tool.module is not None:
                modules[tool.name] = self.repo.absolute(tool.module)
            elif tool.builtin is not None:
                # a Beeuni tool's module ships in the rules folder (`beeuni rules check` saw it
                # there); absolute, as Bun would take a relative `--rules` from the host's folder
                modules[tool.name] = os.path.abspath(os.path.join(rules_folder(self.rules)[0], tool.builtin))
        return modules

    async def start(self) -> None:
        resolved, watched, run = self._resolve()
        messages = resolved.messages
        log.dropped_note = lambda count: say(messages, "log_dropped", detail=str(count)) + "\n"
        if resolved.errors:
            self._log_errors(resolved)
        abi, missing = landlock_missing()
        if not abi:
            if self.require_confinement:
                raise ConfinementRequired(say(messages, "confinement_required", detail=missing))
            log_line(say(messages, "not_confined", detail=missing) + "\n")
        self.current = await self._load(resolved, watched, run, None)

    async def _load(
        self, resolved: ResolvedToolSet, watched: dict[str, tuple[int, int]], run: ProjectRun, ceiling: Grants | None
    ) -> Loaded:
        harness = next((h for h in resolved.harnesses if h.name == self.harness), None)
        if harness is None:
            known = ", ".join(h.name for h in resolved.harnesses)
            raise UnknownHarness(f"unknown harness `{self.harness}`; harnesses: {known}")
        grants = Grants.of(resolved, harness)
        if ceiling is not None:
            wider = widenings(grants, ceiling)
            if wider:
                log_line(say(resolved.messages, "widened", detail="; ".join(wider)) + "\n")
        modules = self._modules(resolved)
        # the state folder (secrets, the sessions' records) stays out of reach even inside the repository
        confinement = confinement_for(self.bun, self.repo.root, modules.values(), [state_dir()])
        fresh = 0 if self.only is not None else FRESH  # one call: no process to keep started for the next
        host = ModuleHost(self.bun, modules, confinement, self.max_output, resolved.messages, fresh)
        report = await host.start(self.timeout)
        validators, failed = self._validators(resolved, report.loaded)
        failed.update(report.failed)
        if failed:
            lines = [resolved.messages["did_not_load"]]
            lines += [f"  {visible(name)}: {visible(reason)}" for name, reason in sorted(failed.items())]
            log_line("\n".join(lines) + "\n")
        self._log_uncarried(resolved, run, {name: report.loaded[name] for name in validators})
        view_outputs = self._view_outputs(resolved, run, validators)
        return Loaded(
            resolved,
            host,
            watched,
            harness,
            grants,
            ceiling or grants,
            validators,
            run.output("ARGUMENT_MESSAGES"),
            view_outputs,
        )

    def _view_outputs(
        self, resolved: ResolvedToolSet, run: ProjectRun, served: dict[str, Validator]
    ) -> dict[str, Validator]:
        """A validator of the output for each served override of a Beeuni tool whose web UI
        view reads its output (a module under the name of one in ``VIEW_OUTPUTS``)."""
        views = run.output("VIEW_OUTPUTS")
        found = {}
        for tool in resolved.tools:
            if tool.module is None or tool.name not in views or tool.name not in served:
                continue
            try:
                found[tool.name] = validator_of(views[tool.name])
            except InvalidSchema as invalid:  # a mistake in the rules: say so, serve the tool
                log_line(say(resolved.messages, "view_output", tool=tool.name, detail=str(invalid)) + "\n")
        return found

    def _validators(
        self, resolved: ResolvedToolSet, loaded: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, Validator], dict[str, str]]:
        """A validator for each loaded module's arguments, built once; a module whose
        ``parameters`` are not valid JSON Schema is not served (its reason is logged)."""
        validators, failed = {}, {}
        for name, tool in loaded.items():
            try:
                validators[name] = validator_of(tool["parameters"])
            except InvalidSchema as invalid:
                failed[name] = say(resolved.messages, "invalid_schema", tool=name, detail=str(invalid))
        return validators, failed

    def _log_uncarried(self, resolved: ResolvedToolSet, run: ProjectRun, served: dict[str, dict[str, Any]]) -> None:
        """One ``[tools]`` line for each place where this harness would not offer the model a
        served tool's parameters as written (the rules' ``SCHEMA_CARRIED``)."""
        carried = run.output("SCHEMA_CARRIED").get(self.harness)
        if carried is None:
            return
        for name, tool in sorted(served.items()):
            for problem in uncarried(tool["parameters"], carried, self.harness):
                detail = run.call("carry_problem", problem)
                log_line(say(resolved.messages, "not_carried", tool=name, detail=detail) + "\n")

    def _log_errors(self, resolved: ResolvedToolSet) -> None:
        for d in resolved.diagnostics:
            if d.severity == "error":
                log_line(f"{d.file}:{d.line}:{d.column}: error[{d.rule}] {d.message}\n")

    async def stop(self) -> None:
        if self.current is not None:
            await self.current.host.stop()

    # reloads -------------------------------------------------------------------------------

    def _changed(self) -> bool:
        assert self.current is not None
        return any(_stamp(path) != stamp for path, stamp in self.current.watched.items())

    async def _reload_if_changed(self) -> None:
        if self.current is None or not self._changed():
            return
        async with self._reload_lock:  # one reload at a time; the others find nothing changed
            if not self._changed():
                return
            self._reloading = True
            self._reloaded.clear()
            try:
                while self._in_flight:  # let the running calls finish (no await between test and clear)
                    self._drained.clear()
                    await self._drained.wait()
                resolved, watched, run = self._resolve()
                old = self.current
                if resolved.errors:
                    log_line(say(old.resolved.messages, "kept_last_good", detail=self.manifest) + "\n")
                    self._log_errors(resolved)
                    old.watched = watched  # say it once, not at every call
                    return
                self.current = await self._load(resolved, watched, run, old.ceiling)
                await old.host.stop()
            finally:
                self._reloading = False
                self._reloaded.set()

    async def refresh(self) -> None:
        """Reload when a watched file changed, or wait for the reload under way: what is read
        next follows the repository as it is now."""
        await self._reload_if_changed()
        while self._reloading:
            await self._reloaded.wait()

    async def _enter(self) -> Loaded:
        """Count a call in; while a reload is under way, wait for it. (The event loop runs one
        coroutine at a time, so a plain counter is exact between two awaits.)"""
        await self.refresh()
        self._in_flight += 1
        assert self.current is not None
        return self.current

    def _leave(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._drained.set()

    # lookups -------------------------------------------------------------------------------

    def visible(self, loaded: Loaded, agent: str | None, parent: str | None) -> list[str]:
        """The served tools ``agent`` sees (as ``parent``'s subagent, if given), in view order,
        as far as the session's start granted them; an agent the manifest does not declare sees
        the harness's default view."""
        name = agent or self.agent
        agents = loaded.grants.agents
        if parent is not None and parent not in agents:
            raise CallRefused(403, say(loaded.resolved.messages, "unknown_agent", agent=parent))
        # Cached by declared names only (every undeclared one sees the default view), so that
        # the cache holds at most what the manifest declares, whatever names the requests carry.
        key = (_declared(loaded, name), parent)
        found = loaded.visible.get(key)
        if found is not None:
            return found
        names = loaded.grants.view(name, parent)
        if names is None:
            raise CallRefused(403, say(loaded.resolved.messages, "not_delegating", agent=str(parent)))
        served, allowed = loaded.validators, loaded.ceiling.tool_set(name, parent)
        found = loaded.visible[key] = [tool for tool in names if tool in served and tool in allowed]
        return found

    def _refusal(self, loaded: Loaded, tool: str, agent: str, parent: str | None) -> CallRefused:
        """Why ``agent`` may not call the served ``tool``: its view lacks it, or was granted it
        after the daemon started."""
        messages = loaded.resolved.messages
        if tool in (loaded.grants.view(agent, parent) or ()):
            return CallRefused(403, say(messages, "granted_since_start", tool=tool, agent=agent))
        return CallRefused(403, say(messages, "not_visible", tool=tool, agent=agent))

    def offered(self, agent: str | None, parent: str | None, everything: bool) -> list[dict[str, Any]]:
        assert self.current is not None
        loaded = self.current
        served = loaded.host.report.loaded
        names = list(loaded.validators) if everything else self.visible(loaded, agent, parent)
        return [{"name": name, **served[name]} for name in names]

    def hidden_by_agent(self) -> dict[str, list[str]]:
        """For each declared agent, the tools the harness offers that it does not see: the
        harness's own tools (by the rules' groups) and the served ones outside its view. The
        standard harness's plugin hides them from the agent's model (calls are refused anyway)."""
        assert self.current is not None
        loaded = self.current
        offered = [tool.name for tool in loaded.harness.harness_tools] + list(loaded.validators)
        hidden = {}
        for agent in loaded.harness.agents:
            seen = loaded.grants.tool_set(agent.name, None) & loaded.ceiling.tool_set(agent.name, None)
            hidden[agent.name] = [name for name in offered if name not in seen]
        return hidden

    def env_for(self, loaded: Loaded, agent: str) -> dict[str, str]:
        """What a call sees of the environment: the platform's variables and provider keys from the
        daemon's environment, and the agent's granted secrets — nothing else. A stored secret
        never stands in for a platform variable (a store written before `secrets set` refused
        their names may hold one)."""
        platform_env = loaded.resolved.platform_env
        grant = narrowed(loaded.grants.secrets_of(agent), loaded.ceiling.secrets_of(agent))
        env = {name: value for name, value in self.secrets.granted(grant).items() if name not in platform_env}
        env.update((name, os.environ[name]) for name in platform_env if name in os.environ)
        return env

    # calls ---------------------------------------------------------------------------------

    def _check_offered(self, loaded: Loaded, tool: str, name: str, parent: str | None) -> None:
        """Refuse, as the daemon does, a tool that is not served or that ``name`` does not see."""
        if tool not in loaded.validators:  # not loaded, or its schema is invalid
            raise CallRefused(404, say(loaded.resolved.messages, "not_loaded", tool=tool, agent=name))
        if tool not in self.visible(loaded, name, parent):  # a short list, cached per agent
            raise self._refusal(loaded, tool, name, parent)

    def described(self, tool: str, agent: str | None) -> dict[str, Any]:
        """``tool`` as the daemon's listing shows it to ``agent``: name, description, parameters."""
        assert self.current is not None
        self._check_offered(self.current, tool, agent or self.agent, None)
        return {"name": tool, **self.current.host.report.loaded[tool]}

    async def call(self, tool: str, args: Any, agent: str | None, parent: str | None) -> CallOutcome:
        loaded = await self._enter()
        try:
            messages = loaded.resolved.messages
            name = agent or self.agent
            self._check_offered(loaded, tool, name, parent)
            if not isinstance(args, dict):
                raise CallRefused(422, say(messages, "not_an_object", tool=tool, agent=name))
            problem = argument_problem(loaded.validators[tool], args, loaded.argument_messages)
            if problem is not None:  # checked here, once, so both harnesses refuse the same calls alike
                raise CallRefused(422, say(messages, "invalid_arguments", tool=tool, agent=name, detail=problem))
            env = self.env_for(loaded, name)
            outcome = await loaded.host.call(tool, args, env, self.repo.root, self.timeout, _declared(loaded, name))
            if outcome.reason == "crashed":
                outcome.error = say(messages, "host_died", tool=tool, agent=name, detail=outcome.error)
            elif outcome.reason == "too_large":
                detail = f"{self.max_output / (1024 * 1024):g}"
                outcome.error = say(messages, "output_too_large", tool=tool, agent=name, detail=detail)
            elif outcome.reason == "unsendable":
                outcome.error = say(messages, "bad_arguments", tool=tool, agent=name, detail=outcome.error)
            elif outcome.ok and tool in loaded.view_outputs and tool not in self._view_misfits:
                self._check_view_output(loaded, tool, outcome.output)
            return outcome
        finally:
            self._leave()

    def arguments(self, body: bytes, tool: str) -> Any:
        """A call's arguments from its body (none: ``{}``), or ``CallRefused`` (400) for a body
        that is not strict JSON or nests too deep: the tool is not run."""
        messages = self.messages()
        try:
            return strict_json.parse(body) if body else {}
        except strict_json.TooDeep:
            raise CallRefused(400, say(messages, "too_deep", tool=tool, detail=str(strict_json.MAX_DEPTH))) from None
        except strict_json.NotStrict as err:
            raise CallRefused(400, say(messages, "not_strict_json", tool=tool, detail=err.literal)) from None
        except ValueError as err:  # not JSON, or not UTF-8
            raise CallRefused(400, say(messages, "bad_arguments", tool=tool, detail=str(err))) from None

    def failure(self, outcome: CallOutcome, tool: str, agent: str | None) -> tuple[int, str]:
        """The status and text of a call that did not answer (``outcome.ok`` false)."""
        messages = self.messages()
        if outcome.reason == "timed_out":
            return 504, say(messages, "timed_out", tool=tool, agent=agent or self.agent, detail=f"{self.timeout:g}")
        if outcome.reason == "not_loaded":
            return 404, say(messages, "not_loaded", tool=tool)
        return STATUS_OF_REASON.get(outcome.reason, 500), outcome.error

    def messages(self) -> dict[str, str]:
        """The rules' texts of the daemon (``DAEMON_MESSAGES``) of the tool set now served."""
        assert self.current is not None
        return self.current.resolved.messages

    def _check_view_output(self, loaded: Loaded, tool: str, output: str) -> None:
        """Log, once per tool and session, an override's output that does not fit the JSON the
        web UI's view of that tool reads (the rules' ``VIEW_OUTPUTS``): the view shows it raw."""
        messages = loaded.resolved.messages
        try:
            document = json.loads(output)
        except ValueError:
            problem: str | None = messages["output_not_json"]
        else:
            problem = argument_problem(loaded.view_outputs[tool], document, loaded.argument_messages)
        if problem is not None:
            self._view_misfits.add(tool)
            log_line(say(messages, "view_output", tool=tool, detail=problem) + "\n")


def _declared(loaded: Loaded, name: str) -> str | None:
    """``name`` when the session's tool set declares that agent (now or at its start), else
    ``None``: every undeclared agent sees the default view and gets no secrets, so they are one
    (a view cache entry, the module processes serving them)."""
    return name if name in loaded.grants.agents or name in loaded.ceiling.agents else None


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)
