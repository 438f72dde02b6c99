"""The resolved tool set as a plain document: what ``beeuni resolve --json`` prints and the
daemon loads. Its model and JSON Schema are in ``resolved.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Literal

    from .project import ProjectRun

VERSION: Literal[1] = 1


def resolve(run: ProjectRun) -> dict[str, Any]:
    """The resolved tool set as a plain document, in the model's field order: what
    ``beeuni resolve --json`` prints, and what ``ResolvedToolSet.model_validate`` takes. The
    rules' outputs are checked against their shapes as they are read (``contract/readback.py``), so no
    model is needed to build it — the command stays clear of pydantic."""
    diagnostics = run.diagnostics()
    return {
        "version": VERSION,
        "manifest": run.manifest,
        "tools_key": run.output("tools_key"),
        "tools": run.output("session_tools"),
        "removed": run.output("removed_beeuni_tools"),
        "harnesses": [run.call("resolved_harness", h) for h in run.output("HARNESSES")],
        "secrets": {name: run.call("agent_secrets", name) for name in run.output("agent_names")},
        "platform_env": run.output("PLATFORM_ENV") + run.output("PROVIDER_KEYS"),
        "messages": run.output("DAEMON_MESSAGES"),
        # the daemon needs no fixes: the diagnostics as they were before fixes existed
        "diagnostics": [{key: value for key, value in d.as_dict().items() if key != "fix"} for d in diagnostics],
        "errors": run.count("error"),
    }
