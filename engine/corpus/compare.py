"""What a change of the rules does to one project: both rule sets run on the same files.

``compare_project`` is the unit of work of ``beeuni rules diff``: a pure function from a project
path and two compiled rule sets to a small, JSON-ready, comparable result. It reads the manifest
(and its imports) once, runs each rule set over those very facts, resolves each tool set with
``resolve.resolve`` — the document the daemon loads, as ``beeuni resolve --json`` prints it —
and compares:

- the diagnostics: removed, added, and changed (same rule at the same position, another
  severity or message);
- the session's tools: removed, added, and changed (same name, another kind or source);
- on each harness, each agent's visible tools (its view and its connectors; ``agent`` null is
  the view of an agent the manifest does not declare): the tools it lost and gained;
- a failure of either side (the manifest is missing, or a rule fails on this project).

Nothing here raises: whatever goes wrong in one project is that project's result.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..lang import RulesError
from ..lang.values import text
from ..manifest import load_manifest
from ..project import ManifestNotFound, ProjectRun, locate
from ..resolve import resolve

if TYPE_CHECKING:
    from typing import Any

    from ..manifest import MergedManifest
    from ..paths import Repository

    DiagnosticKey = tuple[str, int, int, str, str, str]  # file, line, column, rule, severity, message


def compare_project(shown: str, path: str, base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The difference ``new`` makes to the project at ``path`` against ``base``; ``shown`` is how
    the report names the project."""
    try:
        repo, manifest = locate(path)
        merged = load_manifest(repo, manifest)
    except ManifestNotFound:  # said without the path it was read at: the report names the project
        return not_compared(shown, "no manifest found")
    except Exception as err:  # a project that cannot be read fails under both rule sets alike
        return not_compared(shown, describe_failure(err))
    before = snapshot(repo, manifest, merged, base)
    after = snapshot(repo, manifest, merged, new)
    return _result(shown, manifest, before, after)


def snapshot(repo: Repository, manifest: str, merged: MergedManifest, program: dict[str, Any]) -> dict[str, Any]:
    """What one rule set makes of the project — its resolved tool set, as ``beeuni resolve
    --json`` prints it — reduced to plain values (the located strings of the manifest do not
    travel between processes) and to what the comparison needs."""
    try:
        resolved = resolve(ProjectRun(repo, manifest, program, merged=merged))
    except Exception as err:
        return {"failure": describe_failure(err)}
    return {
        "diagnostics": [
            (str(d["file"]), int(d["line"]), int(d["column"]), str(d["rule"]), str(d["severity"]), str(d["message"]))
            for d in resolved["diagnostics"]
        ],
        "tools": {str(t["name"]): {"kind": text(t["kind"]), "source": text(t["source"])} for t in resolved["tools"]},
        "agents": _visible_tools(resolved),
    }


def not_compared(shown: str, reason: str) -> dict[str, Any]:
    """The result of a project that neither rule set could run on."""
    return _result(shown, None, {"failure": reason}, {"failure": reason})


def describe_failure(err: Exception) -> str:
    if isinstance(err, RulesError):
        return f"{err.file}:{err.line}:{err.column}: error[rules] {err.message}"
    return f"{type(err).__name__}: {err}"


def _visible_tools(resolved: dict[str, Any]) -> dict[tuple[str, str | None], frozenset[str]]:
    found: dict[tuple[str, str | None], frozenset[str]] = {}
    for harness in resolved["harnesses"]:
        name = str(harness["name"])
        views = {str(view["id"]): view["tools"] for view in harness["views"]}
        found[(name, None)] = frozenset(map(str, views.get(str(harness["default_view"]), ())))
        for agent in harness["agents"]:
            visible = (*views.get(str(agent["view"]), ()), *(tool["name"] for tool in agent["connectors"]))
            found[(name, str(agent["name"]))] = frozenset(map(str, visible))
    return found


def _result(shown: str, manifest: str | None, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "project": shown,
        "manifest": manifest,
        "failure": {"base": before.get("failure"), "new": after.get("failure")},
        "diagnostics": {"removed": [], "added": [], "changed": []},
        "tools": {"removed": [], "added": [], "changed": []},
        "agents": [],
    }
    if "failure" not in before and "failure" not in after:
        result["diagnostics"] = _diagnostic_changes(before["diagnostics"], after["diagnostics"])
        result["tools"] = _tool_changes(before["tools"], after["tools"])
        result["agents"] = _agent_changes(before["agents"], after["agents"])
    result["affected"] = is_affected(result)
    return result


def is_affected(result: dict[str, Any]) -> bool:
    failure = result["failure"]
    return (
        failure["base"] != failure["new"]
        or any(result["diagnostics"].values())
        or any(result["tools"].values())
        or bool(result["agents"])
    )


def _diagnostic_changes(before: list[DiagnosticKey], after: list[DiagnosticKey]) -> dict[str, list[Any]]:
    """Diagnostics found by one side only; one of each side at the same position and rule is
    paired as *changed* (its severity or message differs)."""
    old, new = Counter(before), Counter(after)
    gone = sorted((old - new).elements())
    came = sorted((new - old).elements())
    unpaired: dict[tuple[str, int, int, str], list[DiagnosticKey]] = {}
    for key in gone:
        unpaired.setdefault(key[:4], []).append(key)
    added, changed = [], []
    for key in came:
        partners = unpaired.get(key[:4])
        if partners:
            changed.append({"before": _diagnostic(partners.pop(0)), "after": _diagnostic(key)})
        else:
            added.append(_diagnostic(key))
    removed = [_diagnostic(key) for key in sorted(key for keys in unpaired.values() for key in keys)]
    return {"removed": removed, "added": added, "changed": changed}


def _diagnostic(key: DiagnosticKey) -> dict[str, Any]:
    file, line, column, rule, severity, message = key
    return {"rule": rule, "severity": severity, "message": message, "file": file, "line": line, "column": column}


def _tool_changes(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> dict[str, list[Any]]:
    return {
        "removed": sorted(set(before) - set(after)),
        "added": sorted(set(after) - set(before)),
        "changed": [
            {"name": name, "before": before[name], "after": after[name]}
            for name in sorted(set(before) & set(after))
            if before[name] != after[name]
        ],
    }


def _agent_changes(
    before: dict[tuple[str, str | None], frozenset[str]], after: dict[tuple[str, str | None], frozenset[str]]
) -> list[dict[str, Any]]:
    changes = []
    for harness, agent in sorted(set(before) | set(after), key=lambda key: (key[0], key[1] is not None, key[1] or "")):
        old = before.get((harness, agent), frozenset())
        new = after.get((harness, agent), frozenset())
        if old != new:
            changes.append(
                {"harness": harness, "agent": agent, "removed": sorted(old - new), "added": sorted(new - old)}
            )
    return changes
