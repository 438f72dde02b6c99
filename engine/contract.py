"""The contract between the engine and the rules, in one place: the facts the engine hands over,
with their shapes, and the names it reads back. ``beeuni rules check`` holds a rules folder
against it (a misspelled field of a fact, a missing or misshapen name the engine reads), and
``docs/rules-language.md`` describes it for maintainers.

To hand the rules a new fact: add it to ``FACTS`` (with its shape, see ``lang/interface.py``)
and to what ``manifest.MergedManifest.facts`` returns. To read a new name back: add it to
``READ_BACK_VALUES`` or ``READ_BACK_FUNCTIONS``. A further check of a whole rules folder (one that
needs more than the language knows) goes into ``FOLDER_CHECKS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lang.interface import Interface

if TYPE_CHECKING:
    from .lang.interface import FolderCheck

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
}

FACTS = {
    "manifest": "string",
    "files": [FILE],
    "sections": {"*": [SECTION_ENTRY]},
    "section_keys": {"*": ["string"]},
    "load_errors": [LOAD_ERROR],
}

#: values the rules must define
READ_BACK_VALUES = (
    "tools_key",
    "session_tools",
    "removed_beeuni_tools",
    "tools_ls_footer",
    "HARNESSES",
    "DEFAULT_HARNESS",
    "agent_names",
    "BEEUNI_TOOLS",
    "PLATFORM_ENV",
    "PROVIDER_KEYS",
    "DAEMON_MESSAGES",
)

#: functions the rules must define, with the parameters the engine passes
READ_BACK_FUNCTIONS = {
    "agent_tools": ("agent", "harness"),
    "subagent_tools": ("child", "parent", "harness"),
    "delegation_problem": ("parent", "harness"),
    "agent_secrets": ("agent",),
    "resolved_harness": ("harness",),
    "eject_plan": ("name",),
    "eject_refusal": ("reason", "name", "detail"),
    "eject_summary": ("name", "path", "manifest_file"),
    "secret_name_problem": ("name",),
}

#: further checks of a rules folder, run when it is compiled: see ``lang.interface.FolderCheck``
FOLDER_CHECKS: tuple[FolderCheck, ...] = ()

RULES_INTERFACE = Interface(FACTS, READ_BACK_VALUES, READ_BACK_FUNCTIONS, FOLDER_CHECKS)
