"""The values the engine reads back from the rules, and the shape each one must have.

The rules compute what the commands print and what the daemon loads (docs/rules-language.md,
"What the engine reads back"). An edit of the rules can give one of these values the wrong shape
— a list where a view id belongs — and without a check that mistake would surface far from its
cause: as a crash of ``resolve``, or as an answer 500 of the daemon in the middle of a session.
``beeuni rules check`` knows their names and arities (``rules_interface.py`` takes them from here), but
not every value a rule computes; so every value is also checked where it is read
(``ProjectRun.output`` and ``ProjectRun.call``), and made of values any consumer takes on the
way: located booleans become ``bool``, and records keep only, and in order, the fields the
engine reads (located strings stay: they are strings). A value of the wrong
shape is reported as a mistake in the rules, at the definition that made it.

The shapes of ``resolved_harness`` and ``session_tools`` are those of the resolved tool set's
pydantic model (``engine/resolved.py``); a test holds the two together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lang import patterns
from ..lang.values import type_name
from ..yaml.located import LocatedConst, unwrap

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


class WrongShape(Exception):
    """``path`` (like ``.agents[2].view``) of a read-back value is not ``expected``. Raised with
    an empty path where the wrong value is found; each container it was found in adds its part
    on the way out (so that checking a right value builds no path at all)."""

    def __init__(self, path: str, expected: str, found: str) -> None:
        super().__init__(f"{path} must be {expected}, not {found}")
        self.path = path
        self.expected = expected
        self.found = found

    def below(self, part: str) -> WrongShape:
        self.path = part + self.path
        return self


_FOUND = {"list": "a list", "map": "a map", "string": "a string", "int": "a number", "float": "a number"}


def found(value: Any) -> str:
    """How a wrong value reads in a message: its type, or a short string itself."""
    kind = type_name(value)
    if kind == "string" and len(value) <= 40:
        return f"the string `{value}`"
    if kind == "bool":
        return "true" if unwrap(value) else "false"
    return _FOUND.get(kind, kind)


class Shape:
    """What a value must be (``what`` says it in words), and how it becomes a plain value."""

    what = "a value"
    plural = ""  # how several read in "a list of ..."; empty: "a list, each item <what>"

    def plain(self, value: Any) -> Any:
        raise NotImplementedError

    def wrong(self, value: Any) -> WrongShape:
        return WrongShape("", self.what, found(value))


class Anything(Shape):
    """Manifest data handed through as it is (``eject_plan``'s declaration value)."""

    def plain(self, value: Any) -> Any:
        return value


class Str(Shape):
    """A string; a located one stays located (it is a ``str``, and keeps its position)."""

    plural = "strings"

    def __init__(self, note: str = "") -> None:
        self.what = f"a string ({note})" if note else "a string"

    def plain(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        raise self.wrong(value)


class Regex(Str):
    """A regular expression of the rules (RE2, ``lang/patterns.py``) with the groups the engine
    reads: at least ``groups`` numbered ones, and those ``names``."""

    def __init__(self, note: str, groups: int = 0, names: tuple[str, ...] = ()) -> None:
        super().__init__(note)
        self.groups = groups
        self.names = names

    def plain(self, value: Any) -> str:
        text = super().plain(value)
        try:
            count, named = patterns.groups(text)
        except patterns.PatternError as err:
            raise WrongShape("", "", f"is not a regular expression the rules can use: {err}") from None
        if count < self.groups or not set(self.names) <= set(named):
            raise self.wrong(value)
        return text


class Literal(Shape):
    def __init__(self, word: str) -> None:
        self.word = word
        self.what = f"`{word}`"

    def plain(self, value: Any) -> str:
        if value == self.word and isinstance(value, str):
            return self.word
        raise self.wrong(value)


class Bool(Shape):
    what = "true or false"

    def plain(self, value: Any) -> bool:
        plain = unwrap(value)
        if plain is True or plain is False:
            return plain
        raise self.wrong(value)


class Template(Str):
    """A message with named blanks ``{name}`` that the daemon fills in (``str.format_map``):
    only the names in ``fields``, with no conversion or format spec, and braces balanced."""

    def __init__(self, fields: Iterable[str]) -> None:
        self.fields = frozenset(fields)
        blanks = ", ".join(f"{{{name}}}" for name in sorted(self.fields))
        self.what = f"a string whose blanks are among {blanks} (write `{{{{` and `}}}}` for braces)"

    def plain(self, value: Any) -> str:
        text = super().plain(value)
        from string import Formatter

        try:
            parts = list(Formatter().parse(text))
        except ValueError:
            raise self.wrong(value) from None
        for _, name, spec, conversion in parts:
            if name is not None and (name not in self.fields or spec or conversion):
                raise self.wrong(value)
        return text


class Nullable(Shape):
    def __init__(self, inner: Shape) -> None:
        self.inner = inner
        self.what = f"null or {inner.what}"

    def plain(self, value: Any) -> Any:
        if value is None or (isinstance(value, LocatedConst) and value.value is None):
            return None
        try:
            return self.inner.plain(value)
        except WrongShape as err:
            if err.path:  # it had the inner shape, but something inside is wrong
                raise
            raise self.wrong(value) from None


class OneOf(Shape):
    def __init__(self, *choices: Shape) -> None:
        self.choices = choices
        self.what = " or ".join(choice.what for choice in choices)

    def plain(self, value: Any) -> Any:
        for choice in self.choices:
            try:
                return choice.plain(value)
            except WrongShape as err:
                if err.path:  # it had the choice's shape, but something inside is wrong
                    raise
        raise self.wrong(value)


class ListOf(Shape):
    def __init__(self, item: Shape, note: str = "") -> None:
        self.item = item
        self.what = f"a list of {item.plural}" if item.plural else f"a list, each item {item.what}"
        if note:
            self.what += f" ({note})"

    def plain(self, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise self.wrong(value)
        plain = self.item.plain
        found = []
        for index, item in enumerate(value):
            try:
                found.append(plain(item))
            except WrongShape as err:
                raise err.below(f"[{index}]") from None
        return found


class Map(Shape):
    """A map of anything (a JSON Schema the rules write), handed through as it is."""

    def __init__(self, note: str = "") -> None:
        self.what = f"a map ({note})" if note else "a map"

    def plain(self, value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        raise self.wrong(value)


class Record(Shape):
    """A map with these fields, in this order, and any of the ``optional`` ones. Other entries:
    checked against ``rest`` and kept, left out when ``drop_rest``, else refused (the record has
    exactly these fields, as in the resolved tool set's JSON Schema)."""

    def __init__(
        self,
        fields: dict[str, Shape],
        rest: Shape | None = None,
        drop_rest: bool = False,
        optional: dict[str, Shape] | None = None,
    ) -> None:
        self.fields = fields
        self.rest = rest
        self.drop_rest = drop_rest
        self.optional = optional or {}
        self._items = tuple((name, shape.plain) for name, shape in fields.items())
        names = ", ".join(fields)
        if self.optional:
            names += f" (and optionally {', '.join(self.optional)})"
        self.what = f"a map with {names}"
        self.plural = f"maps with {names}"

    def plain(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.wrong(value)
        plain = {}
        for name, check in self._items:
            try:
                plain[name] = check(value[name])
            except KeyError:
                raise WrongShape("", self.what, f"a map without `{name}`") from None
            except WrongShape as err:
                raise err.below(f".{name}") from None
        if len(plain) < len(value) and not self.drop_rest:
            for key, item in value.items():
                if key in self.fields:
                    continue
                shape = self.optional.get(key, self.rest)
                if shape is None or not isinstance(key, str):
                    raise WrongShape("", self.what, f"a map with `{key}` too")
                try:
                    plain[str(key)] = shape.plain(item)
                except WrongShape as err:
                    raise err.below(f".{key}") from None
        return plain


class Checked(Shape):
    """A shape with a further check of the plain value: ``check`` returns where in it it is
    wrong and why (``(".agents[2].view", "names ...")``), or None."""

    def __init__(self, inner: Shape, check: Callable[[Any], tuple[str, str] | None]) -> None:
        self.inner = inner
        self.check = check
        self.what, self.plural = inner.what, inner.plural

    def plain(self, value: Any) -> Any:
        plain = self.inner.plain(value)
        problem = self.check(plain)
        if problem is not None:
            raise WrongShape(problem[0], "", problem[1])
        return plain


def _views_are_listed(harness: dict[str, Any]) -> tuple[str, str] | None:
    """Every view a harness names (an agent's, the default, a subagent pair's) is one it lists."""
    ids = [view["id"] for view in harness["views"]]
    known = set(ids)
    pairs = harness["subagent_views"]
    named = {harness["default_view"]} | {agent["view"] for agent in harness["agents"]}
    named |= {pair[field] for pair in pairs for field in ("parent_view", "child_view", "view")}
    if named <= known:
        return None
    # the first one that names no view, with its path (built only now, on the way to an error)
    places = [(".default_view", harness["default_view"])]
    places += [(f".agents[{i}].view", agent["view"]) for i, agent in enumerate(harness["agents"])]
    for i, pair in enumerate(pairs):
        places += [(f".subagent_views[{i}].{field}", pair[field]) for field in ("parent_view", "child_view", "view")]
    where, view = next((where, view) for where, view in places if view not in known)
    return where, f"names `{view}`, which is none of the harness's views ({', '.join(ids) or 'none'})"


class Count(Shape):
    """A whole number, zero or more (a limit)."""

    what = "a whole number, zero or more"

    def plain(self, value: Any) -> int:
        number = unwrap(value)
        if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
            return number
        raise self.wrong(value)


# The shapes -------------------------------------------------------------------------------------

STRINGS = ListOf(Str())
NAME = Str()
TOOL = Record({"name": NAME, "kind": Str(), "source": Str()})
#: a record of a listing (``agent_tools``): a session tool's record has more fields, left out
LISTED_TOOL = Record(TOOL.fields, drop_rest=True)
SESSION_TOOL = Record(
    {"name": NAME, "kind": Str(), "source": Str(), "module": Nullable(Str("a path")), "builtin": Nullable(Str())}
)
VIEW_ID = Str("a view id")
#: one rule of an agent's permission, as opencode orders them (the last one that matches wins)
PERMISSION_RULE = Record({"permission": Str("a permission or tool"), "pattern": Str(), "action": Str("an action")})
HARNESS = Checked(
    Record(
        {
            "name": Str(),
            "harness_tools": ListOf(TOOL),
            "subagents_limited_by_parent": Bool(),
            "views": ListOf(Record({"id": VIEW_ID, "tools": STRINGS})),
            "default_view": VIEW_ID,
            "agents": ListOf(
                Record(
                    {
                        "name": NAME,
                        "view": VIEW_ID,
                        "can_delegate": Bool(),
                        "connectors": ListOf(TOOL),
                        "permission": ListOf(PERMISSION_RULE),
                    }
                )
            ),
            "subagent_views": ListOf(Record({"parent_view": VIEW_ID, "child_view": VIEW_ID, "view": VIEW_ID})),
        }
    ),
    _views_are_listed,
)
#: the blanks the daemon fills in its answers, and the answers it gives
MESSAGE_FIELDS = tuple("tool agent detail size lines path caller pid command port count seconds".split())  # noqa: SIM905
DAEMON_MESSAGE_KEYS = tuple(  # (as words: a list literal would take a line each)
    """
    not_loaded not_visible unknown_agent not_delegating timed_out host_died output_too_large
    not_confined confinement_required host_not_started module_output log_dropped unauthorized
    refused_caller caller_known caller_unknown no_connection_fd connection_fd_not_socket
    memory_unguarded guard_required starter_gone plugin_without_connection did_not_load
    serving_release serving_folder serving_uncommitted release_no_git release_no_commit
    release_unknown release_unreadable release_object_missing release_forged release_stalled
    release_no_manifest release_no_rules_untracked release_no_rules_ignored release_no_rules_staged
    folder_too_large plugin_in_repository
    converged convergence_failed release_invalid spilled not_an_object bad_arguments not_strict_json too_deep
    inexact_number header_too_large foreign_host too_large no_such_path method_not_allowed client_gone
    bad_request internal_error invalid_arguments invalid_schema not_carried view_output
    output_not_json not_filtered filter_required headers_too_large request_timeout
    without_token refusals_counted not_contained containment_required connections_cut
    connections_cut_unknown connections_cut_kind
    """.split()  # noqa: SIM905
)
_MESSAGE = Template(MESSAGE_FIELDS)
DAEMON_MESSAGES = Record({key: _MESSAGE for key in DAEMON_MESSAGE_KEYS}, rest=_MESSAGE)
#: the texts of the experimental harness's turn loop (``daemon/turns/``) and the blanks it fills
TURN_MESSAGE_FIELDS = ("tool", "agent", "detail", "allowed")
TURN_MESSAGE_KEYS = tuple(
    """
    tool_not_found permission_denied permission_ask unknown_subagent subagent_too_deep too_many_requests
    unreadable_arguments model_failed
    """.split()  # noqa: SIM905
)
#: why a call's arguments do not fit its tool's schema, per JSON Schema keyword (``daemon/host/arguments.py``)
_ARGUMENT_MESSAGE = Template(("property", "value", "allowed", "keyword"))
ARGUMENT_MESSAGES = Record({"root": Str(), "keywords": Record({}, rest=_ARGUMENT_MESSAGE), "other": _ARGUMENT_MESSAGE})
#: what `tools new` does: where the module goes, its text, the manifest edit, or why not
NEW_TOOL_PLAN = Record(
    {
        "section": Str(),
        "path": Str("a repo-relative path"),
        "comment": Str(),
        "declaration": Nullable(Record({"name": NAME, "value": Anything(), "file": Str()}, rest=Anything())),
        "tools_file": Nullable(Str("a repo-relative path")),
        "new_section": ListOf(Record({"name": NAME, "value": Str()})),
        "problem": Nullable(Str("a reason")),
        "source": Str(),
    }
)
EJECT_PLAN = Record(
    {
        "section": Str(),
        "path": Str("a repo-relative path"),
        "shipped": Str("a file name"),
        "comment": Str(),
        "beeuni_value": Str(),
        "declaration": Nullable(Record({"name": NAME, "value": Anything(), "file": Str()}, rest=Anything())),
        "tools_file": Nullable(Str("a repo-relative path")),
        "new_section": ListOf(Record({"name": NAME, "value": Str()})),
    }
)
#: `tools migrate`: the files opencode would load as custom tools, and what becomes of each
MIGRATE_CANDIDATE = Record({"path": Str("a repo-relative path"), "stem": Str(), "extension": Str()})
MIGRATE_PLAN = Record(
    {
        "section": Str(),
        "tools_file": Nullable(Str("a repo-relative path")),
        "manifest_file": Str("a repo-relative path"),
        "new_section": ListOf(Record({"name": NAME, "value": Str()})),
        "delete": ListOf(Record({"path": Str("a repo-relative path"), "tool": NAME})),
        "aside": ListOf(
            Record(
                {
                    "path": Str("a repo-relative path"),
                    "to": Str("a repo-relative path"),
                    "tool": Nullable(NAME),
                    "why": Str(),
                }
            )
        ),
        "gone": ListOf(Str("a repo-relative path"), "paths"),
        "convert": ListOf(
            Record(
                {
                    "path": Str("a repo-relative path"),
                    "export": Str(),
                    "name": NAME,
                    "module": Str("a repo-relative path"),
                    "comment": Str(),
                    "steps": ListOf(Str(), "lines"),
                }
            )
        ),
        "keep": ListOf(Record({"path": Str("a repo-relative path"), "reason": Str()})),
        "zod_packages": ListOf(Str(), "package names"),
    }
)

#: the values the engine reads back, and their shapes
VALUES: dict[str, Shape] = {
    "tools_key": Bool(),
    "session_tools": ListOf(SESSION_TOOL),
    "removed_beeuni_tools": STRINGS,
    "tools_ls_footer": ListOf(Str(), "lines"),
    "HARNESSES": ListOf(Str(), "harness names"),
    "DEFAULT_HARNESS": Str("a harness name"),
    "agent_names": STRINGS,
    "BEEUNI_TOOLS": STRINGS,
    "PLATFORM_ENV": ListOf(Str(), "variable names"),
    "PROVIDER_KEYS": ListOf(Str(), "variable names"),
    "DAEMON_MESSAGES": DAEMON_MESSAGES,
    "ARGUMENT_MESSAGES": ARGUMENT_MESSAGES,
    "VIEW_OUTPUTS": Record({}, rest=Map("a JSON Schema")),
    "SCHEMA_CARRIED": Record(
        {}, rest=Record({"top_level": STRINGS, "property_reserved": STRINGS, "dropped_if_boolean": STRINGS})
    ),
    "SUPPRESSION": Record(
        {
            "pattern": Regex(
                "a regular expression with the groups (?P<ids>...) and (?P<reason>...)", 0, ("ids", "reason")
            ),
            "separator": Str(),
            "comment": Str(),
        }
    ),
    "modules_to_load": ListOf(Record({"name": NAME, "module": Str("a repo-relative path")})),
    "migrate_candidates": ListOf(MIGRATE_CANDIDATE),
    "OPENCODE_ZOD_SOURCES": ListOf(Record({"package": Str("a package name"), "member": Str("a dotted path")})),
    "ENV_READERS": ListOf(Str(), "dotted names"),
    "MIGRATED_FOLDER": Str("a repo-relative folder"),
    "OPENCODE_HARNESS_PACKAGES": ListOf(Str("a package name"), "package names"),
    "MIGRATE_OUTPUT_WRAPPER": Record({"name": Str("a function name"), "source": Str("TypeScript")}),
    "BUN_MISSING": Str(),
    "HARNESS_FILES": ListOf(Str("a repo-relative path"), "paths"),
    "TOOL_FOLDERS": Record({}, rest=Str("a repo-relative folder")),
}
#: the values above that hold a regular expression: checked when the rules are compiled, as the
#: optional ones (``optional_readback.py``), not only when a manifest makes the engine read them
PATTERN_VALUES = ("SUPPRESSION",)
#: the functions the engine calls: the parameters it passes, and the shape of what they give
FUNCTIONS: dict[str, tuple[tuple[str, ...], Shape]] = {
    "agent_tools": (("agent", "harness"), ListOf(LISTED_TOOL)),
    "subagent_tools": (("child", "parent", "harness"), ListOf(LISTED_TOOL)),
    "delegation_problem": (("parent", "harness"), Nullable(Str())),
    "agent_secrets": (("agent",), OneOf(Literal("all"), ListOf(Str(), "secret names"))),
    "resolved_harness": (("harness",), HARNESS),
    "eject_plan": (("name",), EJECT_PLAN),
    "eject_refusal": (("reason", "name", "detail"), Str()),
    "eject_summary": (("name", "path", "manifest_file"), ListOf(Str(), "lines")),
    "new_tool_plan": (("name", "path"), NEW_TOOL_PLAN),
    "new_tool_refusal": (("reason", "name", "detail"), Str()),
    "new_tool_summary": (("name", "path", "manifest_file"), ListOf(Str(), "lines")),
    "secret_name_problem": (("name",), Nullable(Str())),
    "secrets_refusal": (("reason", "name"), Str()),
    "shipped_module": (("name",), Str("a path in the rules folder")),
    "fix_summary": (("fixes", "files", "written"), Str()),
    "fix_refusal": (("reason", "file"), Str()),
    "migrate_copy_of": (("digest", "shipped"), Nullable(NAME)),
    "migrate_plan": (("files",), MIGRATE_PLAN),
    "migrate_report": (("plan", "dry_run"), ListOf(Str(), "lines")),
    "migrate_nothing": ((), Str()),
    "migrate_refusal": (("reason", "detail"), Str()),
    "carry_problem": (("problem",), Str()),
    "not_released": (("name", "module", "state"), Str()),
    "release_changes": (("changes",), Str()),
}


#: the blanks `beeuni sessions` fills in its texts
SESSION_MESSAGE_FIELDS = ("id", "status", "agent", "model", "created", "tool", "detail", "path")
#: what `beeuni sessions` reads (rules/sessions.rules), when the rules define it
SESSION_VALUES: dict[str, Shape] = {
    "SESSION_AGENT": Str("an agent name"),
    "PROVIDERS_WITHOUT_CONFIGURATION": ListOf(Record({"id": Str("a provider"), "source": Str("opencode's source")})),
    "SESSION_LOG_LIMITS": Record({"characters": Count(), "lines": Count(), "prompt_characters": Count()}),
    "SESSION_MESSAGES": Record({}, rest=Template(SESSION_MESSAGE_FIELDS)),
    "OPENCODE_PROJECT_FILES": ListOf(Str("a repo-relative path"), "paths"),
    "OPENCODE_TURN_SETTINGS": Map("opencode's configuration keys"),
    "COMMAND_SHELLS": ListOf(Str("a shell's name"), "names"),
}


#: the blanks `beeuni cr open` fills in its texts, and those it prints
CR_MESSAGE_FIELDS = ("path", "remote", "base", "branch", "title", "detail", "url", "command")
CR_MESSAGE_KEYS = tuple(  # (as words: a list literal would take a line each)
    """
    no_title not_git no_remote many_remotes detached no_base no_commit base_moved nothing ignored invalid
    git_failed push_failed forge_failed committed file pushed opened open_link open_by_hand
    """.split()  # noqa: SIM905
)
_CR_MESSAGE = Template(CR_MESSAGE_FIELDS)
#: the blanks of a forge client's arguments
CR_FORGE_FIELDS = ("host", "path", "branch", "base", "title", "body")
#: what `beeuni cr open` and `beeuni init` read (rules/commands.rules), when the rules define it
CHANGE_VALUES: dict[str, Shape] = {
    "CR_BRANCH": Record(
        {
            "prefix": Str("a branch name's start"),
            "word": Regex("a regular expression: one word of a title"),
            "max_length": Count(),
            "fallback": Str("a branch name's word"),
        }
    ),
    "CR_PUSH_LINK": Regex("a regular expression with a group: the link in a line of `git push`'s answer", 1),
    "CR_FORGES": ListOf(
        Record(
            {
                "name": Str(),
                "command": Str("a program's name"),
                "logged_in": ListOf(Template(CR_FORGE_FIELDS), "arguments"),
                "open": ListOf(Template(CR_FORGE_FIELDS), "arguments"),
            }
        )
    ),
    "CR_MESSAGES": Record({key: _CR_MESSAGE for key in CR_MESSAGE_KEYS}, rest=_CR_MESSAGE),
    "INIT_MANIFEST": Str("a manifest's text"),
}


#: the values read when the rules define them (``rules_interface.OPTIONAL_READ_BACK_VALUES``)
OPTIONAL_VALUES: dict[str, Shape] = {
    "HELP_PATTERN": Regex("a regular expression with a group, a message's help part", 1),
    "MANIFEST_SCHEMA": Map("a JSON Schema"),
    "COMPLETIONS": ListOf(
        Record(
            {"path": ListOf(Str(), "the keys from the top, `*` for any")},
            optional={"values": ListOf(Str(), "offered as values"), "keys": ListOf(Str(), "offered as keys")},
        )
    ),
    "CODE_ACTION_TITLES": Record({"fix": Template(("rule", "replacement")), "suppress": Template(("rule",))}),
    **SESSION_VALUES,
    # the repository's JSON files (with comments) the rules read, as the `json_files` fact
    "JSON_FILES": ListOf(Str("a repo-relative path"), "paths"),
    **CHANGE_VALUES,
    # the experimental harness's turn loop (rules/turns.rules; ``daemon/turns/``)
    "HARNESS_MODULES": ListOf(
        Record({"harness": Str("a harness name"), "tool": NAME, "module": Str("a path in the rules folder")})
    ),
    "DELEGATION_TOOL": Str("a tool name"),
    "DELEGATION_ARGUMENTS": Record({"agent": Str("an argument name"), "prompt": Str("an argument name")}),
    "TURN_LIMITS": Record({"requests": Count(), "subagent_depth": Count()}),
    "PERMISSION_INPUT": Record({}, rest=Str("an argument name")),
    "PERMISSION_OF_TOOL": Record({}, rest=Str("a permission")),
    "MODEL_PROVIDERS": Record(
        {}, rest=Record({"api": Str("an API"), "key": Str("a variable name"), "base_url": Nullable(Str("a URL"))})
    ),
    "MODEL_PACKAGES": Record({}, rest=Str("an API")),
    "TURN_MESSAGES": Record(
        {key: Template(TURN_MESSAGE_FIELDS) for key in TURN_MESSAGE_KEYS}, rest=Template(TURN_MESSAGE_FIELDS)
    ),
    "PROGRESS_LABELS": Record({"rules_diff": Str(), "tools_migrate": Str()}),
    # what a session does not get because the release lacks what it needs, and why; and the
    # rules whose error keeps a release from being served at all (``release/served.py``)
    "unreleased_tools": ListOf(Record({"name": NAME, "reason": Str()})),
    "RELEASE_REFUSED_BY": ListOf(Str(), "rule ids"),
    # how the release view resolves a relative import as Bun does (``release/facts.py``)
    "IMPORT_RESOLUTION": Record(
        {
            "extensions": ListOf(Str(), "file extensions tried after a path, in order"),
            "followed": ListOf(Str(), "file extensions whose imports are read"),
        }
    ),
}
#: the functions called when the rules define them, their parameters and the shape of what they give
OPTIONAL_FUNCTIONS: dict[str, tuple[tuple[str, ...], Shape]] = {
    "hover_tool": (("name",), Nullable(ListOf(Nullable(Str()), "Markdown lines, null for none"))),
    "session_model_ok": (("model",), Bool()),
    "tools_call_unknown": (("name",), Nullable(Str())),
    "fix_hint": (("count",), Str()),
    "init_refusal": (("reason", "path"), Str()),
    "init_summary": (("path", "folder"), ListOf(Str(), "lines")),
}


def describe(subject: str, err: WrongShape) -> str:
    """The message for a wrong read-back value: ``subject`` is the value's name or the call."""
    where = f"{subject}{err.path}"
    if not err.expected:  # a Checked problem says what is wrong itself
        return f"`{where}` {err.found}"
    return f"`{where}` must be {err.expected}, not {err.found} (the engine reads it back: docs/rules-language.md)"
