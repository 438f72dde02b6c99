"""Generate a corpus of projects like a platform's: many small ones, some large, some broken.

    .venv/bin/python benchmarks/generate_corpus.py FOLDER [--projects 1000] [--seed 12]

Writes FOLDER/pNNNN/ (a repository each) and FOLDER/corpus (their names, one per line, for
``beeuni rules diff --corpus``). The mix, drawn with a fixed seed so that a corpus can be made
again:

- starter-like (40 %): a few Beeuni tools, a project tool or two, one to three agents;
- no `tools:` key (10 %): agents only — every Beeuni tool, and a new one, reaches them;
- with imports (15 %): tools and agents spread over two to five imported files;
- many agents (10 %): ten to forty agents with lists, excludes, connectors and secrets;
- overrides (10 %): a Beeuni tool replaced by a module, or removed;
- errors (10 %): typos of keys and tool names, missing modules, `beeuni:` typos, tabs, YAML
  syntax errors, missing imports;
- large (5 %): 200 to 800 tools and 50 to 150 agents over five to ten imports (``generate.py``).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from pathlib import Path

from generate import generate as generate_large

BEEUNI = ["web_search", "image_search", "scrape_webpage", "memory", "show"]
HARNESS = ["bash", "read", "grep", "glob", "edit", "write", "task", "webfetch", "todowrite"]
WORDS = ["order", "invoice", "ticket", "customer", "stock", "report", "mail", "calendar", "wiki", "deploy"]


def tool_names(rng: random.Random, count: int) -> list[str]:
    return [f"{rng.choice(WORDS)}_{rng.choice(['lookup', 'sync', 'search', 'create'])}_{i}" for i in range(count)]


def write_modules(root: Path, names: list[str]) -> None:
    (root / "tools").mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / "tools" / f"{name}.ts").write_text(f"export default {{ description: '{name}' }}\n")


def tools_block(beeuni: list[str], modules: list[str]) -> str:
    lines = [f"  {name}: beeuni:{name}\n" for name in beeuni]
    lines += [f"  {name}: tools/{name}.ts\n" for name in modules]
    return "tools:\n" + "".join(lines)


def agent_block(rng: random.Random, names: list[str], count: int, rich: bool = False) -> str:
    text = "agents:\n"
    for i in range(count):
        text += f"  agent_{i}:\n"
        shape = rng.random()
        if shape < 0.3:
            text += "    tools: all\n"
        elif shape < 0.75:
            listed = rng.sample(HARNESS, rng.randint(1, 4)) + rng.sample(names, min(len(names), rng.randint(0, 3)))
            text += f"    tools: [{', '.join(listed)}]\n"
        else:
            text += f"    tools: {{exclude: [{', '.join(rng.sample(HARNESS, rng.randint(1, 3)))}]}}\n"
        if rich and rng.random() < 0.4:
            text += f"    connectors: [{rng.choice(WORDS)}_connector]\n"
        if rng.random() < 0.5:
            secrets = f"[{rng.choice(WORDS).upper()}_API_KEY]" if rng.random() < 0.7 else "all"
            text += f"    secrets: {secrets}\n"
        if rich and rng.random() < 0.3:
            text += f"    description: handles {rng.choice(WORDS)}s\n"
    return text


def starter_like(root: Path, rng: random.Random) -> None:
    modules = tool_names(rng, rng.randint(1, 2))
    write_modules(root, modules)
    beeuni = rng.sample(BEEUNI, rng.randint(3, 5))
    text = "# a small project\n" + tools_block(beeuni, modules) + agent_block(rng, beeuni + modules, rng.randint(1, 3))
    (root / "beeuni.yaml").write_text(text)


def no_tools_key(root: Path, rng: random.Random) -> None:
    (root / "beeuni.yaml").write_text(agent_block(rng, BEEUNI, rng.randint(1, 3)))


def with_imports(root: Path, rng: random.Random) -> None:
    modules = tool_names(rng, rng.randint(3, 12))
    write_modules(root, modules)
    imports = rng.randint(2, 5)
    (root / "config").mkdir()
    parts: list[list[str]] = [[] for _ in range(imports + 1)]
    for i, name in enumerate(modules):
        parts[i % (imports + 1)].append(name)
    root_text = "imports:\n" + "".join(f"  - config/part_{k}.yaml\n" for k in range(1, imports + 1))
    root_text += tools_block(BEEUNI, parts[0]) + agent_block(rng, BEEUNI + modules, rng.randint(1, 4))
    (root / "beeuni.yaml").write_text(root_text)
    for k in range(1, imports + 1):
        text = tools_block([], parts[k]) if parts[k] else "tools: {}\n"
        if rng.random() < 0.5:
            text += agent_block(rng, modules, 2).replace("agent_", f"part{k}_agent_")
        (root / "config" / f"part_{k}.yaml").write_text(text)


def many_agents(root: Path, rng: random.Random) -> None:
    modules = tool_names(rng, rng.randint(2, 8))
    write_modules(root, modules)
    text = tools_block(BEEUNI, modules) + agent_block(rng, BEEUNI + modules, rng.randint(10, 40), rich=True)
    (root / "beeuni.yaml").write_text(text)


def overrides(root: Path, rng: random.Random) -> None:
    overridden = rng.sample(BEEUNI, rng.randint(1, 2))
    kept = [name for name in BEEUNI if name not in overridden and rng.random() < 0.7]  # the rest removed
    modules = tool_names(rng, rng.randint(0, 3))
    write_modules(root, overridden + modules)
    text = tools_block(kept, modules)
    text += "".join(f"  {name}: tools/{name}.ts  # ejected from beeuni:{name}\n" for name in overridden)
    text += agent_block(rng, kept + overridden + modules, rng.randint(1, 3))
    (root / "beeuni.yaml").write_text(text)


ERRORS = [
    "tool:\n  web_search: beeuni:web_search\n",  # a typo of `tools`
    "tools:\n  web_search: beeuni:web_serch\n",  # a typo of a Beeuni tool
    "tools:\n  Lookup-Order: tools/lookup.ts\n",  # a bad name, a missing module
    "tools:\n  image_search: beeuni:web_search\n",  # a Beeuni tool under another's name
    "tools:\n\tweb_search: beeuni:web_search\n",  # a tab
    "tools: [web_search\n",  # a YAML syntax error
    "imports:\n  - config/missing.yaml\ntools:\n  memory: beeuni:memory\n",  # a missing import
    "tools:\n  show: beeuni:show\nagents:\n  writer:\n    tools: [reed, show]\n    secret: all\n",  # agent typos
]


def errors(root: Path, rng: random.Random) -> None:
    (root / "beeuni.yaml").write_text("# a project with mistakes\n" + rng.choice(ERRORS))


def large(root: Path, rng: random.Random) -> None:
    generate_large(root, rng.randint(200, 800), rng.randint(50, 150), rng.randint(5, 10))


SHAPES: list[tuple[float, Callable[[Path, random.Random], None]]] = [
    (0.40, starter_like),
    (0.10, no_tools_key),
    (0.15, with_imports),
    (0.10, many_agents),
    (0.10, overrides),
    (0.10, errors),
    (0.05, large),
]


def generate_corpus(folder: Path, projects: int, seed: int) -> dict[str, int]:
    """Write the corpus; return how many projects of each shape it holds."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    names = []
    for index in range(projects):
        pick, shape = rng.random(), SHAPES[-1][1]
        for share, candidate in SHAPES:
            if pick < share:
                shape = candidate
                break
            pick -= share
        name = f"p{index:04d}"
        (folder / name).mkdir()
        shape(folder / name, rng)
        counts[shape.__name__] = counts.get(shape.__name__, 0) + 1
        names.append(name)
    (folder / "corpus").write_text("".join(name + "\n" for name in names))
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=12)
    options = parser.parse_args()
    print(generate_corpus(options.folder, options.projects, options.seed))
