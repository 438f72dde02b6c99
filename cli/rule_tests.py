"""``beeuni rules test [DIR]``: the test cases kept beside the rules, run through the engine.

A rules folder keeps its tests in ``tests/``, one folder per case; each case folder is a small
repository (``beeuni.yaml``, its imports, modules). Expectations are comments in the case's
files, in the spirit of semgrep's rule tests, at the end of the line they concern or alone on the
line(s) before it::

    tools:
      Bad-Name: tools/x.ts  # expect: tools/name-format must be
      # ok: tools/name-format
      good_name: tools/x.ts

``expect: RULE [FRAGMENT]`` — a diagnostic of RULE starts on that line (its message holding
FRAGMENT, if given); ``ok: RULE`` — RULE does not fire there. Any diagnostic that no ``expect``
claims fails the case, so a case states everything the rules say about it. A case may also hold
``selection.json``: ``{"tools ls --json": {...}, "tools ls --agent NAME --json": {...}}``, for
each command the fields its document must have (fields left out are not compared), and
``modules.json``: the ``modules`` fact as ``validate --modules`` would hand it (what loading each
module in Bun showed), so the module rules are tested without Bun; and ``release.json``:
``{"tracked": [...], "ignored": [...]}``, the case's files a git index would track and, of the
others, those .gitignore would ignore (a case is no release of the repository around it: without
the file it is checked as outside git).

Cases run in this process against the rules loaded once — the same engine ``validate`` runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..engine.lang import RulesError
from ..engine.project import ManifestNotFound, ProjectRun, locate
from ..engine.release.git_index import Release

if TYPE_CHECKING:
    from typing import Any

    from ..engine.lang.evaluator import Diagnostic

#: the folder of a rules folder that holds its test cases
TESTS_FOLDER = "tests"
#: the optional file of a case that holds the expected `tools ls --json` documents
SELECTION_FILE = "selection.json"
#: the optional file of a case that holds the `modules` fact (`validate --modules`)
MODULES_FILE = "modules.json"
#: the optional file of a case that says what its release holds (the `release` fact)
RELEASE_FILE = "release.json"
#: where an annotation starts: `# expect:` or `// ok:`; a line may hold several, each up to the next
_MARKER = re.compile(r"(?:#|//)\s*(?P<kind>expect|ok):")
#: what follows a marker: `group/name fragment`
_ANNOTATED = re.compile(r"\s*(?P<rule>\S*)(?:[ \t]+(?P<fragment>.*?))?\s*$")


@dataclass(frozen=True)
class Annotation:
    kind: str  # "expect" or "ok"
    rule: str
    fragment: str
    file: str  # repo-relative, in the case's repository
    line: int  # the line it concerns
    source_line: str  # that line's text, the annotation taken off (for `rules doc`)


@dataclass
class CaseResult:
    name: str
    folder: str  # as shown: <rules>/tests/<name>
    annotations: list[Annotation] = field(default_factory=list)
    #: (file in the case, line, column, what is wrong); line 0 for the case or a whole file
    problems: list[tuple[str, int, int, str]] = field(default_factory=list)
    #: the message of each expected diagnostic found, by (file, line, rule)
    messages: dict[tuple[str, int, str], str] = field(default_factory=dict)

    def fail(self, file: str, line: int, column: int, text: str) -> None:
        self.problems.append((file, line, column, text))

    def report(self) -> list[str]:
        """The problems as ``folder/file:line[:column]: text``, in the order of their positions."""
        lines = []
        for file, line, column, text in sorted(self.problems, key=lambda problem: problem[:3]):
            where = f"{self.folder}/{file}" if file else self.folder
            where += f":{line}" if line else ""
            where += f":{column}" if column else ""
            lines.append(f"{where}: {text}")
        return lines


def run_tests(folder: str, shown: str, program: dict[str, Any]) -> list[CaseResult]:
    """Run every case under ``folder``/tests against ``program`` (the rules of ``folder``);
    ``shown`` is how the rules folder is named in the output."""
    tests = os.path.join(folder, TESTS_FOLDER)
    names = sorted(entry.name for entry in os.scandir(tests) if entry.is_dir()) if os.path.isdir(tests) else []
    severities = {rule["id"]: rule["severity"] for rule in program["rules"]}
    return [
        _run_case(os.path.join(tests, name), f"{shown}/{TESTS_FOLDER}/{name}", program, severities) for name in names
    ]


def _case_release(path: str) -> Release | None:
    release = os.path.join(path, RELEASE_FILE)
    if not os.path.isfile(release):
        return None
    with open(release, encoding="utf-8") as handle:
        said = json.load(handle)
    return Release.given(path, list(said.get("tracked", [])), list(said.get("ignored", [])))


def _run_case(path: str, shown: str, program: dict[str, Any], severities: dict[str, str]) -> CaseResult:
    annotations, dangling = read_annotations(path)
    case = CaseResult(os.path.basename(path), shown, annotations)
    for file, line in dangling:
        case.fail(file, line, 0, "an annotation alone on the last line concerns no line")
    for a in case.annotations:
        if not a.rule:
            case.fail(a.file, a.line, 0, f"`{a.kind}:` names no rule: write `{a.kind}: group/name`")
        elif a.rule not in severities:
            from difflib import get_close_matches

            close = get_close_matches(a.rule, list(severities), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            case.fail(a.file, a.line, 0, f"`{a.kind}` names no rule `{a.rule}`{hint}")
    try:
        repo, manifest = locate(path)
        run = ProjectRun(repo, manifest, program)
        modules = os.path.join(path, MODULES_FILE)
        if os.path.isfile(modules):
            with open(modules, encoding="utf-8") as handle:
                run.add_module_facts(json.load(handle))
        run.set_release(_case_release(path))
        diagnostics = run.diagnostics()
    except ManifestNotFound:
        case.fail("", 0, 0, "the case holds no beeuni.yaml")
        return case
    except RulesError as err:
        case.fail("", 0, 0, f"the rules failed: {err.file}:{err.line}:{err.column}: error[rules] {err.message}")
        return case
    _compare(case, diagnostics, severities)
    _compare_selection(case, run, os.path.join(path, SELECTION_FILE))
    return case


def _compare(case: CaseResult, diagnostics: list[Diagnostic], severities: dict[str, str]) -> None:
    unclaimed = list(diagnostics)
    for a in case.annotations:
        if a.kind != "expect" or a.rule not in severities:
            continue
        found = next(
            (d for d in unclaimed if (d.file, d.line, d.rule) == (a.file, a.line, a.rule) and a.fragment in d.message),
            None,
        )
        if found is None:
            wanted = f" with a message containing {json.dumps(a.fragment, ensure_ascii=False)}" if a.fragment else ""
            case.fail(a.file, a.line, 0, f"missing {severities[a.rule]}[{a.rule}]{wanted}")
            continue
        unclaimed.remove(found)
        case.messages.setdefault((a.file, a.line, a.rule), found.message)
    oks = {(a.file, a.line, a.rule) for a in case.annotations if a.kind == "ok"}
    for d in unclaimed:
        marked = " (the line is marked `ok`)" if (d.file, d.line, d.rule) in oks else ""
        case.fail(d.file, d.line, d.column, f"unexpected {d.severity}[{d.rule}] {d.message}{marked}")


def _compare_selection(case: CaseResult, run: ProjectRun, path: str) -> None:
    from .commands import tools_ls_document
    from .shared import UsageError

    if not os.path.isfile(path):
        return
    try:
        with open(path, encoding="utf-8") as handle:
            expected = json.load(handle)
    except (OSError, ValueError) as err:
        case.fail(SELECTION_FILE, 0, 0, f"cannot read: {err}")
        return
    if not isinstance(expected, dict):
        case.fail(SELECTION_FILE, 0, 0, 'must map a command (like "tools ls --json") to the fields it prints')
        return
    for command, document in expected.items():
        options = _tools_ls_options(command)
        if options is None:
            case.fail(
                SELECTION_FILE,
                0,
                0,
                f'"{command}" is not `tools ls [--agent NAME [--harness H] [--parent AGENT]] --json`',
            )
            continue
        try:
            actual = tools_ls_document(run, **options)
        except UsageError as err:
            case.fail(SELECTION_FILE, 0, 0, f'"{command}": {err}')
            continue
        if not isinstance(document, dict):
            case.fail(SELECTION_FILE, 0, 0, f'"{command}" must map to the fields of the document it prints')
            continue
        # only the fields the case names are compared: a case about one agent's tools need not
        # change when another Beeuni tool is added to the rules
        actual = {key: actual.get(key) for key in document}
        if actual != document:
            shown = json.dumps(actual, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            case.fail(SELECTION_FILE, 0, 0, f'"{command}" prints other values:\n    {shown}')


def _tools_ls_options(command: str) -> dict[str, str | None] | None:
    """``tools ls --agent a --json`` → ``{"agent": "a", ...}``; None for any other command."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] != ["tools", "ls"] or "--json" not in words:
        return None
    options: dict[str, str | None] = {"agent": None, "harness": None, "parent": None}
    rest = [word for word in words[2:] if word != "--json"]
    while rest:
        option = rest.pop(0)
        name = option[2:]
        if not option.startswith("--") or name not in options or not rest:
            return None
        options[name] = rest.pop(0)
    return options


def read_annotations(case: str) -> tuple[list[Annotation], list[tuple[str, int]]]:
    """Every ``expect``/``ok`` comment in the files of a case folder, with the line it concerns;
    and where an annotation alone on a file's last line(s) concerns no line."""
    found: list[Annotation] = []
    dangling: list[tuple[str, int]] = []
    for folder, dirs, files in os.walk(case):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, case).replace(os.sep, "/")
            if relative == SELECTION_FILE or os.path.islink(path):
                continue
            with open(path, "rb") as handle:
                lines = handle.read().decode("utf-8", "replace").splitlines()
            if _annotations_in(lines, relative, found):
                dangling.append((relative, len(lines)))
    return found, dangling


def _annotations_in(lines: list[str], file: str, found: list[Annotation]) -> bool:
    """Add the annotations of one file to ``found``; whether some concern no line."""
    waiting: list[tuple[str, str, str]] = []  # annotations alone on their line: they concern the next one
    for number, line in enumerate(lines, start=1):
        code, annotations = _split_annotations(line) if "expect:" in line or "ok:" in line else (line, [])
        if annotations and not code.strip():
            waiting.extend(annotations)
            continue
        for kind, rule, fragment in [*waiting, *annotations]:
            found.append(Annotation(kind, rule, fragment, file, number, code.rstrip()))
        waiting = []
    return bool(waiting)


def _split_annotations(line: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A line's code, and each annotation on it as (kind, rule, fragment): ``x  # ok: a  # expect:
    b text`` holds two, each ending where the next marker starts."""
    markers = list(_MARKER.finditer(line))
    annotations = []
    for index, marker in enumerate(markers):
        end = markers[index + 1].start() if index + 1 < len(markers) else len(line)
        annotated = _ANNOTATED.match(line, marker.end(), end)
        if annotated is not None:  # (always: every part of it may be empty)
            annotations.append((marker["kind"], annotated["rule"], annotated["fragment"] or ""))
    return (line[: markers[0].start()] if annotations else line), annotations


def rules_test(folder: str | None) -> int:
    """The command: every failure with its position, the rules a kind of case is missing for,
    then ``N passed, M failed``. Exit 1 when a case failed."""
    import sys

    from ..engine.project import load_rules, rules_folder
    from .shared import tested_folder

    path, shown = rules_folder(folder)
    program = load_rules(folder)
    cases = run_tests(path, shown, program)
    failed = [case for case in cases if case.problems]
    out = sys.stdout
    out.write(f"testing {tested_folder(folder, 'test')}: {len(cases)} case{'' if len(cases) == 1 else 's'}\n")
    for case in cases:
        out.write("".join(line + "\n" for line in case.report()))
    if not cases:
        out.write(f"{shown}/{TESTS_FOLDER}: no test cases\n")
    for kind in ("expect", "ok"):
        covered = {a.rule for case in cases for a in case.annotations if a.kind == kind}
        missing = sorted({rule["id"] for rule in program["rules"]} - covered)
        if missing:
            out.write(f"rules with no `{kind}` case ({len(missing)}):\n" + "".join(f"  {r}\n" for r in missing))
    out.write(f"{len(cases) - len(failed)} passed, {len(failed)} failed\n")
    return 1 if failed else 0
