"""Reading files: limits that golden files cannot hold, and positions on every value."""

from __future__ import annotations

import os
from pathlib import Path

from beeuni.engine.yaml.loader import MAX_FILE_BYTES, load_yaml
from beeuni.engine.yaml.located import LocatedConst, LocatedMap, LocatedStr
from conftest import run_beeuni


def test_every_value_keeps_its_position() -> None:
    root, problems = load_yaml(b"tools:\n  web: beeuni:web\nflag: yes\nnothing:\n", "beeuni.yaml")
    assert problems == []
    assert isinstance(root, LocatedMap)
    tools = root["tools"]
    key = next(iter(tools))
    assert isinstance(key, LocatedStr) and key.loc == ("beeuni.yaml", 2, 3)
    assert tools["web"].loc == ("beeuni.yaml", 2, 8)
    assert root["flag"] == LocatedConst(True, ("x", 0, 0)) and root["flag"].loc == ("beeuni.yaml", 3, 7)
    assert root["nothing"] == LocatedConst(None, ("x", 0, 0))


def test_a_file_past_the_size_limit_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text("imports: [big.yaml]\n")
    with open(tmp_path / "big.yaml", "w") as out:
        line = "# " + "x" * 1000 + "\n"
        out.write(line * (MAX_FILE_BYTES // len(line) + 1))
    result = run_beeuni(["validate"], cwd=tmp_path)
    assert result.stdout == "big.yaml:1:1: error[manifest/too-large] the file is larger than 4 MiB and is not read\n"
    assert result.code == 1


def test_a_fifo_import_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "beeuni.yaml").write_text("imports: [pipe.yaml]\n")
    result = run_beeuni(["validate"], cwd=tmp_path)
    assert (
        "error[manifest/import-unreadable] cannot read imported file `pipe.yaml`: not a regular file" in result.stdout
    )


def test_too_many_values_without_aliases(tmp_path: Path) -> None:
    items = ",".join(["1"] * 60_000)
    text = "".join(f"k{i}: [{items}]\n" for i in range(5))
    root, problems = load_yaml(text.encode(), "many.yaml")
    assert root is None
    assert [(p.kind, p.loc[1]) for p in problems] == [("too-many-values", 5)]
