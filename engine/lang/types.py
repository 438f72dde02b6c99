"""What the checker knows of each value's type, and the mistakes that knowledge reveals.

Types are inferred, never written: from literals, from the shapes of the facts the host hands
over (``interface.py``), through ``let``, comprehensions, built-ins and the records that map
literals build; a function's parameters get the types of the arguments its callers pass (all
call sites agreeing; the host's calls pass anything). What cannot be known is ``any`` and is
never reported. Found, before any manifest runs:

- a field that a record does not have (``t.nmae``: "did you mean `name`?"), also as the field
  name of ``index_by``/``group_by``;
- an operator that can never work on its operands' types (``f"…" + 1``, ``"a" | ["b"]``,
  ``x in 3``), wherever it stands;
- a regular expression given to ``matches`` that does not compile or that RE2 does not take
  (``patterns.py``): a literal, or a constant ``let`` traced to its literal.

A type is a tuple: ``("any",)``, ``("bottom",)`` (nothing known yet), ``("null",)``,
``("bool",)``, ``("number",)``, ``("string",)``, ``("list", item)``, ``("map", value)``,
``("record", ((field, type), ...))`` or ``("maybe", type)`` (that type, or null).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import patterns
from .similar import suggest

if TYPE_CHECKING:
    from .errors import Findings
    from .interface import Interface

Node = dict[str, Any]
Type = tuple[Any, ...]

ANY: Type = ("any",)
BOTTOM: Type = ("bottom",)
NULL: Type = ("null",)
BOOL: Type = ("bool",)
NUMBER: Type = ("number",)
STRING: Type = ("string",)
_NO_FIELDS: Type = ("record", ())
#: kinds whose values are surely of that type (not null, not unknown)
_CERTAIN = frozenset({"null", "bool", "number", "string", "list", "map", "record"})
_PHRASES = {
    "null": "null",
    "bool": "a boolean",
    "number": "a number",
    "string": "a string",
    "list": "a list",
    "map": "a map",
    "record": "a map",
}
_OP_VERBS = {"|": "`|` (union)", "&": "`&` (intersection)", "-": "`-` (difference)"}
_MAX_ROUNDS = 12


def from_shape(shape: Any) -> Type:
    """A fact's declared shape (see ``interface.py``) as a type."""
    if isinstance(shape, list):
        return ("list", from_shape(shape[0]))
    if isinstance(shape, dict):
        if "$data" in shape:
            return ("data", _data(shape["$data"]))
        if "$keys" in shape:
            keyed = tuple((key, from_shape(part)) for key, part in shape["$keys"].items())
            return ("map", from_shape(shape.get("*", "any")), keyed)
        if "*" in shape:
            return ("map", from_shape(shape["*"]))
        return ("record", tuple(sorted((name, from_shape(field)) for name, field in shape.items())))
    if shape.endswith("?"):
        return ("maybe", from_shape(shape[:-1]))
    return {"string": STRING, "number": NUMBER, "bool": BOOL, "null": NULL}.get(shape, ANY)


def _data(shape: Any) -> Any:
    """A declared shape of data, as the ``data`` type holds it (hashable): ``("fields", ((name,
    shape), ...))``, ``("each", shape)`` (a map from strings), ``("items", shape)`` (a list), or
    the scalar's name."""
    if isinstance(shape, list) and shape:
        return ("items", _data(shape[0]))
    if isinstance(shape, dict):
        if "*" in shape:
            return ("each", _data(shape["*"]))
        return ("fields", tuple((str(name), _data(part)) for name, part in shape.items()))
    return str(shape) if isinstance(shape, str) else "any"


def join(a: Type, b: Type) -> Type:
    """The type of a value that is of type ``a`` or of type ``b``."""
    if a == b or b == BOTTOM:
        return a
    if a == BOTTOM:
        return b
    if a == ANY or b == ANY:
        return ANY
    if "data" in (a[0], b[0]):  # data or a stand-in for none of it (`else {}`): still that data
        data, other = (a, b) if a[0] == "data" else (b, a)
        return data if other in (NULL, _NO_FIELDS) else _maybe(data) if other == ("maybe", data) else ANY
    if a == NULL or b == NULL:
        return _maybe(b if a == NULL else a)
    if a[0] == "maybe" or b[0] == "maybe":
        return _maybe(join(strip(a), strip(b)))
    if a[0] == b[0] and a[0] in ("list", "map"):
        return (a[0], join(a[1], b[1]))
    if a[0] == b[0] == "record":
        fields = dict(a[1])
        for name, field in b[1]:
            fields[name] = join(fields[name], field) if name in fields else field
        return ("record", tuple(sorted(fields.items())))
    return ANY


def _maybe(t: Type) -> Type:
    return t if t[0] in ("maybe", "any", "bottom", "null") else ("maybe", t)


def strip(t: Type) -> Type:
    """The type without its null: ``maybe x`` → ``x``."""
    return t[1] if t[0] == "maybe" else t


def certain(t: Type) -> bool:
    return t[0] in _CERTAIN


def phrase(t: Type) -> str:
    return _PHRASES.get(t[0], "a value")


def item_of(t: Type) -> Type:
    """What ``for x in`` a value of type ``t`` walks."""
    t = strip(t)
    if t[0] == "data":
        shape = t[1]
        if shape[0] == "items":
            return ("data", shape[1])
        return STRING if shape[0] in ("fields", "each") else ANY
    if t[0] == "list":
        return t[1] if t[1] != BOTTOM else ANY
    if t[0] in ("map", "record"):
        return STRING
    return ANY


def check_types(program: Node, interface: Interface, found: Findings) -> None:
    """Infer the types of every definition and report what can never work."""
    _TypeChecker(program, interface, found).run()


class _TypeChecker:
    def __init__(self, program: Node, interface: Interface, found: Findings) -> None:
        self.lets: dict[str, Node] = program["lets"]
        self.fns: dict[str, Node] = program["fns"]
        self.rules: list[Node] = program["rules"]
        self.data_name, facts = _shaped_facts(program, interface)
        self.facts = {name: from_shape(shape) for name, shape in facts.items()}
        self.host_called = frozenset([*interface.functions, *interface.optional_functions])
        self.found = found
        self.params: dict[str, list[Type]] = {name: [BOTTOM] * len(node["params"]) for name, node in self.fns.items()}
        self.file = ""
        self.quiet = False
        self._reset()

    def _reset(self) -> None:
        self.let_types: dict[str, Type] = {}
        self.returns: dict[str, Type] = {}
        self.busy: set[str] = set()
        self.calls: dict[str, list[Type]] = {}
        self.problems: dict[tuple[str, int, int, str], tuple[Node, str]] = {}

    def run(self) -> None:
        """Walk everything until the parameters' types settle; report the last walk's findings."""
        for _ in range(_MAX_ROUNDS):
            self._reset()
            self._walk_all()
            settled = self._settle()
            if settled == self.params:
                break
            self.params = settled
        for (file, _, _, message), (node, severity) in sorted(self.problems.items(), key=lambda item: item[0]):
            self.found.add(node, message, file, severity)

    def _settle(self) -> dict[str, list[Type]]:
        """Each function's parameters' types: what its callers pass, anything if the host calls it."""
        return {
            name: list(self.calls[name])
            if name in self.calls and name not in self.host_called
            else [ANY] * len(node["params"])
            for name, node in self.fns.items()
        }

    def _walk_all(self) -> None:
        for name, node in self.lets.items():
            self.file = node["file"]
            self.let_types[name] = self.expr(node["expr"], {})
        for name, node in self.fns.items():
            self.file = node["file"]
            self.returns[name] = self._body(name, node)
        for rule in self.rules:
            self.file = rule["file"]
            scope: dict[str, Type] = {}
            for step in rule["steps"]:
                if step["t"] == "for":
                    self._bind(step["vars"], self.expr(step["iter"], scope), scope)
                elif step["t"] == "let_clause":
                    scope[step["name"]] = self.expr(step["expr"], scope)
                else:
                    self.expr(step["expr"], scope)
            for key in ("at", "message", "fix"):
                self.expr(rule[key], scope)
            if isinstance(rule["doc"], dict):
                self.expr(rule["doc"], {})

    def _body(self, name: str, node: Node) -> Type:
        scope = dict(zip(node["params"], self.params[name], strict=True))
        body = node["body"]
        if body["t"] == "block":
            for local, value in body["lets"]:
                scope[local] = self.expr(value, scope)
            body = body["expr"]
        return self.expr(body, scope)

    # what a name or a call stands for, worked out quietly on first need -----------------------

    def _quietly(self, key: str, file: str, work: Any) -> Type:
        if key in self.busy:
            return ANY
        self.busy.add(key)
        saved = (self.quiet, self.file)
        self.quiet, self.file = True, file
        try:
            result: Type = work()
        finally:
            self.quiet, self.file = saved
            self.busy.discard(key)
        return result

    def let_type(self, name: str) -> Type:
        if name not in self.let_types:
            node = self.lets[name]
            self.let_types[name] = self._quietly("let:" + name, node["file"], lambda: self.expr(node["expr"], {}))
        return self.let_types[name]

    def return_type(self, name: str) -> Type:
        if name not in self.returns:
            node = self.fns[name]
            self.returns[name] = self._quietly("fn:" + name, node["file"], lambda: self._body(name, node))
        return self.returns[name]

    def report(self, node: Node, message: str, severity: str = "error", file: str | None = None) -> None:
        """Record ``message`` at ``node``, in ``file`` (default: the definition's)."""
        if not self.quiet:
            line, column = node.get("pos", [1, 1])
            self.problems.setdefault((file or self.file, line, column, message), (node, severity))

    # expressions ------------------------------------------------------------------------------

    def expr(self, node: Node | None, scope: dict[str, Type]) -> Type:
        if node is None:
            return NULL
        result: Type = getattr(self, "e_" + node["t"])(node, scope)
        return result

    def e_value(self, node: Node, scope: dict[str, Type]) -> Type:
        value = node["value"]
        if value is None:
            return NULL
        if isinstance(value, bool):
            return BOOL
        return STRING if isinstance(value, str) else NUMBER

    def e_name(self, node: Node, scope: dict[str, Type]) -> Type:
        name = node["name"]
        if name in scope:
            return scope[name]
        if name in self.lets:
            return self.let_type(name)
        return self.facts.get(name, ANY)

    def e_list(self, node: Node, scope: dict[str, Type]) -> Type:
        item = BOTTOM
        for element in node["items"]:
            item = join(item, self.expr(element, scope))
        return ("list", item)

    def e_map(self, node: Node, scope: dict[str, Type]) -> Type:
        fields = {key: self.expr(value, scope) for key, value in node["pairs"]}
        return ("record", tuple(sorted(fields.items())))

    def e_template(self, node: Node, scope: dict[str, Type]) -> Type:
        for part in node["parts"]:
            if isinstance(part, dict):
                self.expr(part, scope)
        return STRING

    def e_attr(self, node: Node, scope: dict[str, Type]) -> Type:
        return self.field(node, self.expr(node["obj"], scope), node["name"])

    def field(self, node: Node, of: Type, name: str) -> Type:
        """The type of field ``name`` of a value of type ``of``; a field a record lacks is reported,
        one that data's declared shape lacks is warned about."""
        of = strip(of)
        if of[0] == "data":
            return self._data_field(node, of[1], name)
        if of[0] == "map" and len(of) > 2:
            return self._keyed(node, of, name)
        if of[0] == "record":
            fields: dict[str, Type] = dict(of[1])
            if name in fields:
                return fields[name]
            listed = ", ".join(sorted(fields)) or "none"
            self.report(node, f"no field `{name}` here{suggest(name, sorted(fields))} (fields: {listed})")
            return ANY
        if of[0] == "map":
            return _maybe(of[1])
        if of[0] in ("list", "string", "number", "bool"):
            self.report(node, f"`.{name}` of {phrase(of)} is always null: only maps have fields")
        return ANY

    def _data_field(self, node: Node, shape: Any, name: str) -> Type:
        if shape[0] == "each":
            return ("data", shape[1])
        if shape[0] != "fields":
            return ANY  # (data of another shape may still be a map: the manifest is not checked yet)
        fields = dict(shape[1])
        if name in fields:
            return ("data", fields[name])
        self._undeclared(node, "field", name, list(fields))
        return ANY

    def _undeclared(self, node: Node, what: str, name: str, declared: list[str]) -> None:
        listed = ", ".join(declared) or "none"
        message = f"the data here has no {what} `{name}` in `{self.data_name}` ({listed}){suggest(name, declared)}"
        self.report(node, message, "warning")

    def _keyed(self, node: Node, of: Type, name: str) -> Type:
        """Field ``name`` of a map with known keys (``sections.agents``): an unknown key is
        warned about, as data its shape lacks."""
        keyed = dict(of[2])
        if name in keyed:
            return _maybe(keyed[name])
        self._undeclared(node, "key", name, list(keyed))
        return _maybe(of[1])

    def e_index(self, node: Node, scope: dict[str, Type]) -> Type:
        of = strip(self.expr(node["obj"], scope))
        key = node["key"]
        self.expr(key, scope)
        literal = key["t"] == "value" and isinstance(key["value"], str)
        if literal and (of[0] in ("data", "record") or (of[0] == "map" and len(of) > 2)):
            return self.field(node, of, key["value"])
        if of[0] == "data":
            return ("data", of[1][1]) if of[1][0] in ("each", "items") else ANY
        if of[0] in ("map", "list"):
            return _maybe(of[1])
        if of[0] == "string":
            return _maybe(STRING)
        return ANY

    def e_if(self, node: Node, scope: dict[str, Type]) -> Type:
        self.expr(node["cond"], scope)
        return join(self.expr(node["then"], scope), self.expr(node["else"], scope))

    def e_and(self, node: Node, scope: dict[str, Type]) -> Type:
        self.expr(node["left"], scope)
        self.expr(node["right"], scope)
        return BOOL

    e_or = e_and
    e_compare = e_and

    def e_not(self, node: Node, scope: dict[str, Type]) -> Type:
        self.expr(node["expr"], scope)
        return BOOL

    def e_in(self, node: Node, scope: dict[str, Type]) -> Type:
        self.expr(node["left"], scope)
        container = self.expr(node["right"], scope)
        if container[0] in ("number", "bool"):
            self.report(node, f"`in` needs a list, map or string on its right, not {phrase(container)}")
        return BOOL

    def e_binop(self, node: Node, scope: dict[str, Type]) -> Type:
        op = node["op"]
        left, right = self.expr(node["left"], scope), self.expr(node["right"], scope)
        if op == "+":
            return self._plus(node, left, right)
        for side in (left, right):
            if side[0] in ("string", "number", "bool"):
                self.report(node, f"{_OP_VERBS[op]} needs lists, not {phrase(side)}")
                return ANY
        item = join(item_of(left), item_of(right)) if op == "|" else item_of(left)
        return ("list", item)

    def _plus(self, node: Node, left: Type, right: Type) -> Type:
        a, b = strip(left), strip(right)
        if a[0] == b[0] and a[0] in ("string", "number"):
            return a
        lists = ("null", "list")
        if certain(left) and certain(right):
            if a[0] in lists and b[0] in (*lists, "map", "record"):
                return ("list", join(item_of(a), item_of(b)))
            self.report(node, f"cannot add {phrase(left)} and {phrase(right)}")
            return ANY
        if "list" in (a[0], b[0]):
            return ("list", join(item_of(a), item_of(b)))
        return ANY

    def e_comp(self, node: Node, scope: dict[str, Type]) -> Type:
        inner = dict(scope)
        self._bind(node["vars"], self.expr(node["iter"], scope), inner)
        element = self.expr(node["element"], inner)
        if node["cond"] is not None:
            self.expr(node["cond"], inner)
        return ("list", element)

    def _bind(self, names: list[str], source: Type, scope: dict[str, Type]) -> None:
        """The types of ``for x in source`` or ``for k, v in source``."""
        if len(names) == 1:
            scope[names[0]] = item_of(source)
            return
        of = strip(source)
        if of[0] == "data":
            shape = of[1]
            inner = ("data", shape[1]) if shape[0] in ("each", "items") else ANY
            scope[names[0]], scope[names[1]] = NUMBER if shape[0] == "items" else STRING, inner
        elif of[0] == "map":
            scope[names[0]], scope[names[1]] = STRING, of[1]
        elif of[0] == "list":
            scope[names[0]], scope[names[1]] = NUMBER, of[1] if of[1] != BOTTOM else ANY
        elif of[0] == "record":
            scope[names[0]], scope[names[1]] = STRING, ANY
        else:
            scope[names[0]], scope[names[1]] = ANY, ANY

    def e_call(self, node: Node, scope: dict[str, Type]) -> Type:
        name = node["fn"]
        args = [self.expr(arg, scope) for arg in node["args"]]
        if name in self.fns:
            if len(args) == len(self.fns[name]["params"]):
                if not self.quiet:
                    known = self.calls.get(name)
                    self.calls[name] = args if known is None else [join(a, b) for a, b in zip(known, args, strict=True)]
                return self.return_type(name)
            return ANY
        builtin = getattr(self, "b_" + name, None)
        if builtin is None:
            return _BUILTIN_RESULTS.get(name, ANY)
        result: Type = builtin(node, args, scope)
        return result

    # built-ins whose result depends on their arguments, or whose arguments can be checked -----

    def b_values(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        of = strip(args[0]) if args else ANY
        return ("list", of[1] if of[0] == "map" else ANY)

    def b_sorted(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        of = strip(args[0]) if args else ANY
        return ("list", item_of(of)) if of[0] in ("list", "map", "record") else ("list", ANY)

    b_unique = b_sorted

    def b_first(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        return _maybe(item_of(args[0])) if args else ANY

    def b_flatten(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        inner = strip(item_of(args[0])) if args else ANY
        return ("list", item_of(inner) if inner[0] == "list" else ANY)

    def b_index_by(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        return ("map", self._records_by(node, args))

    def b_group_by(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        return ("map", ("list", self._records_by(node, args)))

    def _records_by(self, node: Node, args: list[Type]) -> Type:
        record = strip(item_of(args[0])) if args else ANY
        key = node["args"][1] if len(node["args"]) > 1 else None
        if record[0] == "record" and key is not None and key["t"] == "value" and isinstance(key["value"], str):
            self.field(key, record, key["value"])
        return record

    def b_matches(self, node: Node, args: list[Type], scope: dict[str, Type]) -> Type:
        if len(args) == 2:
            pattern = args[1]
            if certain(pattern) and pattern[0] != "string":
                self.report(node["args"][1], f"the pattern of `matches` must be a string, not {phrase(pattern)}")
            self._regex(node["args"][1], scope)
        return BOOL

    def _regex(self, node: Node, scope: dict[str, Type]) -> None:
        """A pattern known before any manifest runs must compile."""
        constant = self.constant(node, scope, self.file)
        if constant is None:
            return
        pattern, literal, file = constant
        problem = patterns.problem(pattern)
        if problem is not None:
            self.report(literal, problem, file=file)

    def constant(self, node: Node, scope: dict[str, Type], file: str) -> tuple[str, Node, str] | None:
        """A string known without any manifest — a literal, a template or ``+`` of such, or a
        ``let`` of one — with the literal it was written as and that literal's file."""
        kind = node["t"]
        if kind == "value" and isinstance(node["value"], str):
            return node["value"], node, file
        if kind == "name" and node["name"] not in scope and node["name"] in self.lets:
            let = self.lets[node["name"]]
            if "let:" + node["name"] in self.busy:
                return None
            self.busy.add("let:" + node["name"])
            try:
                return self.constant(let["expr"], {}, let["file"])
            finally:
                self.busy.discard("let:" + node["name"])
        if kind == "binop" and node["op"] == "+":
            left = self.constant(node["left"], scope, file)
            right = self.constant(node["right"], scope, file)
            if left is not None and right is not None:
                return left[0] + right[0], node, file
        if kind == "template":
            texts = []
            for part in node["parts"]:
                found = part if isinstance(part, str) else self.constant(part, scope, file)
                if found is None:
                    return None
                texts.append(found if isinstance(found, str) else found[0])
            return "".join(texts), node, file
        return None


#: the result types of built-ins that do not depend on their arguments
_BUILTIN_RESULTS: dict[str, Type] = {
    "len": _maybe(NUMBER),
    "index_of": _maybe(NUMBER),
    "split": ("list", STRING),
    "type": STRING,
    "keys": ("list", STRING),
    "starts_with": BOOL,
    "ends_with": BOOL,
    "after": _maybe(STRING),
    "lower": _maybe(STRING),
    "join": STRING,
    "str": STRING,
    "stem": _maybe(STRING),
    "closest": _maybe(STRING),
    "position": _maybe(STRING),
    "file_of": _maybe(STRING),
    "any": BOOL,
    "all": BOOL,
    "subset": BOOL,
    "inside_repo": BOOL,
    "exists": BOOL,
    "is_file": BOOL,
    "list_dir": ("list", STRING),
}


def _shaped_facts(program: Node, interface: Interface) -> tuple[str, dict[str, Any]]:
    """The facts' shapes, with the data the rules declare the shape of (``Interface.data_shape``)
    marked as such — when the rules define that ``let`` as a literal; else as declared."""
    if interface.data_shape is None:
        return "", dict(interface.facts)
    name, shaped = interface.data_shape
    node = program["lets"].get(name)
    try:
        declared = _literal(node["expr"]) if node is not None else _NOT_LITERAL
    except RecursionError:
        declared = _NOT_LITERAL
    if declared is _NOT_LITERAL:
        return name, dict(interface.facts)
    return name, dict(shaped(declared))


_NOT_LITERAL = object()


def _literal(node: Node) -> Any:
    """The value a literal expression writes (strings, numbers, lists and maps of them), or
    ``_NOT_LITERAL``."""
    kind = node["t"]
    if kind == "value":
        return node["value"]
    if kind == "list":
        items = [_literal(item) for item in node["items"]]
        return _NOT_LITERAL if _NOT_LITERAL in items else items
    if kind == "map":
        pairs = {key: _literal(value) for key, value in node["pairs"]}
        return _NOT_LITERAL if any(value is _NOT_LITERAL for value in pairs.values()) else pairs
    return _NOT_LITERAL
