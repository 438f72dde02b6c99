"""The release view: what a config release holds — the files git tracks, staged ones included.

Takes the repository; gives which files git's index holds (``git_index.py``, read directly), what
each tool module imports (``module_imports.py``, read statically with tree-sitter), the
``release`` fact for the rules built from both (``facts.py``), a hard-linked copy of the
release for ``validate --modules`` to load modules in (``linked_copy.py``), the copy of the
release at one commit that a session serves (``snapshot.py``: its objects read by ``objects.py``,
each checked against its name), that commit's view for the same fact (``commit_view.py``), the
rules' run over it (``served_run.py``), and what a session serves of a release, or why it is
refused (``served.py``) — one decision for a new session, a running one and ``tools ls``. Every
git command runs through ``git.py``, which treats the repository as hostile input; the files of
git's folder read directly are read by ``git_folder.py``, never waited on.
"""
