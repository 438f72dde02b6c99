"""The contract between the engine and the rules: the facts the engine hands over, and the values
it reads back.

Takes nothing from other stages at import; gives the interface a rules folder is compiled and
checked against (``rules_interface.py``: the facts' shapes, the names read back), the shape of
each value read back, checked as it is read (``readback.py``), and ``beeuni rules check``'s
computation of the names read only when a rule set defines them (``optional_readback.py``).
"""
