"""The result cache: a run on unchanged input answers from the last run's result.

As ruff, mypy and eslint do, a check of a project nothing changed in since its last check does
not check again: it reads the YAML of no manifest, loads no rules and evaluates none. Beside the
result, the last run left its *dependency record* — everything its answer was made of:

- what beeuni is: the Python version, this cache's format, and the size and modification time
  of every module and grammar file of the installed package (a new version or a rebuilt wheel
  changes them), and the versions of the libraries installed beside it (``*.dist-info``);
- the rules: the rules folder, the name of each ``*.rules`` file in it and its content;
- the command, its options that change the result, and the manifest's absolute path;
- every file the run read (the manifest and its imports), with its whole content — or why it
  could not be read; compared byte for byte, no hash that could collide;
- every question the run asked about the repository (``paths.Repository``: where a path leads,
  whether it is there, is a file, what a folder holds) with its answer;
- when the run asked what the release holds (``release/git_index.py``): the git work tree, the index file
  and a digest of its content (so a `git add` is a miss), and why each file found untracked is
  not tracked (asked of git again).

A later run re-reads those files and asks those questions again of the repository as it is now;
only when every answer is the same is the stored result used. So a result is never stale: the
run that made it could not have told the two repositories apart. Nothing of the environment
enters a result (the output's colour is decided per run, when the result is written).

The record is written (temporary file, then rename) to the same folder as the rule cache, never
into the repository; a record that cannot be read or is not one (truncated, another version's,
another file's) is a miss, a folder that cannot be written is skipped. ``--no-cache`` or
``BEEUNI_NO_CACHE=1`` turn it off.
"""

from __future__ import annotations

import os
import sys

from ..paths import QUESTIONS, Repository, read_file
from ..yaml.located import LocatedStr
from .folder import read_record, write_record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see cli/main.py)

if TYPE_CHECKING:
    from typing import Any

#: Bump when the record's shape changes.
FORMAT = 4
#: set (to anything but empty or ``0``) to neither read nor write results
NO_CACHE_VARIABLE = "BEEUNI_NO_CACHE"

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ENGINE = ("", "yaml", "contract", "lang", "release", "edit", "cache")  # what a check or a resolve runs
_CODE_FOLDERS = ("", *(os.path.join("engine", stage) for stage in _ENGINE), "cli", os.path.join("cli", "formats"))


def disabled_by_environment() -> bool:
    return os.environ.get(NO_CACHE_VARIABLE, "") not in ("", "0")


def _code() -> list[tuple[str, int, int]]:
    """What identifies the installed beeuni: its modules' names, sizes and modification times;
    and the libraries installed beside it (PyYAML, RE2, ...): their ``*.dist-info`` folders'
    names, which hold their versions."""
    found = [(entry.name, 0, 0) for entry in os.scandir(os.path.dirname(_PACKAGE)) if entry.name.endswith(".dist-info")]
    for folder in _CODE_FOLDERS:
        with os.scandir(os.path.join(_PACKAGE, folder)) as entries:
            for entry in entries:
                if entry.name.endswith((".py", ".lark")) and entry.is_file():
                    info = entry.stat()
                    found.append((os.path.join(folder, entry.name), info.st_size, info.st_mtime_ns))
    found.sort()
    return found


def _rules(folder: str) -> list[tuple[str, bytes]]:
    """The ``*.rules`` files of the rules folder and their content (the rule cache's own key is
    in the rule cache; this one compares content, for a result that depends on every byte)."""
    found = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".rules"):
            with open(os.path.join(folder, name), "rb") as handle:
                found.append((name, handle.read()))
    return found


def key_of(command: str, manifest: str, rules_folder: str, rules_shown: str, options: tuple[Any, ...]) -> str:
    """What names a record: the command, the manifest's absolute path, the rules folder (and how
    messages name it), the options that change the result, and the Python that ran it."""
    return "\n".join(
        (f"beeuni-result/{FORMAT}/{sys.version}", command, manifest, rules_folder, rules_shown, repr(options))
    )


def fingerprint(rules_folder: str) -> Any:
    """What this run's beeuni and rules are (taken before the run: a rule edited while it runs
    then makes the record a miss, never a wrong hit); None when the rules cannot be read."""
    try:
        return (_code(), _rules(rules_folder))
    except OSError:
        return None


def lookup(key: str, root: str, made_by: Any) -> Any:
    """The stored result for ``key`` when every dependency it records is unchanged — the
    repository at ``root`` (real path), beeuni and the rules as ``fingerprint`` found them;
    else None."""
    if made_by is None:
        return None
    record = read_record("result", key)
    try:
        if not isinstance(record, dict):
            return None
        if record["made_by"] != made_by or record["root"] != root:
            return None
        repo = Repository(root)
        limit = record["read_limit"]
        for path, found in record["reads"].items():
            if read_file(repo.absolute(path), limit) != found:
                return None
        for path, answer in record["relative"].items():
            if repo.relative(path) != answer:
                return None
        if record["release_asked"]:
            from ..release.git_index import current_signature

            if current_signature(root, record["release"]) != record["release"]:
                return None
        for question, found in record["answers"].items():
            if question not in QUESTIONS:
                return None
            ask = getattr(repo, question)
            for path, answer in found.items():
                if ask(path) != answer:
                    return None
        return record["result"]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # a broken or foreign record: a miss


#: the types ``marshal`` writes as they are
_PLAIN = frozenset({str, int, bool, float, type(None)})
#: the types of a list of strings, located ones among them (``_strings``)
_LOCATED_STRINGS = frozenset({str, LocatedStr})


def plain(value: Any, texts: dict[str, str]) -> Any:
    """``value`` made of the built-in types only (a located string becomes a string): what
    ``marshal`` writes. A value of another type raises ``ValueError``: no record is made.

    What a resolved tool set is made of is made at C speed, or written out here: records of
    plain values (kept as they are) and of located strings, lists of strings (its views).
    Measured with a plain recursion instead, a fresh runner's ``resolve`` of the benchmarks'
    2,000-tool project takes 273 ms instead of 257 (median of ten).
    ``texts``: each text made plain so far, by its text — a text is made plain once, however
    many views name it (``_strings``), so the record is built of a few thousand new strings,
    not a hundred thousand, and ``marshal`` writes each once."""
    kind = value.__class__
    if kind in _PLAIN:
        return value
    if isinstance(value, dict):
        if kind is dict and _PLAIN.issuperset(map(type, value.values())) and _PLAIN.issuperset(map(type, value)):
            return value  # (a record of plain values, as most are: looked at, at C speed, and kept)
        # a session tool's record: plain values and located strings, each made here, not by a call
        simple, located = _PLAIN, LocatedStr
        return {
            (key if key.__class__ is str else plain(key, texts)): (
                item
                if item.__class__ in simple
                else (texts.get(item) or texts.setdefault(item, str(item)))
                if item.__class__ is located
                else plain(item, texts)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        if (kind is list or kind is tuple) and _PLAIN.issuperset(map(type, value)):
            return value
        if _LOCATED_STRINGS.issuperset(map(type, value)):
            items = _strings(value, texts)
        else:
            items = [plain(item, texts) for item in value]
        return items if isinstance(value, list) else tuple(items)
    for base in (str, bool, int, float):
        if isinstance(value, base):
            return base(value)
    raise ValueError(f"no plain value: {kind.__name__}")


def _strings(items: list[str] | tuple[str, ...], texts: dict[str, str]) -> list[str]:
    """Strings, located ones among them, as the plain strings of ``texts`` (added to it the first
    time a text is seen): looked up at C speed."""
    try:
        return list(map(texts.__getitem__, items))
    except KeyError:
        for item in items:
            if item not in texts:
                texts[item] = str(item)
        return list(map(texts.__getitem__, items))


def _by_path(answers: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """``answers`` by plain paths (``_strings``; the answers are plain already)."""
    paths = list(answers)
    if not _LOCATED_STRINGS.issuperset(map(type, paths)):
        raise ValueError("a path that is not a string")
    return dict(zip(_strings(paths, texts), answers.values(), strict=True))


def store(key: str, made_by: Any, repo: Repository, answers: dict[str, dict[str, Any]], result: Any) -> None:
    """Keep ``result`` with the dependency record of the run that made it (``answers``: the
    questions the rules asked of ``repo`` — question → path → answer)."""
    if made_by is None or any(question not in QUESTIONS for question in answers):
        return  # a question this cache cannot ask again: no record rather than a wrong one
    texts: dict[str, str] = {}  # (each question is asked of the same paths: each made plain once)
    try:
        record = {
            "made_by": made_by,
            "root": repo.root,
            "read_limit": repo.read_limit,
            "reads": dict(repo.reads),
            "relative": _by_path(repo.relative_answers(), texts),
            "release_asked": repo.release_asked,
            "release": repo.release_signature,
            "answers": {question: _by_path(found, texts) for question, found in answers.items()},
            "result": plain(result, texts),
        }
    except ValueError:
        return  # a value marshal does not take: no record
    write_record("result", key, record)
