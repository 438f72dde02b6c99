"""Generate a large project: N tools and M agents spread over a root manifest and K imports."""

from __future__ import annotations

import argparse
from pathlib import Path

BEEUNI = ["web_search", "image_search", "scrape_webpage", "memory", "show"]
HARNESS = ["bash", "read", "grep", "glob", "edit", "write", "task", "webfetch"]


def generate(root: Path, tools: int, agents: int, imports: int) -> list[Path]:
    """Write the project; return every manifest file written."""
    (root / "tools").mkdir(parents=True, exist_ok=True)
    (root / "config").mkdir(exist_ok=True)
    names = [f"tool_{i:05d}" for i in range(tools - len(BEEUNI))]
    for name in names:
        (root / "tools" / f"{name}.ts").write_text("export default {}\n")
    files: list[list[str]] = [[] for _ in range(imports + 1)]
    for i, name in enumerate(names):
        files[i % (imports + 1)].append(f"  {name}: tools/{name}.ts\n")
    for name in BEEUNI:
        files[0].append(f"  {name}: beeuni:{name}\n")
    agent_files: list[list[str]] = [[] for _ in range(imports + 1)]
    for i in range(agents):
        if i % 3 == 0:
            spec = "all"
        elif i % 3 == 1:
            listed = [names[(i * 7 + k) % len(names)] for k in range(8)] + HARNESS[: 1 + i % 7] + BEEUNI[: 1 + i % 5]
            spec = "[" + ", ".join(listed) + "]"
        else:
            spec = "{exclude: [" + ", ".join(HARNESS[i % 4 : i % 4 + 3]) + "]}"
        agent_files[i % (imports + 1)].append(f"  agent_{i:04d}:\n    tools: {spec}\n    secrets: [KEY_{i % 10}]\n")
    written = []
    for index in range(imports + 1):
        path = root / "beeuni.yaml" if index == 0 else root / "config" / f"part_{index:02d}.yaml"
        text = ""
        if index == 0:
            text += "imports:\n" + "".join(f"  - config/part_{k:02d}.yaml\n" for k in range(1, imports + 1))
        text += "tools:\n" + "".join(files[index])
        if agent_files[index]:
            text += "agents:\n" + "".join(agent_files[index])
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--tools", type=int, default=2000)
    parser.add_argument("--agents", type=int, default=500)
    parser.add_argument("--imports", type=int, default=10)
    options = parser.parse_args()
    generate(options.folder, options.tools, options.agents, options.imports)
