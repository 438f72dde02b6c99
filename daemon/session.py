"""A session as the daemon serves it: the resolved tool set, the module host, and reloads.

Everything about *which* tool an agent sees comes from the engine's resolved tool set; this
module only looks things up in it. It watches the files the tool set was made from (the
manifest, its imports, the tool modules, the rules) and, when one changes, resolves again
between calls — never during one: a reload waits for the running calls to finish, and new calls
wait for the reload.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..engine.lang import rules_files
from ..engine.paths import Repository
from ..engine.project import ProjectRun, load_rules, locate, rules_folder
from ..engine.resolve import resolve
from ..engine.resolved import AgentView, Harness, ResolvedToolSet
from ..engine.visible import visible
from .host import DEFAULT_MAX_OUTPUT, POOL_SIZE, CallOutcome, ModuleHost
from .log import log
from .log import write as log_line
from .messages import say
from .sandbox import confinement_for, landlock_missing
from .secrets import SecretStore, state_dir

if TYPE_CHECKING:
    from typing import Any


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
    agents: dict[str, AgentView] = field(default_factory=dict)
    views: dict[str, list[str]] = field(default_factory=dict)
    subagent_views: dict[tuple[str, str], str] = field(default_factory=dict)
    visible: dict[tuple[str, str | None], list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.agents = {agent.name: agent for agent in self.harness.agents}
        self.views = {view.id: view.tools for view in self.harness.views}
        self.subagent_views = {(p.parent_view, p.child_view): p.view for p in self.harness.subagent_views}


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

    # the tool set ------------------------------------------------------------------------

    def _resolve(self) -> tuple[ResolvedToolSet, dict[str, tuple[int, int]]]:
        # A Repository remembers what its folders hold; a fresh one per resolve, so that a reload
        # sees the repository as it is now (a module created since the last one included).
        run = ProjectRun(Repository(self.repo.root), self.manifest, load_rules(self.rules))
        resolved = ResolvedToolSet.model_validate(resolve(run))
        files = [self.repo.absolute(str(f["path"])) for f in run.merged.files]
        files += [self.repo.absolute(tool.module) for tool in resolved.tools if tool.module]
        folder, _ = rules_folder(self.rules)
        files += [os.path.join(folder, tool.builtin) for tool in resolved.tools if tool.builtin]
        files += rules_files(folder)
        return resolved, {path: _stamp(path) for path in files}

    def _modules(self, resolved: ResolvedToolSet) -> dict[str, str]:
        modules = {}
        for tool in resolved.tools:
            if self.only is not None and tool.name != self.only:
                continue
            if tool.module is not None:
                modules[tool.name] = self.repo.absolute(tool.module)
            elif tool.builtin is not None:
                # a Beeuni tool's module ships in the rules folder (`beeuni rules check` saw it there)
                modules[tool.name] = os.path.join(rules_folder(self.rules)[0], tool.builtin)
        return modules

    async def start(self) -> None:
        resolved, watched = self._resolve()
        messages = resolved.messages
        log.dropped_note = lambda count: say(messages, "log_dropped", detail=str(count)) + "\n"
        if resolved.errors:
            self._log_errors(resolved)
        abi, missing = landlock_missing()
        if not abi:
            if self.require_confinement:
                raise ConfinementRequired(say(messages, "confinement_required", detail=missing))
            log_line(say(messages, "not_confined", detail=missing) + "\n")
        self.current = await self._load(resolved, watched)

    async def _load(self, resolved: ResolvedToolSet, watched: dict[str, tuple[int, int]]) -> Loaded:
        harness = next((h for h in resolved.harnesses if h.name == self.harness), None)
        if harness is None:
            known = ", ".join(h.name for h in resolved.harnesses)
            raise UnknownHarness(f"unknown harness `{self.harness}`; harnesses: {known}")
        modules = self._modules(resolved)
        # the state folder (secrets, the daemon's token) stays out of reach even inside the repository
        confinement = confinement_for(self.bun, self.repo.root, modules.values(), [state_dir()])
        pool = 0 if self.only is not None else POOL_SIZE  # one call: no process to keep warm for the next
        host = ModuleHost(self.bun, modules, confinement, self.max_output, resolved.messages, pool)
        report = await host.start(self.timeout)
        if report.failed:
            lines = [resolved.messages["did_not_load"]]
            lines += [f"  {visible(name)}: {visible(reason)}" for name, reason in sorted(report.failed.items())]
            log_line("\n".join(lines) + "\n")
        return Loaded(resolved, host, watched, harness)

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
                resolved, watched = self._resolve()
                old = self.current
                if resolved.errors:
                    log_line(say(old.resolved.messages, "kept_last_good", detail=self.manifest) + "\n")
                    self._log_errors(resolved)
                    old.watched = watched  # say it once, not at every call
                    return
                self.current = await self._load(resolved, watched)
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
        """The served tools ``agent`` sees (as ``parent``'s subagent, if given), in view order;
        an agent the manifest does not declare sees the harness's default view."""
        name = agent or self.agent
        found = loaded.visible.get((name, parent))
        if found is not None:
            return found
        messages = loaded.resolved.messages
        agents = loaded.agents
        view = agents[name].view if name in agents else loaded.harness.default_view
        if parent is not None:
            if parent not in agents:
                raise CallRefused(403, say(messages, "unknown_agent", agent=parent))
            if not agents[parent].can_delegate:
                raise CallRefused(403, say(messages, "not_delegating", agent=parent))
            view = loaded.subagent_views.get((agents[parent].view, view), view)
        served = loaded.host.report.loaded
        found = loaded.visible[(name, parent)] = [tool for tool in loaded.views[view] if tool in served]
        return found

    def offered(self, agent: str | None, parent: str | None, everything: bool) -> list[dict[str, Any]]:
        assert self.current is not None
        loaded = self.current
        served = loaded.host.report.loaded
        names = list(served) if everything else self.visible(loaded, agent, parent)
        return [{"name": name, **served[name]} for name in names]

    def hidden_by_agent(self) -> dict[str, list[str]]:
        """For each declared agent, the tools the harness offers that it does not see: the
        harness's own tools (by the rules' groups) and the served ones outside its view. The
        standard harness's plugin hides them from the agent's model (calls are refused anyway)."""
        assert self.current is not None
        loaded = self.current
        offered = [tool.name for tool in loaded.harness.harness_tools] + list(loaded.host.report.loaded)
        hidden = {}
        for agent in loaded.harness.agents:
            seen = set(loaded.views[agent.view])
            hidden[agent.name] = [name for name in offered if name not in seen]
        return hidden

    def env_for(self, resolved: ResolvedToolSet, agent: str) -> dict[str, str]:
        """What a call sees of the environment: the platform's variables and provider keys from the
        daemon's environment, and the agent's granted secrets — nothing else."""
        env = {name: os.environ[name] for name in resolved.platform_env if name in os.environ}
        env.update(self.secrets.granted(resolved.secrets.get(agent, [])))
        return env

    # calls ---------------------------------------------------------------------------------

    async def call(self, tool: str, args: Any, agent: str | None, parent: str | None) -> CallOutcome:
        loaded = await self._enter()
        try:
            messages = loaded.resolved.messages
            name = agent or self.agent
            if tool not in loaded.host.report.loaded:
                raise CallRefused(404, say(messages, "not_loaded", tool=tool, agent=name))
            if tool not in self.visible(loaded, name, parent):  # a short list, cached per agent
                raise CallRefused(403, say(messages, "not_visible", tool=tool, agent=name))
            if not isinstance(args, dict):
                raise CallRefused(422, say(messages, "not_an_object", tool=tool, agent=name))
            env = self.env_for(loaded.resolved, name)
            outcome = await loaded.host.call(tool, args, env, self.repo.root, self.timeout)
            if outcome.reason == "crashed":
                outcome.error = say(messages, "host_died", tool=tool, agent=name, detail=outcome.error)
            elif outcome.reason == "too_large":
                detail = f"{self.max_output / (1024 * 1024):g}"
                outcome.error = say(messages, "output_too_large", tool=tool, agent=name, detail=detail)
            elif outcome.reason == "unsendable":
                outcome.error = say(messages, "bad_arguments", tool=tool, agent=name, detail=outcome.error)
            return outcome
        finally:
            self._leave()


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)
