"""Editing files byte-exactly: every change is spliced in at the positions the parser reported,
and read back to check that only it changed.

Takes the located values and texts of the reading stage and the rules' findings; gives text
edits (``text_edit.py``; a new suppression comment, ``engine/suppress.py``, is one), the fixes
of the rules' ``fix`` clauses (``fixes.py``), the entry edits of ``tools eject`` and ``tools
new`` (``entries.py``), and the rewrite of opencode tool files for ``tools migrate``
(``opencode_source.py``).
"""
