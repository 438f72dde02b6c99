"""The language server's incremental checks give what a fresh check gives.

As you type, ``beeuni lsp`` keeps what did not change between two checks: each file as parsed
(an edit inside one entry re-reads that entry only, ``engine/yaml/reparse.py``), the manifest's
entries, the rules' values, remembered calls and rule results whose inputs did not change
(``engine/lang/carry.py``), and the repository view while its folders are unchanged. Stale
results hide in such caches, so these tests edit a project many times over — random edits of
the manifest and of an import, one keystroke or a line at a time, in sequences — and require,
after every edit, exactly the diagnostics (and fixes) of a fresh check of the same text, the
one ``beeuni validate`` makes. Re-reading one entry must give the very tree reading the whole
file gives, or not be tried.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from beeuni.cli.lsp.workspace import DiskView, Workspace
from beeuni.engine.paths import MANIFEST_NAME, Repository
from beeuni.engine.project import ProjectRun, load_rules
from beeuni.engine.yaml.loader import load_yaml_counted
from beeuni.engine.yaml.located import LocatedConst, LocatedFloat, LocatedInt, LocatedList, LocatedMap, LocatedStr
from beeuni.engine.yaml.reparse import parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

MANIFEST = """\
imports:
  - more/tools.yaml
tools:
  lookup: tools/lookup.ts
  search: beeuni:web_search
  web_search: beeuni:web_search
  memory: tools/missing.ts
  Bad_Name: tools/lookup.ts  # beeuni: ignore[tools/name-format] legacy
  image_search: beeuni:image_serch
  helper: tools/helper.ts
  extra: https://example.com/x.ts
  quoted: "tools/helper.ts"
agents:
  researcher:
    tools: [lookup, web_search, reed]
  writer:
    tools:
      - helper
      - memory
    exclude: [bash]
"""
IMPORTED = """\
tools:
  lookup: tools/other.ts
  second: tools/second.ts
  third: beeuni:show
"""
MODULE = "export default { description: 'x', parameters: {type: 'object'}, async execute() { return 1 } }\n"
#: what an edit types: keystrokes, and what changes the meaning of YAML around it
KEYSTROKES = ["x", " ", ":", ": ", "#", "- ", "\n", "  ", "&a ", "*a", "|", ">", "[", "]", "'", '"', "\t", "{", "}"]
TYPED = st.sampled_from(
    [*KEYSTROKES, "beeuni:", "web_search", "reed", "tools/", ".ts", ",", "---\n", "  new_tool: tools/new.ts\n", "é"]
)
EDITS = st.lists(
    st.tuples(st.booleans(), st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 4), TYPED),
    min_size=1,
    max_size=6,
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("incremental")
    (root / MANIFEST_NAME).write_text(MANIFEST)
    (root / "more").mkdir()
    (root / "more" / "tools.yaml").write_text(IMPORTED)
    (root / "tools").mkdir()
    for name in ("lookup", "helper", "second"):
        (root / "tools" / f"{name}.ts").write_text(MODULE)
    return root


@pytest.fixture(scope="module")
def program() -> dict[str, Any]:
    return load_rules()


def edited(text: str, where: int, column: int, deleted: int, typed: str) -> str:
    """``text`` with ``deleted`` characters at a line and column taken out and ``typed`` put in."""
    lines = text.split("\n")
    line = where % len(lines)
    start = sum(len(before) + 1 for before in lines[:line]) + column % (len(lines[line]) + 1)
    return text[:start] + typed + text[start + deleted :]


def fresh(root: Path, program: dict[str, Any], texts: dict[str, str]) -> list[tuple[Any, ...]]:
    """The diagnostics of a check from nothing, as ``beeuni validate`` makes it."""
    overlay = {file: text.encode() for file, text in texts.items()}
    run = ProjectRun(Repository(str(root)), MANIFEST_NAME, program, overlay)
    return sorted(_shown(d) for d in run.diagnostics())


def _shown(d: Any) -> tuple[Any, ...]:
    return (d.file, d.line, d.column, d.rule, d.severity, d.message, d.fix.as_dict() if d.fix else None)


@SETTINGS
@given(EDITS)
def test_checks_after_edits_equal_a_fresh_check(
    project: Path, program: dict[str, Any], edits: list[tuple[bool, int, int, int, str]]
) -> None:
    """After each edit of a sequence (of the manifest or of the file it imports), the language
    server's diagnostics and fixes are those of a fresh check of the same buffers."""
    workspace = Workspace(None)
    texts = {MANIFEST_NAME: MANIFEST, "more/tools.yaml": IMPORTED}
    workspace.analyse(str(project), {str(project / file): text for file, text in texts.items()})
    for in_import, line, column, deleted, typed in edits:
        file = "more/tools.yaml" if in_import else MANIFEST_NAME
        texts[file] = edited(texts[file], line, column, deleted, typed)
        analysis = workspace.analyse(str(project), {str(project / name): text for name, text in texts.items()})
        got = sorted(_shown(d) for found in analysis.by_file.values() for d in found)
        assert got == fresh(project, program, texts)


@SETTINGS
@given(EDITS)
def test_reading_one_entry_again_gives_what_reading_the_file_gives(
    edits: list[tuple[bool, int, int, int, str]],
) -> None:
    """Each version of an edited file, parsed from the last one, is exactly the tree (values,
    types, positions, order), problems and count of values that parsing it whole gives."""
    text = MANIFEST
    before = parse(text.encode(), MANIFEST_NAME)
    for _, line, column, deleted, typed in edits:
        text = edited(text, line, column, deleted, typed)
        after = parse(text.encode(), MANIFEST_NAME, before)
        root, problems, nodes = load_yaml_counted(text.encode(), MANIFEST_NAME)
        assert _tree(after.root) == _tree(root)
        assert [_problem(p) for p in after.problems] == [_problem(p) for p in problems]
        assert after.nodes == nodes
        before = after


def _tree(value: Any) -> Any:
    """A parsed value with every type and position spelled out, for comparison."""
    if isinstance(value, LocatedMap):
        return ("map", value.loc, [(_tree(key), _tree(item)) for key, item in value.items()])
    if isinstance(value, LocatedList):
        return ("list", value.loc, [_tree(item) for item in value])
    if isinstance(value, LocatedConst):
        return ("const", value.loc, value.value)
    if isinstance(value, LocatedStr | LocatedInt | LocatedFloat):
        return (type(value).__name__, value.loc, repr(value))
    return ("plain", repr(value))


def _problem(problem: Any) -> tuple[Any, ...]:
    return (problem.kind, problem.loc, problem.detail, sorted(problem.extra.items()))


def test_an_edit_inside_one_entry_keeps_the_rest(project: Path) -> None:
    """The incremental parts do take effect: an edit of one tool's value re-reads that entry only
    (every other value is the same object), and the rules about agents, which read nothing that
    changed, keep their results; the diagnostics are still a fresh check's."""
    workspace = Workspace(None)
    manifest = str(project / MANIFEST_NAME)
    first = workspace.analyse(str(project), {manifest: MANIFEST})
    text = MANIFEST.replace("tools/missing.ts", "tools/missing2.ts")
    second = workspace.analyse(str(project), {manifest: text})
    old_root, new_root = first.run.merged.files[0]["root"], second.run.merged.files[0]["root"]
    assert new_root["agents"] is old_root["agents"]
    assert new_root["tools"]["lookup"] is old_root["tools"]["lookup"]
    assert new_root["tools"]["memory"] == "tools/missing2.ts"
    rules = [rule["id"] for rule in second.run.program["rules"]]
    assert second.run.evaluation.keeps(f"rule:{rules.index('agents/unknown-tool')}")
    got = sorted(_shown(d) for found in second.by_file.values() for d in found)
    assert got == fresh(project, second.run.program, {MANIFEST_NAME: text})


def test_a_check_lets_go_of_the_one_before_it(project: Path) -> None:
    """Once an edit's check has taken what it keeps from the check before, that one's values,
    remembered calls and walks are emptied (freed by reference counting, not left to the cyclic
    collector); what the new check computes later — a hover's value — is computed afresh."""
    workspace = Workspace(None)
    manifest = str(project / MANIFEST_NAME)
    first = workspace.analyse(str(project), {manifest: MANIFEST})
    assert first.run.evaluation.values and first.run.evaluation.stores
    text = MANIFEST.replace("tools/missing.ts", "tools/missing2.ts")
    second = workspace.analyse(str(project), {manifest: text})
    old = first.run.evaluation
    assert not old.values and not old.stores and not old.walks and not old.results
    fresh_run = ProjectRun(Repository(str(project)), MANIFEST_NAME, second.run.program, {MANIFEST_NAME: text.encode()})
    assert second.run.evaluation.get("session_tools") == fresh_run.evaluation.get("session_tools")


def test_a_new_line_reads_the_whole_file(project: Path) -> None:
    """An edit that changes the number of lines moves every position after it: parsed whole."""
    before = parse(MANIFEST.encode(), MANIFEST_NAME)
    after = parse(MANIFEST.replace("  helper:", "\n  helper:").encode(), MANIFEST_NAME, before)
    assert after.root["agents"] is not before.root["agents"]
    assert after.root["agents"].loc[1] == before.root["agents"].loc[1] + 1


def test_the_repository_view_holds_until_a_folder_changes(tmp_path: Path) -> None:
    """What the checks read of the folders is kept while no folder it read has changed; a file
    added to one of them ends it, and so does a symbolic link it followed."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.ts").write_text(MODULE)
    view = DiskView(str(tmp_path))
    assert view.exists("tools/a.ts")
    assert not view.still_current()  # read just after it changed: not trusted
    a_minute_ago = time.time_ns() - 60_000_000_000
    for folder in (tmp_path, tmp_path / "tools"):
        os.utime(folder, ns=(a_minute_ago, a_minute_ago))
    view = DiskView(str(tmp_path))
    assert view.exists("tools/a.ts") and not view.exists("tools/b.ts")
    assert view.still_current()
    (tmp_path / "tools" / "b.ts").write_text(MODULE)
    assert not view.still_current()
    os.symlink("a.ts", tmp_path / "tools" / "c.ts")
    for folder in (tmp_path, tmp_path / "tools"):
        os.utime(folder, ns=(a_minute_ago, a_minute_ago))
    linked = DiskView(str(tmp_path))
    assert linked.is_file("tools/c.ts")
    assert not linked.still_current()


def test_a_saved_file_keeps_the_view_unless_a_folder_changed(tmp_path: Path) -> None:
    """Opening, saving or closing a file makes the next check look at the folders again: the view
    is kept when none it read changed (with all computed from it), and made anew when one did."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.ts").write_text(MODULE)
    a_minute_ago = time.time_ns() - 60_000_000_000
    for folder in (tmp_path, tmp_path / "tools"):
        os.utime(folder, ns=(a_minute_ago, a_minute_ago))
    workspace = Workspace(None)
    view = workspace.repository(str(tmp_path))
    assert view.exists("tools/a.ts")
    workspace.forget_disk()
    assert workspace.repository(str(tmp_path)) is view
    (tmp_path / "tools" / "b.ts").write_text(MODULE)
    workspace.forget_disk()
    assert workspace.repository(str(tmp_path)) is not view


def _evaluations(source: str, interface: dict[str, str]) -> Any:
    """Run the rules ``source`` over facts, as an editor's check or a fresh one, carrying the
    editor's from one run to the next."""
    from beeuni.engine.lang import Interface, compile_sources
    from beeuni.engine.lang.builtins import Observer
    from beeuni.engine.lang.evaluator import Evaluation

    program = compile_sources([("t.rules", source.encode())], Interface(interface))
    repository = Repository(".")

    def run(facts: dict[str, Any], carried: Any = None, incremental: bool = True) -> Any:
        observer = Observer(repository)
        return Evaluation(program, facts, observer, "m.yaml", carried=carried, incremental=incremental)

    return run


def test_a_changed_comprehension_computed_once_is_not_kept_by_who_read_it() -> None:
    """A comprehension that reads no local variable is computed once (hoisted); a remembered
    call and a rule's loop that read it are evaluated again when it changes."""
    run = _evaluations(
        """
rule t/unknown {
  severity error
  doc "d"
  for a in items
  when a not in [n for n in names]
  at a
  message f"{a} unknown"
}
fn known(a) = a in [n for n in names]
let unknown = [a for a in items if not known(a)]
""",
        {"items": "any", "names": "any"},
    )
    first = run({"items": ["a", "b"], "names": ["a"]})
    assert [d.message for d in first.diagnostics()] == ["b unknown"] and first.get("unknown") == ["b"]
    edited = run({"items": ["a", "b"], "names": ["a", "b"]}, first.carry())
    assert [d.message for d in edited.diagnostics()] == [] and edited.get("unknown") == []


def test_a_guarded_loop_in_an_editor_s_check_sees_every_item_s_change() -> None:
    """Two calls of one function filter a list by the same test: after an edit that moves an
    item from one to the other, each call's result is what a fresh check gives."""
    run = _evaluations(
        """
fn pick(k) = [t for t in items if kinds[t] == k]
let a = pick("x")
let b = pick("y")
""",
        {"items": "any", "kinds": "any"},
    )
    first = run({"items": ["p", "q"], "kinds": {"p": "x", "q": "y"}})
    assert (first.get("a"), first.get("b")) == (["p"], ["q"])
    edited = run({"items": ["p", "q"], "kinds": {"p": "y", "q": "y"}}, first.carry())
    assert (edited.get("a"), edited.get("b")) == ([], ["p", "q"])


@pytest.mark.parametrize("incremental", [False, True])
def test_equal_numbers_at_two_places_are_reported_at_their_own(incremental: bool) -> None:
    """A remembered call of two equal numbers read at two places gives each its own position."""
    run = _evaluations(
        """
fn wrap(x) = [y for y in [x, x]]
rule t/here {
  severity error
  doc "d"
  for a in items
  at wrap(a)[0]
  message "here"
}
""",
        {"items": "any"},
    )
    items = [LocatedInt(1, ("m.yaml", 2, 3)), LocatedInt(1, ("m.yaml", 5, 7))]
    found = run({"items": items}, incremental=incremental).diagnostics()
    assert [(d.line, d.column) for d in found] == [(2, 3), (5, 7)]
