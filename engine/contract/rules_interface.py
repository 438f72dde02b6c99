"""The contract between the engine and the rules, in one place: the facts the engine hands over,
with their shapes, and the names it reads back. ``beeuni rules check`` holds a rules folder
against it (a misspelled field of a fact, a missing or misshapen name the engine reads), and
``docs/rules-language.md`` describes it for maintainers.

To hand the rules a new fact: add it to ``FACTS`` (with its shape, see ``lang/interface.py``)
and to what ``manifest.MergedManifest.facts`` returns. To read a new name back: add it with its
shape to ``readback.VALUES`` or ``readback.FUNCTIONS``. A further check of a whole rules folder
(one that needs more than the language knows) goes into ``FOLDER_CHECKS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lang.interface import Interface
from .readback import FUNCTIONS, OPTIONAL_FUNCTIONS, OPTIONAL_VALUES, VALUES

if TYPE_CHECKING:
    from typing import Any

    from ..lang.errors import Problem
    from ..lang.interface import FolderCheck

#: what ``files`` lists: every manifest file read
FILE = {"path": "string", "root": "any", "imported_at": "any"}
#: an entry of a mapping-valued top-level key (``tools:``, ``agents:``) from one file
SECTION_ENTRY = {"name": "string", "value": "any", "file": "string"}
#: what disturbed the reading; besides ``kind``, ``at``, ``file`` and ``detail`` each kind sets a
#: few of the others (``docs/rules-language.md`` lists which)
LOAD_ERROR = {
    "kind": "string",
    "at": "any",
    "file": "string",
    "detail": "string",
    "key": "string",
    "first_line": "number",
    "limit": "number",
    "anchor": "string",
    "path": "string",
    "cycle": "string",
    "tag": "string",
    "value": "string",
    "character": "string",
}

#: an inline suppression comment (``engine/suppress.py``): ``line`` is the line it silences
SUPPRESSION = {
    "at": "string",
    "file": "string",
    "line": "number",
    "ids": ["string"],
    "reason": "string",
    "alone": "bool",
}
#: a rule id a suppression names that silenced nothing
UNUSED_SUPPRESSION = {"id": "string", "file": "string", "line": "number", "suppression": SUPPRESSION}
#: what loading one module in Bun showed (``validate --modules``): ``problem`` is null, "error"
#: (``error`` says why, as the daemon logs it), "timed-out" (after ``limit`` seconds) or "crashed"
MODULE = {
    "name": "string",
    "loaded": "bool",
    "problem": "string?",
    "error": "string?",
    "limit": "string",
    "description": "string",
    "parameters": "any",
    "schema_problem": "string?",
    # where a harness would not offer the model `parameters` as written (``daemon/host/schema_offer.py``)
    "uncarried": [{"harness": "string", "kind": "string", "keyword": "string", "at": "string"}],
}

#: what the release (the files git tracks, staged ones included) holds of a module the rules
#: would load: ``state`` is "tracked", "untracked" or "ignored" — or, in the view of a commit a
#: session serves, "staged" (git's index holds it, the commit does not)
RELEASE_MODULE = {"name": "string", "module": "string", "state": "string"}
#: one import of a module or of a file it imports (``file``): ``specifier`` is located in that
#: file; ``relative`` (./, ../) imports have the ``target`` file they resolve to on disk (null:
#: none) and its ``state``; a package's ``target`` is the first node_modules folder beside or
#: above ``file`` that the release holds it in (a path from the git work tree's top; null: none)
RELEASE_IMPORT = {
    "name": "string",
    "module": "string",
    "file": "string",
    "specifier": "string",
    "relative": "bool",
    "package": "string?",
    "target": "string?",
    "state": "string?",
}
#: a file of the manifest (the root, an import) and whether the release holds it: ``at`` is where
#: it is named (the root: its start), ``state`` as a module's
RELEASE_FILE = {"path": "string", "at": "string", "state": "string"}
#: ``git``: whether a git repository holds the manifest (else the lists are empty)
RELEASE = {"git": "bool", "modules": [RELEASE_MODULE], "imports": [RELEASE_IMPORT], "files": [RELEASE_FILE]}

#: a JSON file (with comments) of the rules' ``JSON_FILES`` that the repository holds: its located
#: ``root``, or, where it does not parse, null and why (``problem``, located ``at``)
JSON_FILE = {"path": "string", "root": "any", "problem": "string?", "at": "any"}

FACTS = {
    "manifest": "string",
    "files": [FILE],
    "sections": {"*": [SECTION_ENTRY]},
    "section_keys": {"*": ["string"]},
    "load_errors": [LOAD_ERROR],
    "rule_ids": ["string"],
    "suppressions": [SUPPRESSION],
    # a late fact: the rules that read it run after all others (``lang/evaluator.py``)
    "unused_suppressions": [UNUSED_SUPPRESSION],
    "modules": [MODULE],  # empty unless `validate --modules`
    "release": RELEASE,
    "json_files": [JSON_FILE],  # computed on first use, from the rules' `JSON_FILES`
}

#: values the rules must define, and functions with the parameters the engine passes: the names
#: the engine reads back, listed with the shape of each in ``readback.py``
READ_BACK_VALUES = tuple(VALUES)
READ_BACK_FUNCTIONS = {name: parameters for name, (parameters, _) in FUNCTIONS.items()}

#: values read when the rules define them: the help part of a message in a code frame (a regular
#: expression, its first group), the JSON Schema of a manifest (``beeuni schema``), what an
#: editor completes where and the titles of its quick fixes (``beeuni lsp``); their shapes are
#: in ``readback.OPTIONAL_VALUES``
OPTIONAL_READ_BACK_VALUES = tuple(OPTIONAL_VALUES)
#: functions called when the rules define them: what hovering over a name in the manifest shows
#: (``readback.OPTIONAL_FUNCTIONS``)
OPTIONAL_READ_BACK_FUNCTIONS = {name: parameters for name, (parameters, _) in OPTIONAL_FUNCTIONS.items()}


def _imported_when_run(module: str, name: str) -> FolderCheck:
    """The folder check ``name`` of the engine's module ``module``, imported when it first runs:
    when rules are compiled, not on every run that reads compiled rules."""
    full = f"{__package__.rpartition('.')[0]}.{module}"

    def check(program: dict[str, Any], folder: str, shown: str) -> list[Problem]:
        found: FolderCheck = getattr(__import__(full, None, None, [name]), name)
        return found(program, folder, shown)

    check.__name__ = check.__qualname__ = name
    check.__module__ = full  # (as the rule cache's key names it: Interface.fingerprint)
    return check


#: further checks of a rules folder, run when it is compiled: see ``lang.interface.FolderCheck``
FOLDER_CHECKS: tuple[FolderCheck, ...] = (
    _imported_when_run("shipped", "check_shipped_modules"),
    _imported_when_run("contract.optional_readback", "check_optional_read_backs"),
)

#: the `let` in which the rules declare the manifest's shape, once: its keys, and what each
#: holds (the shape language of ``lang/interface.py``); `beeuni schema` is built from it
MANIFEST_SHAPE = "MANIFEST_SHAPE"


def manifest_facts(shape: Any) -> dict[str, Any]:
    """``FACTS`` with the manifest data typed by the shape the rules declare: a file's root is
    the whole document, an entry of ``sections.<key>`` holds what one name of that mapping
    holds. ``rules check`` then warns of a field a rule reads that the manifest cannot have."""
    if not isinstance(shape, dict):
        return FACTS
    mappings = {key: part["*"] for key, part in shape.items() if isinstance(part, dict) and "*" in part}
    sections = {
        key: [{**SECTION_ENTRY, "value": {"$data": mappings[key]}}] if key in mappings else [SECTION_ENTRY]
        for key in shape
    }
    return {
        **FACTS,
        "files": [{**FILE, "root": {"$data": shape}}],
        "sections": {"*": [SECTION_ENTRY], "$keys": sections},
    }


RULES_INTERFACE = Interface(
    FACTS,
    READ_BACK_VALUES,
    READ_BACK_FUNCTIONS,
    FOLDER_CHECKS,
    OPTIONAL_READ_BACK_VALUES,
    OPTIONAL_READ_BACK_FUNCTIONS,
    data_shape=(MANIFEST_SHAPE, manifest_facts),
)
