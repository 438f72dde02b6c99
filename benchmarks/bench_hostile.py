"""Cold runs of `validate`, `tools ls` and `resolve` on inputs that once were slow, and of
`validate` with rules files that once could run without end or take all the memory.

    .venv/bin/python benchmarks/bench_hostile.py [--runs 3]

Each input is written to a temporary repository; each command runs in a new process. Prints the
fastest and the slowest wall time per input and command, and the peak memory (from ``wait4``).
These once took 6 to 55 s; the promise is that every run ends well within 10 s. A
hostile rules file ends in `error[rules]` (exit 2), or in a report (the regular expression), its
peak memory within about 100 MB of a plain run's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from measure import run_once

BIN = Path(sys.executable).parent
#: the names the engine reads back, as stubs: the hostile rules files come with them
STUBS = Path(__file__).resolve().parent.parent / "tests" / "golden" / "rules-bound" / "rules" / "engine.rules"
COMMANDS = (["validate"], ["tools", "ls"], ["resolve"])


def lookalikes(count: int) -> str:
    """``count`` project tools, and an agent listing ``count`` unknown names one letter longer."""
    tools = "".join(f"  tool_{i:04d}: tools/t{i}.ts\n" for i in range(count))
    names = ", ".join(f"tool_{i:04d}x" for i in range(count))
    return f"tools:\n{tools}agents:\n  a:\n    tools: [{names}]\n"


def long_names(length: int) -> str:
    """A tool name and an unknown connector and tool name of ``length`` characters."""
    name, other = "a" * length, "a" * (length - 1) + "b"
    return f"tools:\n  ? {name}\n  : tools/x.ts\nagents:\n  x:\n    connectors: [{other}]\n    tools: [{other}]\n"


INPUTS = {
    "1,000 look-alike unknown names": lookalikes(1000),
    "2,000 look-alike unknown names": lookalikes(2000),
    "two 60,000-character names": long_names(60_000),
    "tools: [1:00:00…] (1.2 MB)": "tools: [1" + ":00" * 400_000 + "]\n",
    "secrets: [0x + 4,000 f]": "agents:\n  a:\n    secrets: [0x" + "f" * 4000 + "]\n",
}


def doubling(name: str, first: str, times: int) -> str:
    return f"let {name}0 = {first}\n" + "".join(
        f"let {name}{i} = {name}{i - 1} + {name}{i - 1}\n" for i in range(1, times + 1)
    )


def rule(clauses: str) -> str:
    return f'rule tools/hostile {{\n  severity error\n  doc "d"\n  {clauses}\n  at 1\n  message "m"\n}}\n'


HOSTILE_RULES = {
    "none (the stubs and a rule)": rule("when false"),
    "list doubled 40 times": doubling("l", "[1, 2, 3, 4]", 40) + rule("when len(l40) > 0"),
    "text doubled 40 times": doubling("s", '"abcd"', 40) + rule("when len(s40) > 0"),
    "4,096 lists of 4,096 items": doubling("l", "[1, 2, 3, 4]", 10)
    + rule("when len([[y for y in l10] for x in l10]) > 0"),
    "a map per item of a million": doubling("l", "[1, 2, 3, 4]", 18) + rule("when len([{a: x} for x in l18]) > 0"),
    "a diagnostic per item of a million": doubling("l", "[1, 2, 3, 4]", 18) + rule("for x in l18"),
    "a billion loop steps": doubling("l", "[1, 2, 3, 4]", 13) + rule("for a in l13\n  for b in l13\n  when a == 5"),
    "(a+)+$ on a million a's and a b": doubling("s", '"aaaa"', 18) + rule('when matches(s18 + "b", "(a+)+$")'),
    "3,000 functions, each calling the next": "fn f0(x) = x\n"
    + "".join(f"fn f{i}(x) = f{i - 1}(x) + 1\n" for i in range(1, 3000))
    + rule("when f2999(1) > 0"),
    "3,000 nested lists": rule("when len(" + "[" * 3000 + "1" + "]" * 3000 + ") > 0"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=("inputs", "rules"), help="time only the manifests or only the rules files")
    args = parser.parse_args()
    print(f"{'input':40} {'command':9} {'fastest':>9} {'slowest':>9} {'peak':>8}  exit")
    with tempfile.TemporaryDirectory() as temporary:
        for label, text in INPUTS.items() if args.only != "rules" else ():
            repo = Path(temporary) / str(abs(hash(label)))
            repo.mkdir()
            (repo / "beeuni.yaml").write_text(text)
            for command in COMMANDS:
                report(label, command, [[str(BIN / "beeuni"), *command, str(repo)]] * args.runs)
        print(f"\n{'hostile rules file':40} {'command':9} {'fastest':>9} {'slowest':>9} {'peak':>8}  exit")
        repo = Path(temporary) / "project"
        repo.mkdir()
        (repo / "beeuni.yaml").write_text("tools: {web_search: beeuni:web_search}\n")
        for index, (label, text) in enumerate(HOSTILE_RULES.items() if args.only != "inputs" else ()):
            rules = Path(temporary) / f"rules-{index}"
            rules.mkdir()
            (rules / "engine.rules").write_text(STUBS.read_text())
            (rules / "hostile.rules").write_text(text)
            command = [str(BIN / "beeuni"), "validate", str(repo), "--rules", str(rules)]
            report(label, ["validate"], [command] * args.runs)


def report(label: str, command: list[str], runs: list[list[str]]) -> None:
    """Run each of ``runs``; print the fastest and slowest time, the peak memory, the exits."""
    results = [run_once(run) for run in runs]
    times = [ms for ms, _, _ in results]
    peak = max(kib for _, kib, _ in results)
    codes = sorted({code for _, _, code in results})
    print(
        f"{label:40} {' '.join(command):9} {min(times):7.0f}ms {max(times):7.0f}ms "
        f"{peak / 1024:6.0f}MB  {','.join(map(str, codes))}",
        flush=True,
    )


if __name__ == "__main__":
    main()
