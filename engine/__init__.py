"""The engine: a project's manifest through the rules, to diagnostics and the resolved tool set.

The pipeline, one stage a folder or module, in the order a run takes them:

``paths.py``      the repository: the folder that holds ``beeuni.yaml``, and every path in it
``yaml/``         reading: a manifest file's bytes to located values, and positions in its text
``manifest.py``   the merged manifest (the root file and its imports) as facts for the rules
``release/``      what a config release holds: git's index, a module's imports
``contract/``     the facts handed to the rules and the values read back, with their shapes
``lang/``         the rules language: parser, checker, code generator, cache, runtime
``project.py``    one project against one rule set: the entry point (``open_project``); the
                  diagnostics that inline comments silence are dropped (``suppress.py``)
``resolve.py``    the resolved tool set as a document; ``resolved.py``, its pydantic model
``edit/``         changing files byte-exactly: fixes, eject and new tools, migrate
``cache/``        what is kept between runs: the cache folder
``corpus/``       many projects under two rule sets (``beeuni rules diff``)

Beside them: ``shipped.py`` (the Beeuni tools' modules in the rules folder) and ``printable.py``
(text from a manifest made safe to print).
"""
