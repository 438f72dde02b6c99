"""Property-based tests (Hypothesis) of the promises every input gets.

``validate``, ``tools ls`` and ``resolve`` on generated manifests — shapes, tags, unicode, line
ends, symbolic links — exit 0, 1 or 2, never with a traceback or an internal error, and every
diagnostic is one line at a position inside its file. ``tools eject`` on generated files keeps
its contract: every other byte unchanged and the file re-reads as the same data but the entry,
or exit 2 and no file changed.

The commands run in-process (``commands.guarded``, as the console script calls them), so a few
hundred examples take seconds. The runs are bounded and reproducible: a fixed number of
examples, derandomized (the same examples on every machine), no deadline.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from beeuni.cli import commands
from beeuni.cli.eject import eject
from beeuni.engine.yaml.loader import load_yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BEEUNI_TOOLS = ["web_search", "image_search", "scrape_webpage", "memory", "show"]
DIAGNOSTIC = re.compile(r"^(?P<file>[^\n]+):(?P<line>\d+):(?P<column>\d+): (error|warning|info)\[[a-z-]+/[a-z-]+\] .+$")
#: what must never reach the terminal raw: controls (but the line feed), separators, bidi controls
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def run(command: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = commands.guarded(command)
    return code, out.getvalue(), err.getvalue()


# Generated manifests ---------------------------------------------------------------------------

NAMES = st.sampled_from(
    [*BEEUNI_TOOLS, "lookup", "read", "bash", "<<", "Tool", "x" * 70, "two\nlines", "nul\0", "esc\x1b[2J", "é"]
) | st.text(min_size=0, max_size=12)
PLAIN_VALUES = st.sampled_from(
    [
        *(f"beeuni:{name}" for name in BEEUNI_TOOLS),
        "beeuni:nope",
        "tools/lookup.ts",
        "tools/loop.ts",
        "tools/outside.ts",
        "tools/folder.ts",
        "tools/broken.ts",
        "tools/missing.ts",
        "../escape.ts",
        "/abs.ts",
        "https://example.com/x.ts",
        "",
        "all",
        "none",
    ]
)
TAGGED = st.sampled_from(
    ["!!bool maybe", '!!int ""', "!!timestamp nope", "!!null maybe", "!!float x", "!!str 5", "!!binary ###", "!local x"]
)
NUMBERS = st.sampled_from(["5", "0x" + "f" * 1200, "1" + ":00" * 400, "1e999", "-.inf", "~", "yes", "2001-13-45"])
UNICODE = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)


def quoted(text: str) -> str:
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


@st.composite
def scalars(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "quoted", "single", "tagged", "number", "unicode", "block"]))
    if kind == "plain":
        return draw(PLAIN_VALUES)
    if kind == "quoted":
        return quoted(draw(PLAIN_VALUES | UNICODE))
    if kind == "single":
        return "'" + draw(PLAIN_VALUES).replace("'", "''") + "'"
    if kind == "tagged":
        return draw(TAGGED)
    if kind == "number":
        return draw(NUMBERS)
    if kind == "unicode":
        return draw(UNICODE)
    return "|\n    " + draw(PLAIN_VALUES)


@st.composite
def mappings(draw: st.DrawFn, values: st.SearchStrategy[str], indent: str) -> str:
    entries = draw(st.lists(st.tuples(NAMES, values), max_size=5))
    if draw(st.booleans()) and entries:
        return "{" + ", ".join(f"{quoted(name)}: {value}" for name, value in entries if "\n" not in value) + "}"
    lines = [f"\n{indent}{quoted(name) if draw(st.booleans()) else name}: {value}" for name, value in entries]
    return "".join(lines)


@st.composite
def agent_settings(draw: st.DrawFn) -> str:
    tools = draw(
        st.sampled_from(["all", "none", "[read, web_search]", "{exclude: [bash]}", "[tool_x, lookp]", "7"]) | scalars()
    )
    secrets = draw(st.sampled_from(["all", "[API_KEY]", "[0x" + "f" * 50 + "]", "5", "~"]))
    connectors = draw(st.sampled_from(["[zendesk]", "zendesk", "[]", "!!timestamp nope"]))
    return f"{{tools: {tools}, secrets: {secrets}, connectors: {connectors}}}" if "\n" not in tools else "{}"


@st.composite
def manifests(draw: st.DrawFn) -> str:
    parts = []
    if draw(st.booleans()):
        parts.append("# " + draw(UNICODE).replace("\n", " ").replace("\r", " "))
    if draw(st.booleans()):
        imported = draw(st.sampled_from(["more.yaml", "loop.yaml", "outside.yaml", '""', "missing.yaml"]))
        parts.append(f"imports: [{imported}]")
    tools = draw(st.sampled_from(["block", "null", "list", "alias", "none"]))
    if tools == "block":
        parts.append("tools:" + draw(mappings(scalars(), "  ")))
    elif tools == "null":
        parts.append("tools: ~")
    elif tools == "list":
        parts.append("tools: [1" + ":00" * draw(st.integers(0, 500)) + "]")
    elif tools == "alias":
        parts.append("base: &base\n  web_search: beeuni:web_search\ntools:\n  <<: *base\n  show: beeuni:show")
    if draw(st.booleans()):
        parts.append("agents:" + draw(mappings(agent_settings(), "  ")))
    text = "\n".join(parts) + "\n"
    return draw(mutated(text))


INTERESTING = [":", "-", "[", "]", "{", "}", "&a", "*a", "!!", "\t", "\n", "\r", "#", "'", '"', "\x85", "\u2028", "\0"]


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """``text`` with a few characters inserted or deleted, and line ends, BOM and final newline varied."""
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(INTERESTING)) + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    return draw(mutated_line_ends(text))


def write_project(folder: Path, manifest: bytes) -> None:
    """A repository with every kind of path a manifest can name: a module, a link loop, links
    out of the repository, a folder where a module should be, a broken link, an import that
    links to itself."""
    (folder / "beeuni.yaml").write_bytes(manifest)
    tools = folder / "tools"
    tools.mkdir()
    (tools / "lookup.ts").write_text("export default {}\n")
    (tools / "loop.ts").symlink_to("loop.ts")
    (tools / "outside.ts").symlink_to("../../outside.ts")
    (tools / "folder.ts").mkdir()
    (tools / "broken.ts").symlink_to("gone.ts")
    (folder / "more.yaml").write_text("tools:\n  memory: beeuni:memory\n")
    (folder / "loop.yaml").symlink_to("loop.yaml")
    (folder / "outside.yaml").symlink_to("../outside.yaml")
    (folder.parent / "outside.ts").write_text("// outside\n")
    (folder.parent / "outside.yaml").write_text("tools: {}\n")


def lines_of(path: Path) -> list[str] | None:
    """A file's lines as libyaml counts them; None for what cannot be read as a file."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return YAML_BREAK.split(data.decode("utf-8-sig", "replace"))


def check_diagnostics(output: str, repo: Path) -> None:
    for line in output.splitlines():
        found = DIAGNOSTIC.match(line)
        assert found, f"not one diagnostic line: {line!r}"
        number, column = int(found["line"]), int(found["column"])
        lines = lines_of(repo / found["file"])
        if lines is None:
            assert (number, column) == (1, 1), line
            continue
        assert 1 <= number <= len(lines), f"line past the end of the file: {line!r}"
        assert 1 <= column <= len(lines[number - 1]) + 1, f"column past the end of the line: {line!r}"


def check_no_failure(code: int, stderr: str) -> None:
    assert code in (0, 1, 2)
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr


@SETTINGS
@given(manifests())
def test_validate_ls_and_resolve_answer_every_manifest(text: str) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        repo = Path(temporary) / "repo"
        repo.mkdir()
        write_project(repo, text.encode("utf-8", "surrogatepass"))
        code, out, err = run(lambda: commands.validate([str(repo)]))
        check_no_failure(code, err)
        event(f"validate exit {code}")
        assert code in (0, 1), err
        assert not RAW.search(out + err), "a control character printed raw"
        check_diagnostics(out, repo)
        for command in (
            lambda: commands.tools_ls(str(repo), None, False),
            lambda: commands.tools_ls(str(repo), None, True),
            lambda: commands.resolve(str(repo), None, False),
            lambda: commands.resolve(str(repo), None, True),
        ):
            code, out, err = run(command)
            check_no_failure(code, err)
            assert not RAW.search(out + err), "a control character printed raw"


# tools eject -----------------------------------------------------------------------------------

ENTRY_STYLES = st.sampled_from(
    [
        "{name}: beeuni:{name}",
        "{name}: 'beeuni:{name}'",
        '{name}: "beeuni:{name}"',
        "{name}: &anchor_{name} beeuni:{name}",
        "{name}: !!str beeuni:{name}",
        "{name}:",
        "{name}: ~",
        "{name}: beeuni:{name}\t# a comment",
        "{name}: beeuni:{name}   # a comment",
        "{name}: |-\n    beeuni:{name}",
    ]
)


LAYOUTS = ["plain", "tools-outside", "tools-file", "module-folder", "manifest-link", "outside"]


@st.composite
def eject_cases(draw: st.DrawFn) -> tuple[str, str, str]:
    """(the manifest, the tool to eject, how the repository is laid out)."""
    name = draw(st.sampled_from(BEEUNI_TOOLS))
    others = [tool for tool in BEEUNI_TOOLS if tool != name]
    shape = draw(st.sampled_from(["entry", "missing-entry", "null-section", "empty-section", "flow", "no-tools"]))
    lines = ["# a project"]
    if shape == "entry":
        lines.append("tools:")
        lines += [f"  {other}: beeuni:{other}" for other in draw(st.lists(st.sampled_from(others), unique=True))]
        lines.insert(draw(st.integers(2, len(lines))), "  " + draw(ENTRY_STYLES).format(name=name))
    elif shape == "missing-entry":
        lines += ["tools:", f"  {others[0]}: beeuni:{others[0]}  # kept"]
    elif shape == "null-section":
        lines.append(draw(st.sampled_from(["tools: ~", "tools: null   # none yet", "tools: !!null"])))
    elif shape == "empty-section":
        lines += ["tools:", "# later"]
    elif shape == "flow":
        lines.append(f"tools: {{{others[0]}: beeuni:{others[0]}}}   # flow")
    if draw(st.booleans()):
        lines += ["agents:", "  beeuni:", "    tools: all"]
    if draw(st.booleans()):
        lines.insert(0, "---")
    layout = draw(st.sampled_from(LAYOUTS))
    return draw(mutated_line_ends("\n".join(lines) + "\n")), name, layout


@st.composite
def mutated_line_ends(draw: st.DrawFn, text: str) -> str:
    line_end = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if line_end == "mixed":
        text = "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(text.split("\n")))
    else:
        text = text.replace("\n", line_end)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


def lay_out(root: Path, manifest: bytes, layout: str) -> Path:
    """The repository for an eject case; returns the repository's folder."""
    repo, outside = root / "repo", root / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("outside\n")
    if layout == "manifest-link":
        (repo / "config").mkdir()
        (repo / "config" / "beeuni.yaml").write_bytes(manifest)
        (repo / "beeuni.yaml").symlink_to("config/beeuni.yaml")
    elif layout == "outside":
        (outside / "beeuni.yaml").write_bytes(manifest)
        (repo / "beeuni.yaml").symlink_to("../outside/beeuni.yaml")
    else:
        (repo / "beeuni.yaml").write_bytes(manifest)
    if layout == "tools-outside":
        (repo / "tools").symlink_to("../outside")
    elif layout == "tools-file":
        (repo / "tools").write_text("a file\n")
    elif layout == "module-folder":
        (repo / "tools").mkdir()
        for name in BEEUNI_TOOLS:
            (repo / "tools" / f"{name}.ts").mkdir()
    return repo


def snapshot(root: Path) -> dict[str, bytes]:
    found = {}
    for folder, names, files in os.walk(root):
        for name in names + files:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = b"-> " + os.readlink(path).encode()
            elif path.is_file():
                found[relative] = path.read_bytes()
    return found


def line_ends(text: str) -> set[str]:
    return set(re.findall(r"\r\n|\r|\n", text))


@settings(SETTINGS, max_examples=100)
@given(eject_cases())
def test_eject_changes_one_entry_or_nothing(case: tuple[str, str, str]) -> None:
    text, name, layout = case
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        repo = lay_out(root, text.encode(), layout)
        before = snapshot(root)
        code, _, err = run(lambda: eject(name, str(repo), None, force=True))
        check_no_failure(code, err)
        event(f"eject exit {code} in layout {layout}" + (f": {err.split('(')[-1].strip()}" if "(" in err else ""))
        after = snapshot(root)
        if code != 0:
            assert code == 2
            assert after == before, "a refused eject changed a file"
            assert err.startswith("beeuni: ") and err.count("\n") == 1, err
            return
        assert layout in ("plain", "manifest-link"), f"wrote in layout {layout}"
        manifest = "config/beeuni.yaml" if layout == "manifest-link" else "beeuni.yaml"
        changed = {path for path in after if after[path] != before.get(path)}
        assert changed == {f"repo/{manifest}", f"repo/tools/{name}.ts"}, changed
        old_bytes, new_bytes = before[f"repo/{manifest}"], after[f"repo/{manifest}"]
        assert new_bytes.startswith(b"\xef\xbb\xbf") == old_bytes.startswith(b"\xef\xbb\xbf")
        old, new = old_bytes.decode("utf-8-sig"), new_bytes.decode("utf-8-sig")
        # the data: the old one with the entry set
        old_data, problems = load_yaml(old_bytes, "-")
        new_data, new_problems = load_yaml(new_bytes, "-")
        assert not problems and not new_problems
        expected = plain(old_data) or {}
        if "tools" in expected:
            section = expected["tools"] if isinstance(expected["tools"], dict) else {}
        else:  # a new `tools:` keeps the other Beeuni tools
            section = {tool: f"beeuni:{tool}" for tool in BEEUNI_TOOLS}
        expected["tools"] = {**section, name: f"tools/{name}.ts"}
        assert plain(new_data) == expected
        # the bytes: each file keeps its own line ends; lines away from the entry stay
        assert line_ends(new) <= (line_ends(old) or {"\n"})
        old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
        kept = [line for line in old_lines if line in new_lines]
        assert len(old_lines) - len(kept) <= 3, (old, new)


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    inner = getattr(value, "value", value) if type(value).__name__ == "LocatedConst" else value
    return str(inner) if isinstance(inner, str) else inner
