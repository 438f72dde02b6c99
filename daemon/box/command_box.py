"""The box of the commands the standard harness's model runs: a second box inside opencode's.

opencode itself must write its own data — its database (the conversation, and per session the
permission rules it applies), the programs it downloads and runs (``bin/``) — and its model's
commands are its children: in opencode's box alone, a command could rewrite what opencode reads
and runs next, for every agent of the session. opencode starts every command of its shell tool as
``$SHELL -c …`` (a login shell for some shells' names). ``beeuni sessions``
sets ``SHELL`` to a launcher written for the turn, named after the real shell, which

* gives the command an environment of its own: the search path, the locale and the terminal of
  opencode's, and a home and a temporary folder of its own — nothing else, so not the password
  of opencode's server (with which a command could prompt any agent), the credentials opencode
  was given, the providers' keys or the token's hand-off; and nothing a command writes in its
  home is read by opencode or by the git opencode runs;
* puts itself in a Landlock domain nested in opencode's (a nested domain only takes rights
  away): the working tree (git's folder and the state folder aside) and its own folders written,
  the system's programs and the paths the starter named read — not opencode's data, home,
  configuration or install;
* then runs the real shell with the arguments opencode gave.

It runs as ``python -IS`` with beeuni's own package folder on its path: nothing of the
environment or of the working tree is imported. A failure before the shell starts ends the
command with status 126 and a line on stderr: it never runs outside the box.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable  # no typing: it costs the launcher, before every command, ~8 ms

FAILED = 126  # what a shell answers for a command it could not run

LAUNCHER = """#!{python} -IS
import sys
sys.path.insert(0, {package_root!r})
from beeuni.daemon.box.command_box import enter
enter({shell!r}, {read!r}, {write!r}, {abi!r}, {variables!r}, sys.argv[1:])
"""


#: what a command keeps of opencode's environment (names, or prefixes ending in ``_``)
KEPT_VARIABLES = ("PATH", "LANG", "LANGUAGE", "LC_", "TERM", "COLORTERM", "NO_COLOR", "TZ")


def write_launcher(
    folder: str, shell: str, read: Iterable[str], write: Iterable[str], abi: int, variables: dict[str, str]
) -> str:
    """Write the launcher into ``folder`` under the real ``shell``'s name (opencode picks the
    shell's arguments by its name); its path, for ``SHELL``. ``read`` and ``write`` are the nested
    box's paths (``abi`` 0: no Landlock), ``variables`` set in the command's environment."""
    root = package_root()
    python = os.path.realpath(sys.executable)
    launcher = os.path.join(folder, os.path.basename(shell))
    with open(os.open(launcher, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o500), "w", encoding="utf-8") as handle:
        handle.write(
            LAUNCHER.format(
                python=python,
                package_root=root,
                shell=shell,
                read=sorted(read),
                write=sorted(write),
                abi=abi,
                variables=dict(sorted(variables.items())),
            )
        )
    return launcher


def readable_for_launcher() -> list[str]:
    """What the launcher needs to read in opencode's box: the Python it runs with and the folder
    beeuni is installed in (Python lists it to find the package)."""
    return [os.path.realpath(sys.executable), os.path.realpath(sys.base_prefix), package_root()]


def package_root() -> str:
    """The folder holding the ``beeuni`` package (``site-packages``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def enter(
    shell: str, read: list[str], write: list[str], abi: int, variables: dict[str, str], arguments: list[str]
) -> None:
    """In the launcher: the nested box, the command's environment, then the real shell."""
    try:
        environment = {name: value for name, value in os.environ.items() if _kept(name)}
        environment.update(variables)
        if abi:
            _restrict(abi, read, write)
        os.execve(shell, [shell, *arguments], environment)
    except OSError as err:
        sys.stderr.write(f"beeuni: the command was not run: its box could not be made ({err})\n")
        sys.stderr.flush()
    os._exit(FAILED)


def _kept(name: str) -> bool:
    return any(name.startswith(kept) if kept.endswith("_") else name == kept for kept in KEPT_VARIABLES)


def _restrict(abi: int, read: list[str], write: list[str]) -> None:
    from . import confine  # only here: the launcher imports nothing it does not use

    ruleset = confine.Ruleset(abi)
    for path in read:
        ruleset.allow(path, confine.READ)
    for path in write:
        ruleset.allow(path, confine.WRITE)
    confine.restrict(ruleset.fd)
