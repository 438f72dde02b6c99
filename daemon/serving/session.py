"""A session as the daemon serves it: a release, its resolved tool set, and the module host.

A session serves its config release — the files git tracks at one commit, copied once into the
daemon's private folder (``engine/release/snapshot.py``) — never the working tree, which stays
the agents' and the modules' workspace (``context.cwd``). The manifest, its imports, every module
and every file a module imports, and a rules folder inside the repository, are read from the
release; nothing written in the working tree changes what is served. (``beeuni tools call``, the
tool author's loop, serves the working tree as it is, unless asked for a release.)

A running session moves to another release only when its starter says so (``converge``): the new
release is taken, resolved and loaded beside the one served, without blocking the event loop,
then served from the next call on. A call runs wholly in the generation it started in; the old
generation's module host stops once its last call has ended. A start and a convergence make a
generation the same way (``_generation``): whether a release is served at all, and which of its
tools are skipped, is decided once (``engine/release/served.py``), so a running session serves
exactly what a new one on the same release would. A convergence that fails for any reason keeps
the generation served and says why.

Everything about *which* tool an agent sees comes from the engine's resolved tool set; this
module only looks things up in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ...engine.paths import git_top
from ...engine.printable import printable
from ...engine.project import ProjectRun, locate, rules_folder
from ...engine.release.served import error_line, refusal, unreleased
from ...engine.release.served_run import release_run, rules_inside, rules_of
from ...engine.release.snapshot import ReleaseError, Snapshot, commit_of, take, take_folder
from ...engine.resolve import resolve
from ..box import pid_namespace, syscall_filter
from ..box.sandbox import confinement_for, landlock_missing
from ..edge import strict_json
from ..host import probe_cache
from ..host.module_host import DEFAULT_MAX_OUTPUT, FRESH, STATUS_OF_REASON, CallOutcome, ModuleHost
from ..host.probe_process import LoadProcess
from ..host.schema_offer import uncarried
from ..log import log
from ..log import write as log_line
from ..messages import rules_texts, say
from .changes import Changes, changes_between
from .generation import Generation
from .grants import Grants
from .private import PrivateFolder
from .secrets import SecretStore, hidden_from_boxes, state_dir

if TYPE_CHECKING:
    from typing import Any

    from jsonschema.protocols import Validator

    from ...engine.resolved import ResolvedToolSet


class UnknownHarness(Exception):
    """The session was asked for a harness the rules do not define."""


class StartRefused(Exception):
    """The session cannot start: the text says why (the rules' words)."""


class CallRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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
        release: str | None = None,
        working_tree: bool = False,
        loader: LoadProcess | None = None,
    ) -> None:
        """``release``: the commit to serve (None: the one ``HEAD`` names); ``working_tree``:
        serve the working tree as it is instead (``beeuni tools call`` without ``--release``);
        ``loader``: a load process started already, for the first release's load."""
        self.repo, self.manifest = locate(path)  # the working tree: the calls' context.cwd
        self.git = git_top(self.repo.root)  # the git work tree's top and git's folder, or None
        self.top = self.git[0] if self.git is not None else self.repo.root
        self.only = only  # load this one tool's module, not the session's others (`beeuni tools call`)
        self.rules = rules
        self.harness = harness
        self.agent = agent
        self.bun = bun
        self.timeout = timeout
        self.max_output = max_output
        self.require_confinement = require_confinement
        self.release = release
        self.working_tree = working_tree
        self.secrets = SecretStore(self.repo.root)
        self.private: PrivateFolder | None = None
        self.current: Generation | None = None
        self._calls = 0  # calls running in every generation
        self._idle = asyncio.Event()
        self._idle.set()
        self._converging = asyncio.Lock()
        self._view_misfits: set[str] = set()  # the overrides whose output misfit was logged this session
        self._loader = loader

    # the releases ------------------------------------------------------------------------

    def _take(self, release: str | None, private: PrivateFolder) -> Snapshot | None:
        """The release to serve, copied into the private folder; None for the working tree.
        Where there is no release — no git repository, or no commit yet — a copy of the
        project's folder as it is now."""
        if self.working_tree:
            return None
        commit = commit_of(self.top, release) if self.git is not None else None
        if commit is None:
            if release is not None:
                raise ReleaseError("release_no_git", self.repo.root)
            leave_out = [state_dir(), private.path, *self._git_folders()]
            return take_folder(self.repo.root, private.next_release(), leave_out)
        rules = self._rules_in_repository()
        serving = self.current.snapshot if self.current is not None else None
        extra = [rules] if rules else []
        return take(self.repo.root, self.manifest, commit, private.next_release(), extra, serving)

    def _git_folders(self) -> list[str]:
        """git's folder and the work tree's ``.git`` (a folder, or a linked work tree's file)."""
        return [self.git[1], os.path.join(self.top, ".git")] if self.git is not None else []

    def _rules_in_repository(self) -> str | None:
        """The ``--rules`` folder when it lies inside the git work tree (or the project's folder):
        it is read from the release, as the manifest is."""
        return rules_inside(self.rules, self.top)

    def _rules_of(self, snapshot: Snapshot | None) -> str | None:
        """The rules folder to read: inside the repository, its copy in the release."""
        return rules_of(self.rules, self.top, snapshot)

    def _resolve(self, snapshot: Snapshot | None) -> tuple[dict[str, Any], ProjectRun]:
        """The release's tool set as the rules' plain document (``engine/resolve.py``), or
        ``StartRefused`` when the release is not served at all (``engine/release/served.py``
        decides, the same for a new session and a running one)."""
        run = release_run(self.repo.root, self.manifest, self.rules, self.top, snapshot)
        document = resolve(run)
        refused = refusal(run)
        if refused is not None:
            raise StartRefused(say(document["messages"], "release_invalid", detail=error_line(refused)))
        return document, run

    def _modules(self, tools: list[dict[str, Any]], snapshot: Snapshot | None) -> dict[str, str]:
        """Each served tool's module, absolute: ``tools`` as the resolved document lists them."""
        root = snapshot.root if snapshot is not None else self.repo.root
        rules = rules_folder(self._rules_of(snapshot))[0]
        modules = {}
        for tool in tools:
            if self.only is not None and tool["name"] != self.only:
                continue
            if tool.get("module") is not None:
                modules[tool["name"]] = os.path.join(root, tool["module"])
            elif tool.get("builtin") is not None:
                # a Beeuni tool's module ships in the rules folder (`beeuni rules check` saw it
                # there); absolute, as Bun would take a relative `--rules` from the host's folder
                modules[tool["name"]] = os.path.abspath(os.path.join(rules, tool["builtin"]))
        return modules

    async def start(self, meanwhile: Callable[[], object] | None = None) -> None:
        """Take the release, resolve it and load its modules; ``StartRefused`` with the reason
        when there is no release to serve or its tool set cannot be made. ``meanwhile`` runs in a
        thread while the modules load (the daemon imports its HTTP side then)."""
        self.private = PrivateFolder()
        try:
            self.current = await self._generation(self.release, meanwhile)
        except BaseException as err:
            self.private.remove()
            if isinstance(err, ReleaseError):
                raise StartRefused(say(rules_texts(self.rules), err.key, detail=err.detail)) from None
            if isinstance(err, UnknownHarness):
                raise StartRefused(str(err)) from None
            raise
        resolved = self.current.resolved
        if self.current.snapshot is not None and self.current.snapshot.commit is None:  # said once
            said = "serving_folder" if self.git is None else "serving_uncommitted"
            log_line(say(resolved.messages, said, detail=self.repo.root) + "\n")

    async def _generation(self, release: str | None, meanwhile: Callable[[], object] | None = None) -> Generation:
        assert self.private is not None
        # the first release's was started with the daemon (``commands.daemon``); started now, it is
        # ready once the release is taken and resolved; one call's load is one module's process,
        # which the daemon starts sooner than a process to start it
        loader, self._loader = self._loader, None
        if loader is None and self.only is None:
            loader = LoadProcess()
        try:
            return await self._made(release, loader, meanwhile)
        finally:
            if loader is not None:
                loader.close()

    async def _made(
        self, release: str | None, loader: LoadProcess | None, meanwhile: Callable[[], object] | None
    ) -> Generation:
        assert self.private is not None
        snapshot = await asyncio.to_thread(self._take, release, self.private)
        try:
            document, run = await asyncio.to_thread(self._resolve, snapshot)
            planned = self._plan(snapshot, document, run)
            try:
                if planned.kept is None and loader is not None:
                    # the modules load from here on, in processes of their own, while the tool
                    # set's model is made and the daemon goes on starting
                    await asyncio.to_thread(planned.host.ask, self.timeout, loader)
                resolved = await asyncio.to_thread(_model_of, document)
            except BaseException:
                await planned.host.stop()  # not started: its folder only
                raise
            return await self._load(snapshot, resolved, run, planned, loader, meanwhile)
        except BaseException:
            if snapshot is not None:
                snapshot.remove()
            raise

    def _plan(self, snapshot: Snapshot | None, document: dict[str, Any], run: ProjectRun) -> _Planned:
        """What the release's load needs, from the rules' plain document alone (no model of it
        yet): a release not served as the confinement requires, or for an unknown harness, is
        refused here, before any module loads."""
        assert self.private is not None
        messages = document["messages"]
        log.dropped_note = lambda count: say(messages, "log_dropped", detail=str(count)) + "\n"
        for missing, required, said in (
            (landlock_missing()[1], "confinement_required", "not_confined"),
            (syscall_filter.missing(), "filter_required", "not_filtered"),
            (pid_namespace.missing(), "containment_required", "not_contained"),
        ):
            if missing and self.require_confinement:
                raise StartRefused(say(messages, required, detail=missing))
            if missing and self.current is None:
                log_line(say(messages, said, detail=missing) + "\n")
        harnesses = [harness["name"] for harness in document["harnesses"]]
        if self.harness not in harnesses:
            raise UnknownHarness(f"unknown harness `{self.harness}`; harnesses: {', '.join(harnesses)}")
        modules = self._modules(document["tools"], snapshot)
        skipped = unreleased(run)
        not_released = {name: reason for name, reason in skipped.items() if name in modules}
        for d in document["diagnostics"]:  # a release served with errors: said for every generation alike,
            if d["severity"] == "error" and d["message"] not in skipped.values():  # a skipped tool's reason once, below
                log_line(_error_line(d) + "\n")
        loadable = {name: path for name, path in modules.items() if name not in not_released}
        harness_modules = self._harness_modules(run, snapshot)
        loadable.update((key, path) for key, path in harness_modules.values())
        self._make_tool_folders(document["tools"], run)
        confinement = confinement_for(
            self.bun,
            self.repo.root,
            loadable.values(),
            hidden_from_boxes(),
            work=self.private.folder("work"),
            release=snapshot.folder if snapshot is not None else None,
            protected=self._protected(run),
        )
        fresh = 0 if self.only is not None else FRESH  # one call: no process to keep started for the next
        host = ModuleHost(
            self.bun, loadable, confinement, self.max_output, messages, self.private.folder("host"), fresh
        )
        key = probe_cache.release_key(snapshot, loadable, self.bun, self.timeout)
        kept = probe_cache.read(self.repo.root, key) if key is not None else None
        return _Planned(host, harness_modules, not_released, key, kept)

    async def _load(
        self,
        snapshot: Snapshot | None,
        resolved: ResolvedToolSet,
        run: ProjectRun,
        planned: _Planned,
        loader: LoadProcess | None,
        meanwhile: Callable[[], object] | None = None,
    ) -> Generation:
        harness = next(h for h in resolved.harnesses if h.name == self.harness)
        host, harness_modules, not_released = planned.host, planned.harness_modules, planned.not_released
        key, kept = planned.key, planned.kept
        facts = await host.start(self.timeout, loader, kept, partial(_meanwhile, meanwhile))
        if key is not None and kept is None:
            probe_cache.keep(self.repo.root, key, facts)
        harness_keys = {key: tool for tool, (key, _) in harness_modules.items()}
        served = {name: tool for name, tool in host.loaded.items() if name not in harness_keys}
        validators, failed = self._validators(resolved, served)
        harness_validators, harness_failed = self._validators(
            resolved, {key: tool for key, tool in host.loaded.items() if key in harness_keys}
        )
        failed.update(harness_failed)
        failed.update(not_released)
        failed.update(_shown(host.failed, snapshot, self.top))
        if failed:
            lines = [resolved.messages["did_not_load"]]
            lines += [f"  {printable(name)}: {printable(reason)}" for name, reason in sorted(failed.items())]
            log_line("\n".join(lines) + "\n")
        self._log_uncarried(resolved, run, {name: host.loaded[name] for name in validators})
        return Generation(
            snapshot,
            run,
            resolved,
            host,
            harness,
            Grants(harness, resolved.secrets),
            host.modules,
            validators,
            run.output("ARGUMENT_MESSAGES"),
            self._view_outputs(resolved, run, validators),
            {tool: key for tool, (key, _) in harness_modules.items()},
            harness_validators,
        )

    def _harness_modules(self, run: ProjectRun, snapshot: Snapshot | None) -> dict[str, tuple[str, str]]:
        """The modules of this harness's own tools that run in the daemon (the rules'
        ``HARNESS_MODULES``; none for a harness whose tools are its own, or for one tool's
        call): each tool's key in the module host and the module's absolute path. The key is no
        tool name (it holds a `/`), so a harness tool's module never stands for a served tool."""
        if self.only is not None or "HARNESS_MODULES" not in run.program["lets"]:
            return {}
        rules = rules_folder(self._rules_of(snapshot))[0]
        return {
            entry["tool"]: (f"{self.harness}/{entry['tool']}", os.path.abspath(os.path.join(rules, entry["module"])))
            for entry in run.output("HARNESS_MODULES")
            if entry["harness"] == self.harness
        }

    def _protected(self, run: ProjectRun) -> list[str]:
        """What no module may write though it lies in the working tree: git's folder (its hooks
        and configuration run later), what the harness loads from the repository (the rules'
        ``HARNESS_FILES``) and a rules folder inside it. (The state folder, with the secrets, is
        hidden whole.)"""
        protected = self._git_folders()
        protected += [os.path.join(self.repo.root, path) for path in run.output("HARNESS_FILES")]
        inside = self._rules_in_repository()
        if inside is not None:
            protected.append(inside)
        return protected

    def _make_tool_folders(self, tools: list[dict[str, Any]], run: ProjectRun) -> None:
        """The working tree's folders the served tools keep their files in (the rules'
        ``TOOL_FOLDERS``), made when missing: a module cannot make one in the repository's top
        folder, where git's folder lies (Landlock only allows, so the top's own entries are
        allowed one by one)."""
        folders = run.output("TOOL_FOLDERS")
        for tool in tools:
            folder = folders.get(tool["name"])
            if folder is not None and self.repo.relative(folder) is not None:
                path = self.repo.absolute(folder)
                if not os.path.lexists(path):
                    os.makedirs(path, exist_ok=True)

    def _view_outputs(
        self, resolved: ResolvedToolSet, run: ProjectRun, served: dict[str, Validator]
    ) -> dict[str, Validator]:
        """A validator of the output for each served override of a Beeuni tool whose web UI
        view reads its output (a module under the name of one in ``VIEW_OUTPUTS``)."""
        from ..host.arguments import InvalidSchema, validator_of

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
        from ..host.arguments import InvalidSchema, validator_of

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

    async def stop(self) -> None:
        if self.current is not None:
            await self.current.host.stop()
        if self.private is not None:
            self.private.remove()

    # convergence ---------------------------------------------------------------------------

    async def converge(self, release: str | None) -> Changes:
        """Serve ``release`` (None: the commit ``HEAD`` names now) from the next call on; what
        changed. Raises what stopped it — the generation served stays (the caller says why)."""
        async with self._converging:  # one at a time, in the order asked
            old = self.current
            assert old is not None
            new = await self._generation(release)  # refused as a new session's start would be
            changes = await asyncio.to_thread(changes_between, old, new)
            self.current = new
            if old.calls == 0:
                await self._retire(old)
            return changes

    async def _retire(self, generation: Generation) -> None:
        """Stop a generation no call runs in any more, and remove its release."""
        await generation.host.stop()
        if generation.snapshot is not None:
            generation.snapshot.remove()

    async def idle(self) -> None:
        """Return once no call runs (at once when none does)."""
        await self._idle.wait()

    # lookups -------------------------------------------------------------------------------

    def visible(self, generation: Generation, agent: str | None, parent: str | None) -> list[str]:
        """The served tools ``agent`` sees (as ``parent``'s subagent, if given), in view order; an
        agent the manifest does not declare sees the harness's default view."""
        name = agent or self.agent
        agents = generation.grants.agents
        if parent is not None and parent not in agents:
            raise CallRefused(403, say(generation.resolved.messages, "unknown_agent", agent=parent))
        # Cached by declared names only (every undeclared one sees the default view), so that
        # the cache holds at most what the manifest declares, whatever names the requests carry.
        key = (_declared(generation, name), parent)
        found = generation.visible.get(key)
        if found is not None:
            return found
        names = generation.grants.view(name, parent)
        if names is None:
            raise CallRefused(403, say(generation.resolved.messages, "not_delegating", agent=str(parent)))
        found = generation.visible[key] = [tool for tool in names if tool in generation.validators]
        return found

    def offered(self, agent: str | None, parent: str | None, everything: bool) -> list[dict[str, Any]]:
        assert self.current is not None
        generation = self.current
        served = generation.host.loaded
        names = list(generation.validators) if everything else self.visible(generation, agent, parent)
        return [{"name": name, **served[name]} for name in names]

    def hidden_by_agent(self) -> dict[str, list[str]]:
        """For each declared agent, the tools the harness offers that it does not see: the
        harness's own tools (by the rules' groups) and the served ones outside its view. The
        standard harness's plugin hides them from the agent's model (calls are refused anyway)."""
        assert self.current is not None
        generation = self.current
        offered = [tool.name for tool in generation.harness.harness_tools] + list(generation.validators)
        hidden = {}
        for agent in generation.harness.agents:
            seen = set(generation.grants.view(agent.name, None) or ())
            hidden[agent.name] = [name for name in offered if name not in seen]
        return hidden

    def permission_by_agent(self) -> dict[str, list[dict[str, str]]]:
        """For each declared agent, its ``permission`` as the rules resolved it for this harness:
        ordered rules, the last match wins. The standard harness's plugin gives them to opencode
        as that agent's permission (before the denies of what it does not see)."""
        assert self.current is not None
        return {agent.name: [rule.model_dump() for rule in agent.permission] for agent in self.current.harness.agents}

    def env_for(self, generation: Generation, agent: str) -> dict[str, str]:
        """What a call sees of the environment: the platform's variables and provider keys from the
        daemon's environment, and the agent's granted secrets — nothing else. A stored secret
        never stands in for a platform variable (a store written before `secrets set` refused
        their names may hold one)."""
        platform_env = generation.resolved.platform_env
        grant = generation.grants.secrets_of(agent)
        env = {name: value for name, value in self.secrets.granted(grant).items() if name not in platform_env}
        env.update((name, os.environ[name]) for name in platform_env if name in os.environ)
        return env

    # calls ---------------------------------------------------------------------------------

    def _check_offered(self, generation: Generation, tool: str, name: str, parent: str | None) -> None:
        """Refuse, as the daemon does, a tool that is not served or that ``name`` does not see."""
        messages = generation.resolved.messages
        if tool not in generation.validators:  # not loaded, or its schema is invalid
            raise CallRefused(404, say(messages, "not_loaded", tool=tool, agent=name))
        if tool not in self.visible(generation, name, parent):  # a short list, cached per agent
            raise CallRefused(403, say(messages, "not_visible", tool=tool, agent=name))

    def described(self, tool: str, agent: str | None) -> dict[str, Any]:
        """``tool`` as the daemon's listing shows it to ``agent``: name, description, parameters."""
        assert self.current is not None
        self._check_offered(self.current, tool, agent or self.agent, None)
        return {"name": tool, **self.current.host.loaded[tool]}

    async def call(self, tool: str, args: Any, agent: str | None, parent: str | None) -> CallOutcome:
        async with self._running() as generation:
            return await self._call(generation, tool, args, agent or self.agent, parent)

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[Generation]:
        """The generation served now, for one call: the call runs wholly in it, whatever
        converges meanwhile, and it is retired after its last call once another is served."""
        generation = self.current
        assert generation is not None
        generation.calls += 1
        self._calls += 1
        self._idle.clear()
        try:
            yield generation
        finally:
            generation.calls -= 1
            self._calls -= 1
            if generation is not self.current and generation.calls == 0:
                await self._retire(generation)
            if self._calls == 0:
                self._idle.set()

    async def _call(self, generation: Generation, tool: str, args: Any, name: str, parent: str | None) -> CallOutcome:
        messages = generation.resolved.messages
        self._check_offered(generation, tool, name, parent)
        if not isinstance(args, dict):
            raise CallRefused(422, say(messages, "not_an_object", tool=tool, agent=name))
        from ..host.arguments import argument_problem

        problem = argument_problem(generation.validators[tool], args, generation.argument_messages)
        if problem is not None:  # checked here, once, so both harnesses refuse the same calls alike
            raise CallRefused(422, say(messages, "invalid_arguments", tool=tool, agent=name, detail=problem))
        env = self.env_for(generation, name)
        owner = _declared(generation, name)
        outcome = await generation.host.call(tool, args, env, self.repo.root, self.timeout, owner)
        if outcome.reason == "crashed":
            outcome.error = say(messages, "host_died", tool=tool, agent=name, detail=outcome.error)
        elif outcome.reason == "too_large":
            detail = f"{self.max_output / (1024 * 1024):g}"
            outcome.error = say(messages, "output_too_large", tool=tool, agent=name, detail=detail)
        elif outcome.reason == "unsendable":
            outcome.error = say(messages, "bad_arguments", tool=tool, agent=name, detail=outcome.error)
        elif outcome.ok and tool in generation.view_outputs and tool not in self._view_misfits:
            self._check_view_output(generation, tool, outcome.output)
        return outcome

    async def call_harness_tool(self, tool: str, module: str, args: Any, agent: str) -> CallOutcome:
        """Run the harness's own ``tool`` (its module host key ``module``) for ``agent``, as a
        served tool's call runs: in the generation it starts in, its arguments checked against
        the module's schema, in the same box — with no secrets (the model's commands get none)."""
        async with self._running() as generation:
            messages = generation.resolved.messages
            if module not in generation.harness_validators:
                raise CallRefused(404, say(messages, "not_loaded", tool=tool, agent=agent))
            if not isinstance(args, dict):
                raise CallRefused(422, say(messages, "not_an_object", tool=tool, agent=agent))
            from ..host.arguments import argument_problem

            problem = argument_problem(generation.harness_validators[module], args, generation.argument_messages)
            if problem is not None:
                raise CallRefused(422, say(messages, "invalid_arguments", tool=tool, agent=agent, detail=problem))
            owner = _declared(generation, agent)
            return await generation.host.call(module, args, {}, self.repo.root, self.timeout, owner)

    def arguments(self, body: bytes, tool: str) -> Any:
        """A call's arguments from its body (none: ``{}``), or ``CallRefused`` (400) for a body
        that is not strict JSON or nests too deep: the tool is not run."""
        messages = self.messages()
        try:
            return strict_json.parse(body) if body else {}
        except strict_json.TooDeep:
            raise CallRefused(400, say(messages, "too_deep", tool=tool, detail=str(strict_json.MAX_DEPTH))) from None
        except strict_json.Inexact as err:
            detail, size = err.shown, str(err.digits)
            raise CallRefused(400, say(messages, "inexact_number", tool=tool, detail=detail, size=size)) from None
        except strict_json.NotStrict as err:
            raise CallRefused(400, say(messages, "not_strict_json", tool=tool, detail=err.literal)) from None
        except ValueError as err:  # not JSON, or not UTF-8
            raise CallRefused(400, say(messages, "bad_arguments", tool=tool, detail=str(err))) from None

    def failure(self, outcome: CallOutcome, tool: str, agent: str | None) -> tuple[int, str]:
        """The status and text of a call that did not answer (``outcome.ok`` false)."""
        messages = self.messages()
        if outcome.reason == "timed_out":
            return 504, say(messages, "timed_out", tool=tool, agent=agent or self.agent, detail=f"{self.timeout:g}")
        return STATUS_OF_REASON.get(outcome.reason, 500), outcome.error

    def messages(self) -> dict[str, str]:
        """The rules' texts of the daemon (``DAEMON_MESSAGES``) of the tool set now served."""
        assert self.current is not None
        return self.current.resolved.messages

    def _check_view_output(self, generation: Generation, tool: str, output: str) -> None:
        """Log, once per tool and session, an override's output that does not fit the JSON the
        web UI's view of that tool reads (the rules' ``VIEW_OUTPUTS``): the view shows it raw."""
        messages = generation.resolved.messages
        try:
            document = json.loads(output)
        except ValueError:
            problem: str | None = messages["output_not_json"]
        else:
            from ..host.arguments import argument_problem

            problem = argument_problem(generation.view_outputs[tool], document, generation.argument_messages)
        if problem is not None:
            self._view_misfits.add(tool)
            log_line(say(messages, "view_output", tool=tool, detail=problem) + "\n")


def _meanwhile(also: Callable[[], object] | None) -> None:
    """What runs while the modules load: the import of jsonschema (the validators are made right
    after the load, and its import is a twentieth of a start), and the daemon's ``also``."""
    from ..host import arguments  # noqa: F401

    if also is not None:
        also()


def _error_line(d: dict[str, Any]) -> str:
    """A diagnostic of the resolved document as the log says it."""
    return f"{d['file']}:{d['line']}:{d['column']}: error[{d['rule']}] {d['message']}"


def _model_of(document: dict[str, Any]) -> ResolvedToolSet:
    """The tool set's model (pydantic's import and its schema are a fifth of a start: made once
    the modules load, not before)."""
    from ...engine.resolved import ResolvedToolSet

    return ResolvedToolSet.model_validate(document)


@dataclass(frozen=True)
class _Planned:
    """A release's load, as ``Session._plan`` makes it before the tool set's model."""

    host: ModuleHost  # not started yet: its modules (tool name, or a harness tool's key → module) and box
    harness_modules: dict[str, tuple[str, str]]  # harness tool → (its key in the host, module)
    not_released: dict[str, str]  # a skipped tool → why
    key: str | None  # of the load report kept for the release
    kept: list[dict[str, Any]] | None  # that report, when kept


def _declared(generation: Generation, name: str) -> str | None:
    """``name`` when the tool set declares that agent, else ``None``: every undeclared agent sees
    the default view and gets no secrets, so they are one (a view cache entry, the module
    processes serving them)."""
    return name if name in generation.grants.agents else None


def _shown(failed: dict[str, str], snapshot: Snapshot | None, top: str) -> dict[str, str]:
    """Load failures with paths in the release shown as the repository names them."""
    if snapshot is None:
        return failed
    return {name: _own_paths(reason, snapshot, top) for name, reason in failed.items()}


def _own_paths(reason: str, snapshot: Snapshot, top: str) -> str:
    """A reason with the release's copy named as the user's own: a path of the project's folder
    from that folder, any other (a node_modules above it) where the work tree has it."""
    return reason.replace(snapshot.root + "/", "").replace(snapshot.folder.rstrip("/"), top.rstrip("/"))
