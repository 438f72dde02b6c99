"""The zod the standard harness's plugin imports is beeuni's own: one file in its install that
imports nothing (so the plugin's import resolves no package from any folder), and the build of
the zod package-lock.json pins (``make plugin-zod``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from beeuni.daemon.plugin import ZOD
from conftest import ROOT

BUN = ROOT / "node_modules" / ".bin" / "bun"


def test_the_installed_bundle_imports_nothing() -> None:
    source = Path(ZOD).read_text()
    assert not re.search(r"""\bimport\s*[\s({"'`]|\brequire\s*\(""", source.replace("import.meta", ""))


def test_the_bundle_is_the_build_of_the_pinned_zod(tmp_path: Path) -> None:
    built = tmp_path / "plugin_zod.js"
    entry = ROOT / "daemon" / "plugin_zod_entry.ts"
    command = [str(BUN), "build", str(entry), "--target=bun", "--format=esm", "--minify", "--outfile", str(built)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=120)
    assert built.read_bytes() == (ROOT / "daemon" / "plugin_zod.js").read_bytes() == Path(ZOD).read_bytes()
