"""A change request's commit, made beside the user's work (``beeuni cr open``).

The commit is built as git builds one, but in an index of its own (``GIT_INDEX_FILE`` in a
temporary folder): the base's tree is read into it, the files of the change are added from the
working tree (``update-index`` hashes each as ``git add`` would: its filters, its mode, a link as
a link) or removed, then ``write-tree`` and ``commit-tree`` make the commit. The user's index,
working tree, HEAD and branch are never written: a new branch (``update-ref``, only where no
branch of that name is) and the push are the only changes, and ``cr open`` makes them only once
the commit validates. Every git command goes through ``git.run`` (the repository as hostile input);
the commit takes the author from the repository's configuration or the user's global one, and the
push, the one command that reaches a remote, may use the ordinary transports and the user's own
credential helpers, never ``ext::`` or a helper the repository names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import git

#: what the user's global git configuration gives a change request's commit and push
USER_SETTINGS = ("user.name", "user.email", "credential.helper")

#: the object name that tells ``update-ref`` the branch must not exist yet
_NO_BRANCH = ""


class GitFailed(Exception):
    """A git command ended in failure: ``command`` is its subcommand, ``detail`` what it said."""

    def __init__(self, command: str, detail: str) -> None:
        super().__init__(f"git {command}: {detail}")
        self.command = command
        self.detail = detail


def run(top: str, *args: str, data: bytes | None = None, index: str | None = None) -> bytes:
    """The output of one git command in the work tree ``top``; ``index``: the index file it
    works on instead of the repository's; ``GitFailed`` when it fails."""
    try:
        author = _author() if args[0] == "commit-tree" else None
        done = git.run(top, *args, data=data, index=index, settings=_identity(top, args[0]), variables=author)
    except OSError as err:
        raise GitFailed(args[0], str(err)) from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitFailed(args[0], said[-1] if said else f"exit status {done.returncode}")
    return done.stdout


def asked(top: str, *args: str) -> str | None:
    """The first line of a git command's answer; None when it fails or says nothing (a question:
    is there an upstream, does this name a commit)."""
    try:
        done = git.run(top, *args)
    except OSError:
        return None
    found = done.stdout.decode("utf-8", "surrogateescape").strip()
    return found.splitlines()[0] if done.returncode == 0 and found else None


#: the variables of the user's environment that name a commit's author and committer (git's own)
AUTHOR_VARIABLES = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def _author() -> dict[str, str]:
    """The author the user's environment names, as git reads it (the pinned environment leaves
    every other ``GIT_*`` variable of the caller's out)."""
    return {name: os.environ[name] for name in AUTHOR_VARIABLES if os.environ.get(name)}


def _identity(top: str, command: str) -> tuple[str, ...]:
    """The author a commit is made with: the repository's, else the user's global one."""
    if command != "commit-tree" or asked(top, "config", "--get", "user.email") is not None:
        return ()
    return git.user_settings(("user.name", "user.email"))


def names(output: bytes) -> list[str]:
    """The NUL-separated paths of a ``-z`` answer."""
    return [item.decode("utf-8", "surrogateescape") for item in output.split(b"\0") if item]


@dataclass(frozen=True)
class Upstream:
    """The branch the current one follows: its remote, its name there, and the local ref that
    tracks it (``refs/remotes/origin/main``)."""

    remote: str
    branch: str
    tracking: str


def remotes(top: str) -> list[str]:
    return run(top, "remote").decode("utf-8", "surrogateescape").split()


def current_branch(top: str) -> str | None:
    """The branch HEAD is on (its short name); None when HEAD is detached."""
    return asked(top, "symbolic-ref", "--quiet", "--short", "HEAD")


def upstream_of(top: str, branch: str) -> Upstream | None:
    fields = "%(upstream:remotename)%00%(upstream:remoteref)%00%(upstream)"
    found = run(top, "for-each-ref", f"--format={fields}", "--end-of-options", f"refs/heads/{branch}")
    remote, merge, tracking = [*found.rstrip(b"\n").decode("utf-8", "surrogateescape").split("\0"), "", ""][:3]
    if not remote or not merge.startswith("refs/heads/"):
        return None
    return Upstream(remote, merge[len("refs/heads/") :], tracking)


def default_branch(top: str, remote: str) -> tuple[str, str] | None:
    """The remote's default branch (what its ``HEAD`` names, as cloned or ``git remote set-head``
    recorded it) and its commit as last fetched; None when unknown."""
    named = asked(top, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
    start = f"refs/remotes/{remote}/"
    if named is None or not named.startswith(start):
        return None
    commit = commit_named(top, named)
    return None if commit is None else (named[len(start) :], commit)


def commit_named(top: str, rev: str) -> str | None:
    return asked(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")


def merge_base(top: str, one: str, other: str) -> str | None:
    return asked(top, "merge-base", "--end-of-options", one, other)


def changed_paths(top: str, since: str, until: str | None = None) -> dict[str, str]:
    """Each path (from the work tree's top) whose content differs between the commit ``since``
    and ``until`` — or, without it, the working tree's tracked files — with its status letter:
    ``D`` for one gone (deleted, or no longer in the index), ``A`` for one added (staged, or
    only intended to be: ``git add -N``), ``M`` and the others for one changed."""
    plain = ("--name-status", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--no-relative")
    return {
        path: status for status, path in _statuses(run(top, "diff", *plain, since, *([until] if until else []), "--"))
    }


def tree_changes(top: str, before: str, after: str) -> list[tuple[str, str]]:
    """(status letter, path from the top) of each file that differs between two trees."""
    return _statuses(run(top, "diff-tree", "-r", "-z", "--name-status", "--no-renames", "--no-ext-diff", before, after))


def _statuses(output: bytes) -> list[tuple[str, str]]:
    items = names(output)
    return [(items[at], items[at + 1]) for at in range(0, len(items) - 1, 2)]


def build_tree(top: str, base: str, add: list[str], remove: list[str], scratch: str) -> str:
    """The tree of ``base`` with the files ``add`` taken from the working tree and those of
    ``remove`` left out (paths from the top); the index it is built in lives in ``scratch``."""
    index = os.path.join(scratch, "index")
    run(top, "read-tree", base, index=index)
    if add:
        run(top, "update-index", "--add", "-z", "--stdin", data=_listed(add), index=index)
    if remove:
        run(top, "update-index", "--force-remove", "-z", "--stdin", data=_listed(remove), index=index)
    return run(top, "write-tree", index=index).decode().strip()


def _listed(paths: list[str]) -> bytes:
    return b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in paths)


def make_commit(top: str, tree: str, parent: str, title: str, body: str | None) -> str:
    """A commit of ``tree`` on ``parent`` (an object only: no branch names it yet)."""
    message = title + ("\n\n" + body if body else "") + "\n"
    return run(top, "commit-tree", tree, "-p", parent, "-F", "-", data=message.encode()).decode().strip()


def tree_of(top: str, commit: str) -> str:
    return run(top, "rev-parse", "--verify", "--end-of-options", f"{commit}^{{tree}}").decode().strip()


def branch_taken(top: str, remote: str, branch: str) -> bool:
    """Whether a branch of that name is here, or on the remote as last fetched."""
    return any(
        commit_named(top, ref) is not None for ref in (f"refs/heads/{branch}", f"refs/remotes/{remote}/{branch}")
    )


def valid_branch(top: str, branch: str) -> bool:
    return asked(top, "check-ref-format", "--branch", branch) is not None


def create_branch(top: str, branch: str, commit: str) -> None:
    """The new branch ``branch`` at ``commit``; ``GitFailed`` when it exists already."""
    run(top, "update-ref", "-m", "beeuni cr open", f"refs/heads/{branch}", commit, _NO_BRANCH)


def push(top: str, remote: str, branch: str) -> tuple[bool, str]:
    """Push the branch to the branch of the same name on ``remote``: whether it worked, and
    what git said (a forge's link to open the request is in it)."""
    try:
        refspec = f"refs/heads/{branch}:refs/heads/{branch}"
        done = git.run(
            top,
            "push",
            "--end-of-options",
            remote,
            refspec,
            settings=(*git.PUSH_SETTINGS, *git.user_settings(("credential.helper",))),
            protocols=git.PUSH_PROTOCOLS,
        )
    except OSError as err:
        return False, str(err)
    return done.returncode == 0, done.stderr.decode("utf-8", "replace")


def remote_url(top: str, remote: str) -> str | None:
    """The remote's URL as configured (before any ``insteadOf`` rewriting): where it lives."""
    return asked(top, "config", "--get", f"remote.{remote}.url")
