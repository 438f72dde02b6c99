"""Many projects under two rule sets: the engine of ``beeuni rules diff``.

Takes project paths and two compiled rule sets; gives, per project, what the change of the rules
does to its diagnostics and resolved tool sets (``compare.py``), run in this process, on a process
pool or on a Dask cluster (``run.py``).
"""
