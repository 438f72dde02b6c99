"""``beeuni cr open --title TITLE``: the working tree's change as a change request.

What goes in: the tracked files the working tree changes against the base (deleted ones
included), and what the release needs that git does not track yet — the manifest, its imports,
each module and every file it imports (``release/facts.py`` finds them as ``validate`` does).
Nothing else: an untracked file no release needs stays out, and so does an ignored one (named,
with how to include it). The commit is made beside the user's work (``release/change.py``), on
the base — the current branch's upstream as last fetched, else HEAD, or ``--base`` — and checked
as ``validate`` checks a release, in a copy of the commit (``snapshot.take``): with an error,
nothing is committed to a branch or pushed. Then the new branch is made and pushed, and the
request opened with the forge's client where one is logged in to the remote's host
(``forge.py``), else the push's link or how to open it is printed. Every text is the rules'
(``CR_MESSAGES`` and the rest in commands.rules).
"""

from __future__ import annotations

import os
import posixpath
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine.lang.values import text
from ..engine.paths import Repository, git_top
from ..engine.printable import printable
from ..engine.project import ProjectRun, open_project
from ..engine.release import change
from ..engine.release.git_index import IGNORED, UNTRACKED, Release
from . import report
from .shared import EXIT_ERRORS, EXIT_FAILURE, EXIT_OK, UsageError

if TYPE_CHECKING:
    from ..engine.lang.evaluator import Diagnostic

#: what the command reads of the rules
READ = ("CR_MESSAGES", "CR_BRANCH", "CR_PUSH_LINK", "CR_FORGES", "IMPORT_RESOLUTION", "DAEMON_MESSAGES")
#: how many names ``-2``, ``-3``, ... are tried for the new branch
MAX_SUFFIX = 1000
#: git's status letter of a path the change has no more
GONE = "D"


class Refused(Exception):
    """The command stops; ``status`` is its exit status."""

    def __init__(self, message: str, status: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.status = status


class Texts:
    """The rules' texts of ``cr open``: ``say`` fills in a message's blanks."""

    def __init__(self, run: ProjectRun) -> None:
        missing = [name for name in READ if name not in run.program["lets"]]
        if missing:
            raise UsageError(f"the rules define no {', '.join(missing)}, which `beeuni cr open` reads")
        self.run = run
        self.messages = {str(key): text(value) for key, value in run.output("CR_MESSAGES").items()}

    def say(self, key: str, **blanks: Any) -> str:
        """The message ``key``, its blanks filled in made printable (a title's line break is
        shown as ``\\n``); the template's own line breaks stay."""
        return self.messages[key].format_map(defaultdict(str, {k: printable(str(v)) for k, v in blanks.items()}))

    def refuse(self, key: str, status: int = EXIT_FAILURE, **blanks: Any) -> Refused:
        return Refused(self.say(key, **blanks), status)


@dataclass(frozen=True)
class Target:
    """What the request merges into: ``branch`` on ``remote``; ``commit`` is the new commit's
    parent, ``shown`` how the output names it."""

    remote: str
    branch: str
    commit: str
    shown: str


def cr_open(title: str, body: str | None, base: str | None, path: str, rules: str | None) -> int:
    run = open_project(path, rules)
    texts = Texts(run)
    try:
        return _open(run, texts, title, body, base)
    except change.GitFailed as err:
        return _refused(texts.refuse("git_failed", command=err.command, detail=err.detail))
    except Refused as refusal:
        return _refused(refusal)


def _refused(refusal: Refused) -> int:
    sys.stderr.write(f"beeuni: {refusal}\n")
    return refusal.status


def _open(run: ProjectRun, texts: Texts, title: str, body: str | None, base: str | None) -> int:
    if not title.strip():
        raise texts.refuse("no_title")
    found = git_top(run.repo.root)
    if found is None:
        raise texts.refuse("not_git", path=run.repo.root)
    top = found[0]
    prefix = posixpath.relpath(os.path.realpath(run.repo.root).replace(os.sep, "/"), top.replace(os.sep, "/"))
    prefix = "" if prefix == "." else prefix + "/"
    target = _target(top, base, texts)
    release = Release(top, found[1], run.repo.root)
    add, remove = _change(run, texts, top, prefix, target, release)
    with tempfile.TemporaryDirectory(prefix="beeuni-cr-") as scratch:
        tree = change.build_tree(top, target.commit, add, remove, scratch)
        files = change.tree_changes(top, target.commit, tree)
        if not files:
            raise texts.refuse("nothing", base=target.shown)
        commit = change.make_commit(top, tree, target.commit, title, body)
        errors = _errors_of(run, texts, commit, os.path.join(scratch, "release"), prefix)
    if errors:
        report.write_diagnostics(errors, sys.stdout)
        raise texts.refuse("invalid", EXIT_ERRORS, detail=report.summary(d.severity for d in errors))
    branch = _new_branch(top, target.remote, title, texts)
    change.create_branch(top, branch, commit)
    _print(texts.say("committed", title=title, branch=branch, base=target.shown))
    for status, path in files:
        _print(texts.say("file", detail=status, path=_shown(path, prefix)))
    return _publish(run, texts, top, target, branch, title, body or "")


def _change(
    run: ProjectRun, texts: Texts, top: str, prefix: str, target: Target, release: Release
) -> tuple[list[str], list[str]]:
    """The paths (from the top) the change takes from the working tree, and those it removes:
    what the working tree changes against where the branch left the base (the fork), and what the
    release needs that git does not track. An ignored file the release needs is named and left
    out; a file the base changed since the fork, that the change changes too, refuses all."""
    head = change.commit_named(top, "HEAD")
    fork = (change.merge_base(top, head, target.commit) if head is not None else None) or target.commit
    needed = needed_files(run, release)
    for path in sorted(p for p, state in needed.items() if state == IGNORED):
        sys.stderr.write(f"beeuni: {texts.say('ignored', path=path)}\n")
    new = [prefix + p for p, state in needed.items() if state == UNTRACKED]
    ours = {**change.changed_paths(top, fork), **dict.fromkeys(new, UNTRACKED)}
    if fork != target.commit:
        clash = sorted(set(ours) & set(change.changed_paths(top, fork, target.commit)))
        if clash:
            raise texts.refuse("base_moved", base=target.shown, detail=", ".join(_shown(p, prefix) for p in clash))
    add = sorted(p for p, status in ours.items() if status != GONE and _on_disk(top, p, release))
    return add, sorted(set(ours) - set(add))


def _publish(run: ProjectRun, texts: Texts, top: str, target: Target, branch: str, title: str, body: str) -> int:
    """Push the new branch and open the request with the forge's client, or say how to."""
    from .forge import open_request, push_link

    pushed, said = change.push(top, target.remote, branch)
    if not pushed:
        lines = [line.strip() for line in said.splitlines() if line.strip()]
        detail = "; ".join([line for line in lines if line.startswith("remote:") or "rejected" in line] or lines[-1:])
        raise texts.refuse("push_failed", remote=target.remote, branch=branch, detail=detail)
    _print(texts.say("pushed", branch=branch, remote=target.remote))
    opened = open_request(run, top, target.remote, branch, target.branch, title, body)
    if opened.url is not None:
        _print(texts.say("opened", url=opened.url))
        return EXIT_OK
    if opened.failure is not None:
        sys.stderr.write(f"beeuni: {texts.say('forge_failed', command=opened.command, detail=opened.failure)}\n")
    link = push_link(run, said)
    _print("")
    if link is not None:
        _print(texts.say("open_link", url=link))
    else:
        _print(texts.say("open_by_hand", branch=branch, base=target.branch, remote=target.remote))
    return EXIT_OK if opened.failure is None else EXIT_FAILURE


def _print(line: str) -> None:
    """A line of the rules' text, its blanks made printable by ``Texts.say``."""
    sys.stdout.write(line + "\n")


def _shown(path: str, prefix: str) -> str:
    """A path from the work tree's top as the output names paths: from the project's folder."""
    return path[len(prefix) :] if path.startswith(prefix) else posixpath.relpath(path, prefix or ".")


def _target(top: str, base: str | None, texts: Texts) -> Target:
    """The remote and the branch the request merges into, and the commit it starts from: the
    current branch's upstream as last fetched; without one, the remote's default branch (its
    ``HEAD`` as cloned); else HEAD. With ``base``, that branch as last fetched from the remote
    (or, not fetched, the local one)."""
    known = change.remotes(top)
    if not known:
        raise texts.refuse("no_remote")
    branch = change.current_branch(top)
    upstream = change.upstream_of(top, branch) if branch is not None else None
    if upstream is not None and upstream.remote not in known:  # `.`: a local branch followed
        upstream = None
    if upstream is not None:
        remote = upstream.remote
    elif "origin" in known or len(known) == 1:
        remote = "origin" if "origin" in known else known[0]
    else:
        raise texts.refuse("many_remotes", detail=", ".join(known))
    if base is not None:
        fetched = change.commit_named(top, f"refs/remotes/{remote}/{base}")
        local = change.commit_named(top, f"refs/heads/{base}")
        if fetched is None and local is None:
            raise texts.refuse("no_base", base=base, remote=remote)
        return Target(remote, base, fetched or local or "", f"{remote}/{base}" if fetched else base)
    if upstream is not None and upstream.tracking:
        fetched = change.commit_named(top, upstream.tracking)
        if fetched is not None:
            return Target(remote, upstream.branch, fetched, f"{remote}/{upstream.branch}")
    default = change.default_branch(top, remote) if upstream is None else None
    if default is not None:  # a branch of its own, pushed or not: the request goes to the remote's default
        return Target(remote, default[0], default[1], f"{remote}/{default[0]}")
    if branch is None:
        raise texts.refuse("detached")
    head = change.commit_named(top, "HEAD")
    if head is None:
        raise texts.refuse("no_commit")
    return Target(remote, upstream.branch if upstream is not None else branch, head, branch)


def needed_files(run: ProjectRun, release: Release) -> dict[str, str]:
    """The files a release of the project needs, each with its state in git's index
    (tracked, untracked, ignored): the manifest and its imports, each module the rules would
    load and every file it imports relatively, as ``validate`` follows them. Paths are from the
    project's folder; a file not there is left out (the check of the commit names it)."""
    paths = [str(item["path"]) for item in run.merged.files]
    modules = run.output("modules_to_load")
    resolution = run.output("IMPORT_RESOLUTION")
    if modules and resolution is not None:
        from ..engine.release.facts import release_fact

        fact = release_fact(release, run.observer, modules, resolution)
        paths += [str(item["module"]) for item in fact["modules"]]
        paths += [str(item["target"]) for item in fact["imports"] if item["relative"] and item["target"] is not None]
    found: dict[str, str] = {}
    for path in paths:
        normal = posixpath.normpath(path)
        if normal in found or normal.startswith("../") or normal == ".." or posixpath.isabs(normal):
            continue
        if os.path.isfile(os.path.join(run.repo.root, normal)) or os.path.islink(os.path.join(run.repo.root, normal)):
            found[normal] = release.state(normal)
    return found


def _on_disk(top: str, path: str, release: Release) -> bool:
    """Whether the working tree holds ``path`` (from the top) as something a commit can take
    from it: a file, a link, or a folder the index holds as a submodule."""
    full = os.path.join(top, path)
    if not os.path.lexists(full):
        return False
    return os.path.islink(full) or not os.path.isdir(full) or path.encode("utf-8", "surrogateescape") in release.paths


def _errors_of(run: ProjectRun, texts: Texts, commit: str, into: str, prefix: str) -> list[Diagnostic]:
    """The errors ``validate`` finds in the release of ``commit``: its files copied into ``into``
    and checked there, the copy's files being what git tracks."""
    from ..engine.release.snapshot import ReleaseError, take

    try:
        snapshot = take(run.repo.root, run.manifest, commit, into)
    except ReleaseError as err:
        template = text(run.output("DAEMON_MESSAGES").get(err.key, "{detail}"))
        problem = template.format_map(defaultdict(str, detail=err.detail))
        raise texts.refuse("invalid", EXIT_ERRORS, detail=problem) from None
    try:
        checked = ProjectRun(Repository(snapshot.root), run.manifest, run.program, release_view=True)
        tracked = sorted({prefix + path for path in snapshot.paths} | set(snapshot.objects))
        checked.set_release(Release.given(snapshot.folder, tracked, [], prefix))
        return [diagnostic for diagnostic in checked.diagnostics() if diagnostic.severity == "error"]
    finally:
        snapshot.remove()


def _new_branch(top: str, remote: str, title: str, texts: Texts) -> str:
    """A branch name from the title (``CR_BRANCH``) that no branch here or on the remote has."""
    from ..engine.lang import patterns

    settings = texts.run.output("CR_BRANCH")
    word = patterns.regex(str(settings["word"]))
    stem = "-".join(match.group(0) for match in word.finditer(title.lower()))
    stem = stem[: int(settings["max_length"])].strip("-") or str(settings["fallback"])
    prefix = str(settings["prefix"])
    for number in range(1, MAX_SUFFIX):
        name = prefix + stem + (f"-{number}" if number > 1 else "")
        if change.valid_branch(top, name) and not change.branch_taken(top, remote, name):
            return name
    raise texts.refuse("git_failed", command="check-ref-format", detail=f"no free branch name {prefix}{stem}-N")
