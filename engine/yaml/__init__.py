"""Reading YAML, the first stage: a manifest file's bytes to located values, and back to text.

Takes a file's bytes; gives located values (``located.py``: strings, numbers, lists and maps
that know their file, line and column) read from libyaml's events by ``loader.py``, refusing
what would hurt (aliases that explode, depth, size); the text as the parser counts it
(``source_text.py``, with its encoding); where a value ends (``spans.py``);
and, for an editor, a re-read of only the entry an edit touched (``reparse.py``).
"""
