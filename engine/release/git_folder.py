"""Files of git's folder that beeuni reads itself (the index, ``commondir``, ``config``).

An agent may put a FIFO no one writes in place of any of them, and a plain ``open`` would wait on
it for ever; these are opened without waiting and read only when they are regular files.
"""

from __future__ import annotations

import os
import stat


def read_regular(path: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file, else None: a FIFO an agent put in place
    of a file of git's folder is not waited on."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        with os.fdopen(os.dup(handle), "rb") as stream:
            return stream.read()
    except OSError:
        return None
    finally:
        os.close(handle)


def common_folder(git_dir: str) -> str:
    """The git folder whose objects and configuration ``git_dir`` shares: a linked work tree's
    common folder, else ``git_dir`` itself."""
    found = read_regular(os.path.join(git_dir, "commondir"))
    if not found:
        return git_dir
    return os.path.join(git_dir, found.decode("utf-8", "surrogateescape").strip())
