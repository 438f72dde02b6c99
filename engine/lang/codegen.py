"""Checked program → Python source → code object (the jinja2 way).

Every definition becomes a Python function inside one factory, ``make(rt)``, that the runtime
(``evaluator.py``) calls with itself:

    let NAME = expr      →  def l_NAME(): return <expr>            (run once, on first use)
    fn NAME(a) = expr    →  def f_NAME(v_a): return <expr>         (remembered when costly)
    rule id { ... }      →  def r_3(): for ...: if ...: yield (at, message)
    doc f"..."           →  def d_3(): return <template>            (rendered when compiled)

Rule variables are Python locals (``v_x``), top-level names are read from the table of values
computed so far (``V``), else through ``G("x")``, which computes them; and the
operations every expression shares are the helpers of ``values.py`` and ``builtins.py``. The code
object is cached with the program (``program_cache.py``), so a warm run neither parses nor compiles.

Two tables go with the code, so that a failure costs nothing until it happens:

- ``spans``: where each expression's Python text stands in the generated source (line, first
  and last column, in UTF-8 bytes as ``code.co_positions`` counts them) → its place in the rules
  file. When a rule fails, the runtime finds the failing instruction's span in the traceback
  and reports the rules expression, however deep in functions it is. (Kept ``marshal``-ed: a
  run without a failure never unpacks it.)
- ``weights``: how many steps evaluating a definition takes outside its loops (calls included),
  and, in the code, each loop's steps per item (``ITEMS(xs, w)``): the runtime charges them to
  the evaluation's budget, so no rule set runs without end. A loop whose body builds values
  also charges their bytes per item (``ITEMS(xs, w, bytes)``: its literals, its calls' results,
  the item of the list a comprehension builds, a rule's diagnostic), so no rule set takes all
  the machine's RAM; sizes known only at run time are charged where the value is built.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable
from typing import Any

from .builtins import BUILTINS
from .hoist import hoist
from .indexes import EQUAL, FALSE, IN, NOT_IN, TRUE, UNEQUAL
from .scopes import free_names
from .values import ENTRY, ITEM, OBJECT, SHORT_LIST

#: what a diagnostic takes: the tuple the rule yields, the engine's object, its texts
DIAGNOSTIC = 6 * OBJECT

Node = dict[str, Any]

#: The names the generated code finds in its globals (see ``evaluator.runtime_namespace``).
HELPERS = (
    *("G", "V", "A", "I", "IN", "OP", "EQ", "LT", "LE", "GT", "GE"),  # names, fields, operators
    *("ITEMS", "PAIRS", "BUILD", "BUDGET"),  # what a loop or a built value charges
    *("T", "TJ", "FIX", "MEMO", "OBS", "TN"),  # texts, fixes, memos, the repository, type names
    *("H", "GK", "SKIP", "PICK"),  # hoisted, read for a key, an item left out, a guarded loop
    # each built-in under its own name (a global read, not a table's item)
    *(f"B_{name}" for name in BUILTINS),
)
#: the helper of each ordering comparison
_ORDERINGS = {"<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}

#: around the text of an expression while the source is written: ``\x01<n>\x02 text \x03``
_OPEN, _MID, _CLOSE = "\x01", "\x02", "\x03"
#: expression kinds that cannot fail: never marked
_SAFE = frozenset({"value", "name", "list", "map", "and", "or", "not", "if", "attr"})


def compile_program(checked: Node, source_out: list[str] | None = None) -> Node:
    """The program as it is cached and run: the code object of ``make``, its tables, and what
    the runtime and the commands need to know about the definitions (no syntax trees).
    ``source_out``, if given, receives the Python source the code object was compiled from."""
    hoist(checked)
    generator = _Generator(checked)
    source, spans = _unmark(generator.generate())
    try:
        code = compile(source, "<rules>", "exec")
    except (RecursionError, SyntaxError, MemoryError):  # nested too deeply once inlined: as written
        generator = _Generator(checked, inline=False)
        source, spans = _unmark(generator.generate())
        code = compile(source, "<rules>", "exec")
    if source_out is not None:
        source_out.append(source)
    defined = {
        f"{node['t']}:{name}": [node["file"], *node["pos"]]
        for kinds in ("lets", "fns")
        for name, node in checked[kinds].items()
    }
    return {
        "code": code,
        # read only to place a failure: kept marshalled, so that a run that has none does not
        # unpack its thousands of small lists
        "spans": marshal.dumps([[*span, *generator.places[index]] for index, span in spans]),
        "weights": generator.weights,
        "rooms": generator.rooms,
        "costly": sorted(generator.costly),
        "reads": generator.reads(),
        "observes": sorted(generator.observing()),
        "loops": generator.loops,
        "varying": sorted(generator.varying),
        "positional": sorted(_positional(checked["fns"])),
        "defined": defined,
        "lets": sorted(checked["lets"]),
        "fns": {name: len(node["params"]) for name, node in checked["fns"].items()},
        "rules": [
            {**{key: rule[key] for key in ("id", "severity", "doc", "file", "pos")}, "fixable": _has_fix(rule)}
            for rule in checked["rules"]
        ],
    }


def _unmark(marked: str) -> tuple[str, list[tuple[int, list[int]]]]:
    """Remove the expression marks; where each marked expression stands: (mark, [line, first
    column, last column]), columns in UTF-8 bytes from 0, as ``co_positions`` gives them."""
    lines = []
    spans: list[tuple[int, list[int]]] = []
    for number, text in enumerate(marked.split("\n"), 1):
        if _OPEN not in text:
            lines.append(text)
            continue
        out: list[str] = []
        width = 0
        open_marks: list[tuple[int, int]] = []
        for piece in _MARKS.split(text):  # the text between the marks, and each mark
            if piece[:1] == _OPEN:
                open_marks.append((int(piece[1:-1]), width))
            elif piece == _CLOSE:
                mark, start = open_marks.pop()
                spans.append((mark, [number, start, width]))
            else:
                out.append(piece)
                width += len(piece.encode("utf-8"))
        lines.append("".join(out))
    return "\n".join(lines), spans


class _Generator:
    """Writes ``make(rt)``; records where each marked expression came from (``places``) and the
    definitions' weights."""

    def __init__(self, program: Node, inline: bool = True) -> None:
        self.program = program
        #: small functions written out where they are called (``inlined``), and how deep
        self.inline = inline
        self.inline_depth = 0
        #: inside a function written out: its parameters → the caller's locals passed for them
        self.arguments: dict[str, str] = {}
        self.places: list[list[Any]] = []
        self.file = ""
        self.fn_weights: dict[str, int] = {}
        self.fn_rooms: dict[str, int] = {}
        self.costly = _costly_functions(program["fns"])
        self.weights: dict[str, int] = {}
        self.rooms: dict[str, int] = {}  # likewise the bytes, where not 0
        #: the definition being written (``let:x``, ``fn:f``, ``rule:3``, ``doc:3``); what each
        #: one reads of the top level, which functions it calls, whether it asks the repository
        self.defining = ""
        self.names: dict[str, set[str]] = {}
        self.calls: dict[str, set[str]] = {}
        self.observers: set[str] = set()
        #: each loop that an editor's next check may redo item by item (``rule:3``: a rule's
        #: first loop; ``let:x``: a let that is a comprehension) → [the top-level name it walks,
        #: its steps per item, its bytes per item]
        self.loops: dict[str, list[Any]] = {}
        self.varying = _varying(program)
        #: each guard expression's function (``indexes.py``): its Python (marks aside) → its
        #: name, and its definition
        self.guard_functions: dict[str, str] = {}
        self.guard_lines: list[str] = []
        self.hoists = 0  # the fields read once for a scope so far (``hoisted``): `a_<n>`

    def define(self, key: str) -> None:
        self.defining = key
        self.names[key] = set()
        self.calls[key] = set()

    def _closure(self, key: str, seen: set[str]) -> set[str]:
        """The definitions ``key`` reaches through the functions it calls (itself included)."""
        for name in self.calls[key]:
            called = f"fn:{name}"
            if called not in seen:
                seen.add(called)
                self._closure(called, seen)
        return seen

    def reads(self) -> dict[str, list[str]]:
        """Each let's, function's and rule's top-level names (facts and lets), read by itself or
        by a function it calls: what its value can depend on, besides its arguments and the
        repository. An editor's next check keeps what depends on nothing that changed."""
        return {
            key: sorted(set().union(*(self.names[reached] for reached in self._closure(key, {key}))))
            for key in self.names
            if not key.startswith("doc:")
        }

    def observing(self) -> set[str]:
        """The definitions that look at the repository, themselves or through a function."""
        return {key for key in self.names if self.observers & self._closure(key, {key})}

    def generate(self) -> str:
        out = _Writer()
        out.line("def make(rt):")
        out.indent += 1
        for name, node in self.program["lets"].items():
            self.file = node["file"]
            self.define(f"let:{name}")
            out.line(f"def {_let_function(name)}():")
            out.line(f"    return {self.expr(node['expr'], set())}")
            # a hoisted comprehension's steps and bytes are charged where it is read
            self.weights[f"let:{name}"] = 0 if name[0] == "#" else self.weight(node["expr"])
            self._room(f"let:{name}", 0 if name[0] == "#" else self.room(node["expr"]))
            self.each_item(out, name, node["expr"])
        for name, node in self.program["fns"].items():
            self.file = node["file"]
            self.define(f"fn:{name}")
            params = node["params"]
            out.line(f"def f_{name}({', '.join('v_' + p for p in params)}):")
            out.indent += 1
            if name in self.costly and self.fn_room(name):  # built when not remembered
                # `BUILD(n)` written out: a call less each time the function runs
                out.line(f"BUDGET.room -= {self.fn_room(name)}")
                out.line("if BUDGET.room < 0: BUILD(0)")
            body = node["body"]
            scope = set(params)
            lines = []
            if body["t"] == "block":
                for local, value in body["lets"]:
                    lines.append(f"v_{local} = {self.expr(value, scope)}")
                    scope.add(local)
                body = body["expr"]
            lines.append(f"return {self.expr(body, scope)}")
            if not scope.difference(params).intersection(params):  # no `let` rebinds a parameter
                lines = self.hoisted(["v_" + param for param in params], lines, 2)
            for line in lines:
                out.line(line)
            out.indent -= 1
            out.line(f"f_{name} = MEMO({name!r}, f_{name})")
            self.weights[f"fn:{name}"] = self.fn_weight(name)
            if name not in self.costly:
                self._room(f"fn:{name}", self.fn_room(name))
        docs = []
        for index, rule in enumerate(self.program["rules"]):
            self.file = rule["file"]
            self.define(f"rule:{index}")
            self.rule(out, index, rule)
            if isinstance(rule["doc"], dict):  # a template: rendered once, when the rules are compiled
                self.define(f"doc:{index}")
                out.line(f"def d_{index}():")
                out.line(f"    return {self.expr(rule['doc'], set())}")
                docs.append(index)
        out.lines.extend(self.guard_lines)
        lets = ", ".join(f"{name!r}: {_let_function(name)}" for name in self.program["lets"])
        fns = ", ".join(f"{name!r}: f_{name}" for name in self.program["fns"])
        rules = ", ".join(f"r_{index}" for index in range(len(self.program["rules"])))
        templates = ", ".join(f"{index}: d_{index}" for index in docs)
        items = ", ".join(f"{key!r}: {_item_function(key)}" for key in self.loops)
        out.line(f"return {{{lets}}}, {{{fns}}}, [{rules}], {{{templates}}}, {{{items}}}")
        return out.text()

    def rule(self, out: _Writer, index: int, rule: Node) -> None:
        """A rule's ``for`` clauses are its loops: each charges the steps of what follows it, up
        to the next loop, per item; what comes before the first loop is charged when it starts.

        The bytes its clauses build are charged likewise, except that what follows a ``when``
        is charged only when the condition holds (``BUILD``, at the top of the ``if``), so the
        last part, with the diagnostic, when one is found.

        A rule that starts with ``for x in NAME`` (a top-level value) also gets ``r_<index>_item(x)``,
        the rest of the rule for one item: an editor's next check runs it only for the items
        that are new (``evaluator.py``); ``loops`` has the name, the weight and the bytes of
        each item."""
        steps = rule["steps"]
        segments, room = self.rule_function(out, f"r_{index}()", steps, set(), rule)
        self.weights[f"rule:{index}"] = segments[0]
        self._room(f"rule:{index}", room)
        first = steps[0] if steps else None
        if first is not None and first["t"] == "for" and len(first["vars"]) == 1 and first["iter"]["t"] == "name":
            self.define(f"item:{index}")
            header = f"{_item_function(f'rule:{index}')}(v_{first['vars'][0]})"
            _, each = self.rule_function(out, header, steps[1:], set(first["vars"]), rule, collect=True)
            self.loops[f"rule:{index}"] = [first["iter"]["name"], max(segments[1], 1), each]

    def each_item(self, out: _Writer, name: str, node: Node) -> None:
        """For a ``let`` that is ``[e for x in NAME if c]`` (NAME a top-level value): the
        function of one item, its element or ``SKIP``, so that an editor's next check computes
        only the items that are new (``evaluator.py``)."""
        if node["t"] != "comp" or len(node["vars"]) != 1 or node["iter"]["t"] != "name":
            return
        scope = set(node["vars"])
        element = self.expr(node["element"], scope)
        kept = f" if {self.truth(node['cond'], scope)} else SKIP" if node["cond"] is not None else ""
        out.line(f"def {_item_function(f'let:{name}')}(v_{node['vars'][0]}):")
        for line in self.hoisted([f"v_{node['vars'][0]}"], [f"return {element}{kept}"], 2):
            out.line(f"    {line}")
        weight = max(self.weight(node["element"]) + self.weight(node["cond"]), 1)
        room = ITEM + self.room(node["element"]) + self.room(node["cond"])
        self.loops[f"let:{name}"] = [node["iter"]["name"], weight, room]

    def rule_function(
        self, out: _Writer, header: str, steps: list[Node], scope: set[str], rule: Node, collect: bool = False
    ) -> tuple[list[int], int]:
        """``def header`` running ``steps`` and yielding the rule's findings (returning their
        list, when ``collect``: cheaper than a generator for a function run once per item); the
        steps before its first loop, then those of each loop's body; the bytes built before its
        first loop (or ``when``)."""
        out.line(f"def {header}:")
        depth = out.indent
        out.indent += 1
        if collect:
            out.line("found_ = []")
        scope = set(scope)
        segments = [0]  # the steps before the first loop, then those of each loop's body
        loops: list[int] = []  # the line of each loop, whose weight is filled in at the end
        rooms = [0]  # the bytes built from each charging point on: the start, a loop, a `when`
        points: list[int] = []  # the line where each after the start is charged
        for position, step in enumerate(steps):
            kind = step["t"]
            if kind == "for":
                segments[-1] += self.weight(step["iter"])
                rooms[-1] += self.room(step["iter"])
                segments.append(0)
                loops.append(len(out.lines))
                points.append(len(out.lines))
                rooms.append(0)
                guarded = position == 0 and len(steps) > 1 and steps[1]["t"] == "when" and step["iter"]["t"] == "name"
                guards = self.guards(step, steps[1]["expr"], scope) if guarded else None
                out.line(self.loop(step["vars"], self.expr(step["iter"], scope), "@WEIGHT@", step, guards) + ":")
                scope |= set(step["vars"])
            elif kind == "let_clause":
                segments[-1] += self.weight(step["expr"])
                rooms[-1] += self.room(step["expr"])
                self.statement(out, scope, f"v_{step['name']} = {self.expr(step['expr'], scope)}")
                scope.add(step["name"])
                continue
            else:
                segments[-1] += self.weight(step["expr"])
                rooms[-1] += self.room(step["expr"])
                self.statement(out, scope, f"if {self.truth(step['expr'], scope)}:")
                points.append(len(out.lines))
                rooms.append(0)
                out.line("    @BUILD@")
            out.indent += 1
        segments[-1] += self.weight(rule["at"]) + self.weight(rule["message"]) + self.weight(rule["fix"])
        rooms[-1] += self.room(rule["at"]) + self.room(rule["message"]) + self.room(rule["fix"]) + DIAGNOSTIC
        # a fix is text, or null for no fix here
        fix = f"FIX({self.expr(rule['fix'], scope)})" if _has_fix(rule) else "None"
        finding = f"({self.expr(rule['at'], scope)}, T({self.expr(rule['message'], scope)}), {fix})"
        out.line(f"found_.append({finding})" if collect else f"yield {finding}")
        if collect:
            out.indent = depth + 1
            out.line("return found_")
        out.indent = depth
        weights = dict(zip(loops, segments[1:], strict=True))
        for line, room in zip(points, rooms[1:], strict=True):
            if line in weights:
                charge = f"{max(weights[line], 1)}, {room}" if room else str(max(weights[line], 1))
                out.lines[line] = out.lines[line].replace("@WEIGHT@", charge)
            else:  # a line of its own (`pass` costs nothing: the line numbers stay as they are)
                out.lines[line] = out.lines[line].replace("@BUILD@", f"BUILD({room})" if room else "pass")
        return segments, rooms[0]

    def statement(self, out: _Writer, scope: set[str], text: str) -> None:
        """A line of a rule, after the fields of its locals that it reads twice or more, each
        read once (``hoisted``)."""
        for line in self.hoisted(["v_" + name for name in sorted(scope)], [text], 2):
            out.line(line)

    def _room(self, key: str, room: int) -> None:
        if room:
            self.rooms[key] = room

    def loop(self, names: list[str], source: str, weight: str, node: Node, guards: str | None = None) -> str:
        """``for x in xs`` walks items; ``for k, v in m`` a map's entries (a list's index and
        item). The walk is charged to the budget (``weight``: the steps per item, and the bytes
        per item if any), and marked as ``node``; with ``guards``, only the items they select
        (``indexes.py``)."""
        if guards is not None:
            return f"for v_{names[0]} in {self.mark(node, f'PICK({source}, {guards}, {weight})')}"
        if len(names) == 1:
            return f"for v_{names[0]} in {self.mark(node, f'ITEMS({source}, {weight})')}"
        return f"for v_{names[0]}, v_{names[1]} in {self.mark(node, f'PAIRS({source}, {weight})')}"

    # weights ---------------------------------------------------------------------------------

    def fn_weight(self, name: str) -> int:
        return self._over_body(name, self.weight, self.fn_weights)

    def fn_room(self, name: str) -> int:
        return self._over_body(name, self.room, self.fn_rooms)

    def _over_body(self, name: str, measure: Callable[[Any], int], known: dict[str, int]) -> int:
        """``measure`` summed over function ``name``'s body (a block's lets and its expression),
        kept in ``known``."""
        if name not in known:
            body = self.program["fns"][name]["body"]
            parts = [*(value for _, value in body["lets"]), body["expr"]] if body["t"] == "block" else [body]
            known[name] = sum(measure(part) for part in parts)
        return known[name]

    def room(self, node: Any) -> int:
        """The bytes of values evaluating ``node`` once builds, as far as its text tells, outside
        the loops it holds: a literal list or map, the result of an operator, a call or a
        template (their contents, if sized at run time, are charged there), a function's body
        (a remembered function's charges itself, when it runs: a call answered from the memo
        builds only the memo's entry), the larger of a conditional's branches."""
        if not isinstance(node, dict):
            return sum(self.room(item) for item in children(node))
        kind = node.get("t")
        if kind == "hoisted":
            return self.room(node["expr"])
        if kind == "comp":
            return OBJECT + self.room(node["iter"])
        if kind == "if":
            return self.room(node["cond"]) + max(self.room(node["then"]), self.room(node["else"]))
        total = 0
        if kind == "list":
            total = OBJECT + ITEM * len(node["items"])
        elif kind == "map":
            total = OBJECT + ENTRY * len(node["pairs"])
        elif kind in ("binop", "template"):
            total = OBJECT  # a number, or the object whose contents are charged when built
        elif kind == "call":
            name = node["fn"]
            if name in self.costly:
                total = 2 * OBJECT  # its entry in the memo; the body charges itself
            elif name in self.program["fns"]:
                total = self.fn_room(name)
            elif name in _NEW_OBJECT:
                total = OBJECT
        return total + sum(self.room(child) for child in children(node))

    def weight(self, node: Any) -> int:
        """The steps of evaluating ``node`` once, outside the loops it holds (which charge
        themselves, per item); a call costs its function's weight. The checker has ruled out
        cycles, so this ends."""
        if not isinstance(node, dict):
            return sum(self.weight(item) for item in children(node))
        if node.get("t") == "hoisted":
            return self.weight(node["expr"])
        if node.get("t") == "comp":
            return 1 + self.weight(node["iter"])
        total = 1 + sum(self.weight(child) for child in children(node))
        if node.get("t") == "call" and node["fn"] in self.program["fns"]:
            total += self.fn_weight(node["fn"])
        return total

    # expressions -----------------------------------------------------------------------------

    def expr(self, node: Node, scope: set[str]) -> str:
        text = self.plain(node, scope)
        return text if node["t"] in _SAFE else self.mark(node, text)

    def truth(self, node: Node, scope: set[str]) -> str:
        """``node`` where only its truth counts (a condition): ``and`` and ``or`` without the
        ``bool()`` that makes their value true or false."""
        kind = node["t"]
        if kind in ("and", "or"):
            return f"({self.truth(node['left'], scope)} {kind} {self.truth(node['right'], scope)})"
        if kind == "call" and node["fn"] not in BUILTINS:
            inlined = self.inlined(node["fn"], node["args"], scope, self.truth)
            if inlined is not None:
                self.calls[self.defining].add(node["fn"])
                return self.mark(node, inlined)
        return self.expr(node, scope)

    def constants(self, node: Node, scope: set[str]) -> str | None:
        """``_constants`` of a literal list, or of the literal list a ``let`` is (``x in
        BEEUNI_TOOLS``: the list is not built to be searched; the name is still read, for an
        editor's next check)."""
        if node["t"] == "name" and node["name"] not in scope and node["name"] in self.program["lets"]:
            found = _constants(self.program["lets"][node["name"]]["expr"])
            if found is not None:
                self.names[self.defining].add(node["name"])
            return found
        return _constants(node)

    def guards(self, loop: Node, condition: Node, scope: set[str]) -> str | None:
        """The Python of the guards (``indexes.py``) of a loop over one variable whose items
        must pass ``condition``: a tuple of (the function of ``E``, its kind, ``K``), or None.
        A condition after one that could fail is no guard: it would leave out items whose
        condition fails, and not say so."""
        if len(loop["vars"]) != 1:
            return None
        var, found = loop["vars"][0], []
        for conjunct in _conjuncts(condition):
            guard = _guard(conjunct, var, scope)
            if guard is not None:
                saved, self.arguments = self.arguments, {}
                try:
                    body = self.expr(guard[0], {var})
                finally:
                    self.arguments = saved
                name = self.guard_functions.get(_MARKS.sub("", f"{var} {body}"))
                if name is None:
                    name = self.guard_functions[_MARKS.sub("", f"{var} {body}")] = f"e_{len(self.guard_functions)}"
                    self.guard_lines.append(f"    def {name}(v_{var}):\n        return {body}")
                found.append(f"({name}, {guard[1]}, {self.expr(guard[2], scope)}), ")
            if not _cannot_fail(conjunct, self.program):
                break
        return f"({''.join(found)})" if found else None

    def keyed(self, node: Node, scope: set[str]) -> bool:
        """Whether ``node`` is a top-level value that can change from one manifest to another,
        read by a key (``keyed_read``): an editor's next check keeps what read other keys of it."""
        name = node["name"] if node["t"] == "name" else None
        if name is None or name in scope or (name in self.program["lets"] and name not in self.varying):
            return False
        self.names[self.defining].add(name)
        return True

    def keyed_read(self, name: str, key: str) -> str:
        """The Python of top-level value ``name`` read for ``key`` (``keyed``): from the table
        when computed, else through ``GK``, which an editor's check records as a read of the key
        alone (the table is then empty)."""
        return f"(V[{name!r}] if {name!r} in V else GK({name!r}, {key}))"

    def local(self, name: str) -> str:
        """The Python of a local (a parameter, a loop variable, a ``let`` of a rule or block)."""
        return self.arguments.get(name, f"v_{name}")

    def inlined(
        self, name: str, args: list[Node], scope: set[str], write: Callable[[Node, set[str]], str] | None = None
    ) -> str | None:
        """A call of a small function, written out in its caller: a Python call costs more than
        the few operations of ``f(t) = after(t.value, PREFIX)``. Only a function that is not
        remembered, whose body is one expression of at most ``_INLINE_SIZE`` nodes, called with
        locals (so that every argument is evaluated once, before the body, as in a call); at
        most ``_INLINE_DEPTH`` deep. The body's expressions keep their own places (a failure
        inside is reported in the function, as from a call), and the steps and bytes charged
        are the call's: they are counted from the syntax tree, not from the code. ``write``:
        how to write the body (``truth`` where only its truth counts)."""
        node = self.program["fns"][name]
        body, params = node["body"], node["params"]
        if (
            not self.inline
            or self.inline_depth >= _INLINE_DEPTH
            or name in self.costly
            or body["t"] == "block"
            or _size(body) > _INLINE_SIZE
            or not all(arg["t"] == "name" and arg["name"] in scope for arg in args)
        ):
            return None
        saved = self.file, self.arguments
        self.file = node["file"]
        self.arguments = {param: self.local(arg["name"]) for param, arg in zip(params, args, strict=True)}
        self.inline_depth += 1
        try:
            return f"({(write or self.expr)(body, set(params))})"
        finally:
            self.file, self.arguments = saved
            self.inline_depth -= 1

    def hoisted(self, owners: list[str], texts: list[str], least: int) -> list[str]:
        """``texts`` (the Python of one scope: a function's lines, a comprehension's element and
        condition) with each field of a local of ``owners`` that they read at least ``least``
        times read once, before them: a line ``a_<n> = <the read>`` each, then ``texts`` reading
        ``a_<n>``. A field's read cannot fail and has no effect (``values.get_attr``), so reading
        it first, even where the expression would not, gives the same; its steps are counted from
        the syntax tree, as before. Nothing is hoisted from texts holding a comprehension: its
        variable could be one of ``owners`` rebound."""
        if any(" for " in text for text in texts):
            return texts
        joined = "\n".join(texts)
        reads = []
        for owner in owners:
            for name in dict.fromkeys(_FIELD.findall(joined)):
                read = _local_attr(owner, name)
                if joined.count(read) >= least:
                    local = f"a_{self.hoists}"
                    self.hoists += 1
                    reads.append(f"{local} = {read}")
                    texts = [
                        text.replace(read, local).replace(f"B_type({local})", _type_of_local(local)) for text in texts
                    ]
                    joined = joined.replace(read, local)
        return [*reads, *texts]

    def mark(self, node: Node, text: str) -> str:
        """``text``, marked as the Python of ``node``."""
        self.places.append([self.file, *node["pos"]])
        return f"{_OPEN}{len(self.places) - 1}{_MID}{text}{_CLOSE}"

    def plain(self, node: Node, scope: set[str]) -> str:
        expr = self.expr
        kind = node["t"]
        if kind == "value":
            return repr(node["value"])
        if kind == "name":
            name = node["name"]
            if name in scope:
                return self.local(name)
            self.names[self.defining].add(name)
            let = self.program["lets"].get(name)
            if let is not None and let["expr"]["t"] == "value" and type(let["expr"]["value"]) in _SCALARS:
                return repr(let["expr"]["value"])  # a constant (`let PREFIX = "beeuni:"`): written in
            # a value already computed is read from the table itself, without a call
            return f"(V[{name!r}] if {name!r} in V else G({name!r}))"
        if kind == "hoisted":
            self.names[self.defining].add(node["name"])
            return f"H({node['name']!r})"
        if kind == "list":
            return "[" + "".join(expr(item, scope) + ", " for item in node["items"]) + "]"
        if kind == "map":
            return "{" + "".join(f"{key!r}: {expr(value, scope)}, " for key, value in node["pairs"]) + "}"
        if kind == "template":
            parts = [repr(part) if isinstance(part, str) else f"T({expr(part, scope)})" for part in node["parts"]]
            return "TJ(''.join((" + "".join(part + ", " for part in parts) + ")))"
        if kind == "attr":
            obj = node["obj"]
            if obj["t"] == "name" and obj["name"] in scope:  # a local: read it twice, skip a call
                return _local_attr(self.local(obj["name"]), node["name"])
            if self.keyed(obj, scope):
                return f"A({self.keyed_read(obj['name'], repr(node['name']))}, {node['name']!r})"
            return f"A({expr(obj, scope)}, {node['name']!r})"
        if kind == "index":
            if self.keyed(node["obj"], scope):
                key = expr(node["key"], scope)
                return f"I({self.keyed_read(node['obj']['name'], key)}, {key})"
            return f"I({expr(node['obj'], scope)}, {expr(node['key'], scope)})"
        if kind == "if":
            cond, then, other = self.truth(node["cond"], scope), expr(node["then"], scope), expr(node["else"], scope)
            return f"({then} if {cond} else {other})"
        if kind in ("and", "or"):
            return f"bool{self.truth(node, scope)}"
        if kind == "not":
            return f"(not {self.truth(node['expr'], scope)})"
        if kind == "compare":
            left, right = expr(node["left"], scope), expr(node["right"], scope)
            if node["op"] in ("==", "!=") and "None" in (left, right):  # the common `x == null`
                # a located null equals None too, and a tuple's `in` tests identity first
                operator = "in" if node["op"] == "==" else "not in"
                return f"({left if right == 'None' else right} {operator} (None,))"
            if node["op"] in ("==", "!=") and _is_string_literal(node["left"], node["right"]):
                return f"({left} {node['op']} {right})"  # Python's own == is exact against a string
            if node["op"] == "==":
                return f"EQ({left}, {right})"
            if node["op"] == "!=":
                return f"(not EQ({left}, {right}))"
            return f"{_ORDERINGS[node['op']]}({left}, {right})"
        if kind == "in":
            constants = self.constants(node["right"], scope)
            if constants is not None:  # `x in ["a", null]`: a tuple's `in`, as a short list's
                return f"({expr(node['left'], scope)} in ({constants}))"
            return f"IN({expr(node['right'], scope)}, {expr(node['left'], scope)})"
        if kind == "binop":
            return f"OP({node['op']!r}, {expr(node['left'], scope)}, {expr(node['right'], scope)})"
        if kind == "comp":
            names = node["vars"]
            inner = scope | set(names)
            element = expr(node["element"], inner)
            body = self.weight(node["element"]) + self.weight(node["cond"])
            room = ITEM + self.room(node["element"]) + self.room(node["cond"])  # the item of the list built
            guards = None
            if self.defining.startswith("fn:") and node["cond"] is not None and not self.arguments:
                closed = free_names(node["iter"])[0].isdisjoint(scope)
                guards = self.guards(node, node["cond"], scope) if closed else None
            loop = self.loop(names, expr(node["iter"], scope), f"{max(body, 1)}, {room}", node, guards)
            condition = f" if {self.truth(node['cond'], inner)}" if node["cond"] is not None else ""
            hoisted = self.hoisted(["v_" + name for name in names], [element, condition], 3)
            if len(hoisted) > 2:  # `for a_0, a_1, in ((x.name, x.value,),)`: each read once per item
                *reads, element, condition = hoisted
                targets = "".join(read.split(" = ", 1)[0] + ", " for read in reads)
                values = "".join(read.split(" = ", 1)[1] + ", " for read in reads)
                loop += f" for {targets.rstrip()} in (({values.rstrip()}),)"
            return f"[{element} {loop}{condition}]"
        if kind == "call":
            name = node["fn"]
            if name not in BUILTINS:
                self.calls[self.defining].add(name)
                inlined = self.inlined(name, node["args"], scope)
                if inlined is not None:
                    return inlined
                return f"f_{name}({', '.join(expr(arg, scope) for arg in node['args'])})"
            args = [expr(arg, scope) for arg in node["args"]]
            if BUILTINS[name][3] == "observer":
                self.observers.add(self.defining)
            if BUILTINS[name][3]:
                args.insert(0, "OBS")
            if name == "type" and _LOCAL.fullmatch(args[0]):
                return _type_of_local(args[0])
            return f"B_{name}({', '.join(args)})"
        raise AssertionError(f"unknown node {kind}")


#: built-ins whose result is a new object of a size the budget is not told (a number, a short
#: text); the others give a value that exists already, or charge what they build
_NEW_OBJECT = frozenset({"len", "position"})


#: the most nodes the body of a function written out where it is called may have, and how many
#: such functions may be written out one in another
_INLINE_SIZE, _INLINE_DEPTH = 16, 3


def _conjuncts(node: Node) -> list[Node]:
    """The conditions a condition joins with ``and``, in order."""
    return [*_conjuncts(node["left"]), *_conjuncts(node["right"])] if node["t"] == "and" else [node]


def _guard(node: Node, var: str, scope: set[str]) -> tuple[Node, int, Node] | None:
    """A condition as a guard of the loop variable ``var``: (``E``, kind, ``K``)."""
    kind = node["t"]
    none = {"t": "value", "value": None, "pos": node["pos"]}
    if kind == "not" and node["expr"]["t"] == "in":
        return _guarded(node["expr"]["left"], var, scope, NOT_IN, node["expr"]["right"])
    if kind == "not":
        return _guarded(node["expr"], var, scope, FALSE, none)
    if kind == "compare" and node["op"] in ("==", "!="):
        which = EQUAL if node["op"] == "==" else UNEQUAL
        return _guarded(node["left"], var, scope, which, node["right"]) or _guarded(
            node["right"], var, scope, which, node["left"]
        )
    if kind == "in":
        return _guarded(node["left"], var, scope, IN, node["right"])
    return _guarded(node, var, scope, TRUE, none)


def _guarded(expression: Node, var: str, scope: set[str], kind: int, key: Node) -> tuple[Node, int, Node] | None:
    """(``expression``, ``kind``, ``key``) when ``expression`` reads ``var`` and no other local,
    and ``key`` is a literal, a name other than ``var``, or a field of one."""
    names = free_names(expression)[0]
    if var not in names or not names.isdisjoint(scope - {var}):
        return None
    simple = key
    while simple["t"] == "attr":
        simple = simple["obj"]
    if simple["t"] not in ("value", "name") or (simple["t"] == "name" and simple["name"] == var):
        return None
    return expression, kind, key


def _cannot_fail(node: Node, program: Node) -> bool:
    """Whether evaluating a condition cannot fail, whatever its values (a budget aside)."""
    kind = node["t"]
    if kind in ("value", "name", "attr", "index"):
        return all(_cannot_fail(part, program) for part in (node.get("obj"), node.get("key")) if part is not None)
    if kind in ("and", "or") or (kind == "compare" and node["op"] in ("==", "!=")):
        return _cannot_fail(node["left"], program) and _cannot_fail(node["right"], program)
    if kind == "not":
        return _cannot_fail(node["expr"], program)
    if kind == "in":  # in a literal list, written out or a let's
        right, lets = node["right"], program["lets"]
        listed = right["t"] == "list" or (
            right["t"] == "name" and lets.get(right["name"], {}).get("expr", {}).get("t") == "list"
        )
        return listed and _cannot_fail(node["left"], program)
    if kind == "call" and not all(_cannot_fail(arg, program) for arg in node["args"]):
        return False
    if kind == "call" and node["fn"] in program["fns"]:  # (the checker ruled out cycles)
        body = program["fns"][node["fn"]]["body"]
        return body["t"] != "block" and _cannot_fail(body, program)
    return kind == "call" and node["fn"] in ("type", "len")


def _item_function(key: str) -> str:
    """The Python name of the function of one item of a loop of ``loops``."""
    kind, name = key.split(":", 1)
    return f"r_{name}_item" if kind == "rule" else f"{_let_function(name)}_item"


def _positional(fns: dict[str, Node]) -> set[str]:
    """The functions that read where a value stands (``position``, ``file_of``) or make a value
    that stands there (``after``), themselves or through the functions they call: their results
    are not shared between equal arguments read elsewhere (``memo.py``)."""
    calls = {name: free_names(node["body"])[1] for name, node in fns.items()}
    return _spread({name for name, called in calls.items() if called & {"position", "file_of", "after"}}, calls)


def _varying(program: Node) -> set[str]:
    """The lets whose value can differ from one manifest to another: those that read a fact,
    themselves or through the functions they call or the lets they read."""
    lets, fns = program["lets"], program["fns"]
    reads: dict[str, set[str]] = {}  # each let's and function's top-level names and functions
    for name, node in lets.items():
        names, calls = free_names(node["expr"])
        reads[name] = names | (calls & fns.keys())
    for name, node in fns.items():
        names, calls = free_names(node["body"])
        reads[name] = names - set(node["params"]) | (calls & fns.keys())
    facts = {name for names in reads.values() for name in names if name not in lets and name not in fns}
    return _spread(facts, reads) & set(lets)


def _spread(found: set[str], reads: dict[str, set[str]]) -> set[str]:
    """``found`` with every name whose ``reads`` meet it, directly or through another (in place)."""
    grown = True
    while grown:
        grown = False
        for name, names in reads.items():
            if name not in found and not names.isdisjoint(found):
                found.add(name)
                grown = True
    return found


def _let_function(name: str) -> str:
    """The Python name of a ``let``'s function: ``l_NAME``, ``h_<n>`` for the hoisted ``#<n>``."""
    return f"h_{name[1:]}" if name[0] == "#" else f"l_{name}"


def _local_attr(local: str, name: str) -> str:
    """The Python of ``x.name`` for a local ``x``: a map's ``get`` written out (``get_attr``
    otherwise), read twice rather than a call."""
    return f"({local}.get({name!r}) if {local}.__class__ is dict else A({local}, {name!r}))"


def _type_of_local(local: str) -> str:
    """The Python of ``type(x)`` for a local ``x``: ``type_name``'s table read here, a call less
    for the common classes."""
    return f"(TN.get({local}.__class__) or B_type({local}))"


#: the marks around an expression's Python (``_unmark``)
_MARKS = re.compile("(\x01\\d+\x02|\x03)")
#: the field names ``_local_attr`` reads (the rules' names are identifiers)
_FIELD = re.compile(r"\.get\('(\w+)'\) if ")
#: the Python of a local: a variable, a parameter, a field read once (``hoisted``)
_LOCAL = re.compile(r"[av]_\w+")


def children(node: Any) -> list[Any]:
    """The nodes and lists of nodes directly in ``node`` (an expression node, or a list of them
    such as a call's arguments): the one walk over the syntax tree that every measure shares."""
    if isinstance(node, list):
        return [item for item in node if isinstance(item, dict | list)]
    if isinstance(node, dict):
        return [value for key, value in node.items() if key not in ("t", "pos") and isinstance(value, dict | list)]
    return []


def _size(node: Any) -> int:
    """The number of expression nodes in ``node``."""
    return (1 if isinstance(node, dict) else 0) + sum(_size(child) for child in children(node))


def _constants(node: Node) -> str | None:
    """The items of a literal list of fewer than ``SHORT_LIST`` strings, numbers, booleans and nulls, as the
    Python of a tuple's items; None for any other expression. ``in`` such a list is Python's
    own ``in`` (``SetCache.contains`` of a short list; a located value compares like its own)."""
    if node["t"] != "list" or len(node["items"]) >= SHORT_LIST:
        return None
    if not all(item["t"] == "value" and type(item["value"]) in _SCALARS for item in node["items"]):
        return None
    return "".join(repr(item["value"]) + ", " for item in node["items"])


_SCALARS = (str, int, float, bool, type(None))


def _has_fix(rule: Node) -> bool:
    """Whether a rule has a ``fix`` clause (the checker gives one without it a null)."""
    fix = rule["fix"]
    return not (fix["t"] == "value" and fix["value"] is None)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.indent = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _is_string_literal(*nodes: Node) -> bool:
    return any(node["t"] == "value" and isinstance(node["value"], str) for node in nodes)


#: the built-ins that build a list or map as long as the one they are given
_BUILDING = frozenset({"keys", "values", "sorted", "unique", "flatten", "group_by", "index_by"})
#: what a condition is made of (``_costly_functions``)
_CONDITION_KINDS = frozenset({"and", "or", "not", "compare", "in", "name", "value", "attr", "list", "call"})


def _costly_functions(fns: dict[str, Node]) -> set[str]:
    """The functions worth remembering: those whose body builds a list or map (a comprehension,
    a set operation, a built-in such as ``index_by``) or looks at the repository, and those that
    call such a function, directly or through another (the checker has ruled out cycles).

    But not a condition on its one parameter over what such functions give for it as it is
    (``module_ok(t) = is_module(t) and module_problem(t) == null``): those functions find their
    answers under the same key, so a memo of its own only adds a look-up before theirs; it is
    written out where it is called, when small (``inlined``). The rules ask such conditions of
    every tool of a large manifest. (A function of several parameters stays remembered: its
    memo's key is a pair either way, and measured, leaving it out gained nothing.)"""
    verdicts: dict[str, bool] = {}

    def builds(node: Any) -> bool:
        kind = node.get("t") if isinstance(node, dict) else None
        if kind in ("comp", "binop"):  # builds a list (or a string)
            return True
        if kind == "call" and node["fn"] not in fns:
            name = node["fn"]
            if BUILTINS[name][3] == "observer" or name in _BUILDING:
                return True
        return any(builds(child) for child in children(node))

    def condition_on(node: Node, param: str) -> bool:
        """Whether ``node`` only tests and compares, calling the costly functions with ``param``."""
        if node["t"] not in _CONDITION_KINDS:
            return False
        if node["t"] == "call" and node["fn"] in fns and is_costly(node["fn"]):
            return all(arg["t"] == "name" and arg["name"] == param for arg in node["args"])
        items = [item for child in children(node) for item in (child if isinstance(child, list) else [child])]
        return all(condition_on(item, param) for item in items)

    def is_costly(name: str) -> bool:
        if name not in verdicts:
            body, params = fns[name]["body"], fns[name]["params"]
            calls_costly = any(is_costly(called) for called in free_names(body)[1] & fns.keys())
            verdicts[name] = builds(body) or (calls_costly and not (len(params) == 1 and condition_on(body, params[0])))
        return verdicts[name]

    return {name for name in fns if is_costly(name)}
