"""The one build step pyproject.toml cannot declare: the shipped rules, compiled into the wheel.

``build_py`` copies the packages as usual, then compiles the rules folder it copied with the
compiler it copied (Lark and RE2 are build requirements) and writes the program beside the
rules (``engine/lang/precompiled.py``), so that the installer byte-compiles it with the rest.
A wheel built from the sdist goes the same way. A source checkout holds no compiled rules: it
compiles them on first use and keeps them in the rule cache.
"""

from __future__ import annotations

import os
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithCompiledRules(build_py):
    def run(self) -> None:
        super().run()
        if self.dry_run:
            return
        sys.path.insert(0, os.path.abspath(self.build_lib))
        with tempfile.TemporaryDirectory() as cache:
            os.environ["BEEUNI_CACHE_DIR"] = cache  # Lark's grammar cache: not the builder's own folder
            from beeuni.engine.contract.rules_interface import RULES_INTERFACE
            from beeuni.engine.lang import compile_folder, precompiled

            folder = os.path.join(self.build_lib, "beeuni", "rules")
            program, source, digest = compile_folder(folder, RULES_INTERFACE, "rules")
            precompiled.write(folder, program, source, digest)


setup(cmdclass={"build_py": BuildPyWithCompiledRules})
