"""The report of ``beeuni rules diff``: a summary, then each affected project, as text, JSON or
Markdown (for a change request comment).

Each change is one line that starts with ``-`` (the base rules' side) or ``+`` (the new rules'
side), as in a unified diff — a changed diagnostic is its old line followed by its new one — so
that Markdown renders them in a ``diff`` block, red and green. A project neither side could run
on is listed with ``!``.
"""

from __future__ import annotations

import os
import re
from html import escape
from typing import TYPE_CHECKING

from .report import table, write_json

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO


def summarize(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    per_rule: dict[str, dict[str, Any]] = {}
    for result in results:
        for change, diagnostics in result["diagnostics"].items():
            for diagnostic in diagnostics:
                rule = (diagnostic["after"] if change == "changed" else diagnostic)["rule"]
                counts = per_rule.setdefault(rule, {"added": 0, "removed": 0, "changed": 0, "projects": set()})
                counts[change] += 1
                counts["projects"].add(result["project"])
    failures = [result["failure"] for result in results]
    return {
        "projects": len(results),
        "affected": sum(1 for result in results if result["affected"]),
        "not_compared": sum(1 for f in failures if f["base"] is not None and f["base"] == f["new"]),
        "fails_under_base_only": sum(1 for f in failures if f["base"] is not None and f["new"] is None),
        "fails_under_new_only": sum(1 for f in failures if f["new"] is not None and f["base"] is None),
        "session_tools_changed": sum(1 for result in results if any(result["tools"].values())),
        "agent_tools_changed": sum(1 for result in results if result["agents"]),
        "new_errors": sum(new_errors(result) for result in results),
        "rules": [
            {"rule": rule, **{key: len(value) if key == "projects" else value for key, value in counts.items()}}
            for rule, counts in sorted(per_rule.items())
        ],
    }


def new_errors(result: dict[str, Any]) -> int:
    """Errors the new rules find that the base rules did not: added error diagnostics, ones that
    became errors, and a failure under the new rules only."""
    diagnostics = result["diagnostics"]
    added = sum(1 for d in diagnostics["added"] if d["severity"] == "error")
    raised = sum(
        1 for d in diagnostics["changed"] if d["after"]["severity"] == "error" and d["before"]["severity"] != "error"
    )
    failure = result["failure"]
    return added + raised + (1 if failure["new"] is not None and failure["base"] is None else 0)


def write(
    output_format: str, results: Sequence[dict[str, Any]], names: tuple[str, str], stream: TextIO
) -> dict[str, Any]:
    summary = summarize(results)
    # the projects shown: the affected ones and the ones neither side could run on
    shown = [result for result in results if result["affected"] or result["failure"]["base"] is not None]
    if output_format == "json":
        write_json({"base": names[0], "rules": names[1], "summary": summary, "projects": shown}, stream)
    elif output_format == "markdown":
        stream.write(markdown(summary, shown, names))
    else:
        stream.write(text(summary, shown, names))
    return summary


def change_lines(result: dict[str, Any]) -> list[str]:
    lines = []
    failure = result["failure"]
    if failure["base"] is not None and failure["base"] == failure["new"]:
        return [f"! not compared: {failure['base']}"]
    if failure["base"] is not None:
        lines.append(f"- fails: {failure['base']}")
    if failure["new"] is not None:
        lines.append(f"+ fails: {failure['new']}")
    diagnostics = result["diagnostics"]
    lines.extend("- " + _diagnostic(d) for d in diagnostics["removed"])
    lines.extend("+ " + _diagnostic(d) for d in diagnostics["added"])
    for d in diagnostics["changed"]:
        lines.extend(("- " + _diagnostic(d["before"]), "+ " + _diagnostic(d["after"])))
    tools = result["tools"]
    lines.extend(f"- session tool {name}" for name in tools["removed"])
    lines.extend(f"+ session tool {name}" for name in tools["added"])
    for tool in tools["changed"]:
        for sign, side in (("-", "before"), ("+", "after")):
            lines.append(f"{sign} session tool {tool['name']}: {tool[side]['kind']} ({tool[side]['source']})")
    for agent in result["agents"]:
        who = f"agent {agent['agent']}" if agent["agent"] is not None else "any undeclared agent"
        for sign, key in (("-", "removed"), ("+", "added")):
            if agent[key]:
                lines.append(f"{sign} {agent['harness']}, {who} sees {', '.join(agent[key])}")
    return lines


def _diagnostic(d: dict[str, Any]) -> str:
    return f"{d['file']}:{d['line']}:{d['column']}: {d['severity']}[{d['rule']}] {d['message']}"


def _title(result: dict[str, Any]) -> str:
    """The project as named, and its manifest when the name is a folder."""
    project, manifest = result["project"], result["manifest"]
    return f"{project} ({manifest})" if manifest and os.path.basename(project) != manifest else project


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    s = summary
    return [
        f"{s['projects']} projects compared, {s['affected']} affected, {s['new_errors']} new errors",
        f"session tools changed in {s['session_tools_changed']} projects, "
        f"agents' visible tools in {s['agent_tools_changed']}",
        f"failing under the new rules only: {s['fails_under_new_only']}, "
        f"under the base rules only: {s['fails_under_base_only']}, not compared: {s['not_compared']}",
    ]


RULE_COLUMNS = ("added", "removed", "changed", "projects")


def text(summary: dict[str, Any], shown: Sequence[dict[str, Any]], names: tuple[str, str]) -> str:
    out = [f"rules diff: {names[0]} -> {names[1]}", *_summary_lines(summary)]
    if summary["rules"]:
        rows = [(r["rule"], *(r[key] for key in RULE_COLUMNS)) for r in summary["rules"]]
        out += ["", table(("RULE", *(key.upper() for key in RULE_COLUMNS)), rows).rstrip("\n")]
    for result in shown:
        out += ["", f"== {_title(result)}", *change_lines(result)]
    return "\n".join(out) + "\n"


def markdown(summary: dict[str, Any], shown: Sequence[dict[str, Any]], names: tuple[str, str]) -> str:
    out = ["## beeuni rules diff", "", f"{_code(names[0])} → {_code(names[1])}", ""]
    out += [f"- {line}" for line in _summary_lines(summary)]
    if summary["rules"]:
        out += ["", "| rule | " + " | ".join(RULE_COLUMNS) + " |", "|---|" + "---:|" * len(RULE_COLUMNS)]
        out += [
            f"| {_code(r['rule'])} | " + " | ".join(str(r[key]) for key in RULE_COLUMNS) + " |"
            for r in summary["rules"]
        ]
    for result in shown:
        lines = change_lines(result)
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", "\n".join(lines))), default=0))
        title = f"<code>{escape(_title(result), quote=False)}</code>: {escape(_what_changed(result), quote=False)}"
        out += ["", f"<details><summary>{title}</summary>", "", fence + "diff", *lines, fence, "", "</details>"]
    return "\n".join(out) + "\n"


def _what_changed(result: dict[str, Any]) -> str:
    failure = result["failure"]
    if failure["base"] is not None and failure["base"] == failure["new"]:
        return "not compared"
    parts = [f"fails under the {side} rules" for side in ("base", "new") if failure[side] is not None]
    diagnostics = result["diagnostics"]
    signs = (("+", "added"), ("-", "removed"), ("~", "changed"))
    counts = [f"{sign}{len(diagnostics[key])}" for sign, key in signs if diagnostics[key]]
    if counts:
        parts.append("diagnostics " + " ".join(counts))
    if any(result["tools"].values()):
        parts.append("session tools")
    if result["agents"]:
        parts.append("agents' visible tools")
    return ", ".join(parts)


def _code(value: str) -> str:
    """Inline code that holds any text: a fence longer than the backticks in it, as CommonMark allows."""
    longest = max((len(run) for run in re.findall("`+", value)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{padding}{value}{padding}{fence}"
