"""`beeuni cr open`: the working tree's change as a change request, with real git — a bare
repository as the remote, a fake `gh` on PATH (a script recording its arguments) for the forge.

Every test also holds the user's side unchanged: `git status`, the index file's bytes, HEAD and
its branch, and every file of the working tree."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import run_beeuni

IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}
MODULE = "import { shout } from './lib/shout'\nexport default { description: 'x', parameters: {}, execute() {} }\n"
MANIFEST = """tools:
  web_search: beeuni:web_search
  memory: beeuni:memory
"""
CHANGED = """tools:
  web_search: beeuni:web_search
  memory: beeuni:memory
  lookup: tools/lookup.ts
"""
TITLE = "Customize web_search"
BRANCH = "beeuni/customize-web-search"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **IDENTITY})
    return done.stdout.decode()


def bare_git(remote: Path, *args: str) -> str:
    return git(remote, "--git-dir", str(remote), *args)


@pytest.fixture
def bin_folder(tmp_path: Path) -> Path:
    """A PATH of git alone: no forge client the machine may have installed answers."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").symlink_to(subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip())
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A clone whose `main` follows `origin/main` in a bare repository, with a manifest and a
    README committed and pushed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    folder = tmp_path / "work"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "beeuni.yaml").write_text(MANIFEST)
    (folder / "README.md").write_text("the project\n")
    (folder / "old.txt").write_text("to be deleted\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "base")
    git(folder, "remote", "add", "origin", str(remote))
    git(folder, "push", "-q", "-u", "origin", "main")
    return folder


def cr_open(work: Path, bin_folder: Path, *args: str) -> tuple[str, str, int]:
    result = run_beeuni(["cr", "open", *args], cwd=work, env={**IDENTITY, "PATH": str(bin_folder)})
    return result.stdout, result.stderr, result.code


def user_side(folder: Path) -> dict[str, bytes]:
    """What the user has: status, index, HEAD and its branch, every file of the working tree."""
    found = {
        "status": git(folder, "status", "--porcelain=v1", "--untracked-files=all").encode(),
        "index": (folder / ".git" / "index").read_bytes(),
        "HEAD": (folder / ".git" / "HEAD").read_bytes(),
        "head commit": git(folder, "rev-parse", "HEAD").encode(),
        "main": git(folder, "rev-parse", "refs/heads/main").encode(),
    }
    for path in sorted(folder.rglob("*")):
        if ".git" not in path.relative_to(folder).parts and path.is_file():
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).digest()
    return found


def make_change(work: Path) -> None:
    """A new project tool (its module and the helper it imports, both untracked), a README edit,
    a deleted file, and stray files no release needs."""
    (work / "beeuni.yaml").write_text(CHANGED)
    (work / "tools" / "lib").mkdir(parents=True)
    (work / "tools" / "lookup.ts").write_text(MODULE)
    (work / "tools" / "lib" / "shout.ts").write_text("export const shout = (s: string) => s.toUpperCase()\n")
    (work / "tools" / "scratch.ts").write_text("// a draft nothing imports\n")
    (work / "notes.txt").write_text("stray\n")
    (work / "README.md").write_text("the project, changed\n")
    (work / "old.txt").unlink()


def files_of(remote: Path, rev: str) -> list[str]:
    return bare_git(remote, "ls-tree", "-r", "--name-only", rev).split()


def test_opens_a_branch_with_the_change_and_leaves_the_work_as_it_was(work: Path, bin_folder: Path) -> None:
    make_change(work)
    before = user_side(work)
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE, "--body", "Why: faster.")
    assert (stdout, stderr, code) == (
        f'  ✓  Committed "{TITLE}" on the new branch {BRANCH}, on top of origin/main\n'
        "     M README.md\n"
        "     M beeuni.yaml\n"
        "     D old.txt\n"
        "     A tools/lib/shout.ts\n"
        "     A tools/lookup.ts\n"
        f"  pushed  {BRANCH} to origin\n"
        "\n"
        f"Open a pull request (merge request) from branch {BRANCH} to main on origin.\n",
        "",
        0,
    )
    assert user_side(work) == before
    remote = work.parent / "remote.git"
    # exactly what the release needs and the tracked files changed; never the stray files
    assert files_of(remote, BRANCH) == ["README.md", "beeuni.yaml", "tools/lib/shout.ts", "tools/lookup.ts"]
    assert bare_git(remote, "show", f"{BRANCH}:beeuni.yaml") == CHANGED
    assert bare_git(remote, "log", "--format=%s|%b|%an", f"main..{BRANCH}").strip() == f"{TITLE}|Why: faster.\n|Ada"
    assert bare_git(remote, "rev-parse", f"{BRANCH}^") == bare_git(remote, "rev-parse", "main")
    assert git(work, "rev-parse", f"refs/heads/{BRANCH}") == bare_git(remote, "rev-parse", BRANCH)
    # the committed release validates on its own (the same check, from a fresh clone)
    clone = work.parent / "clone"
    git(work.parent, "clone", "-q", "-b", BRANCH, str(remote), str(clone))
    assert run_beeuni(["validate"], cwd=clone).code == 0


def test_a_second_request_gets_a_branch_of_its_own(work: Path, bin_folder: Path) -> None:
    make_change(work)
    assert cr_open(work, bin_folder, "--title", TITLE)[2] == 0
    stdout, _, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 0
    assert stdout.splitlines()[0] == f'  ✓  Committed "{TITLE}" on the new branch {BRANCH}-2, on top of origin/main'


def test_the_forge_client_opens_the_request_where_it_is_logged_in(work: Path, bin_folder: Path) -> None:
    """A remote on github.com (pushed, through `pushInsteadOf`, to the bare repository): `gh`
    is asked whether it is logged in to that host, then opens the pull request."""
    remote = work.parent / "remote.git"
    git(work, "remote", "set-url", "origin", "https://github.com/acme/widgets.git")
    git(work, "config", f"url.{remote}.pushInsteadOf", "https://github.com/acme/widgets.git")
    calls = work.parent / "gh-calls"
    fake_gh(bin_folder, calls, logged_in=True)
    make_change(work)
    before = user_side(work)
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE, "--body", "Why: faster.")
    assert (stderr, code) == ("", 0)
    assert stdout.splitlines()[-2:] == [
        f"  pushed  {BRANCH} to origin",
        "  opened  https://github.com/acme/widgets/pull/7",
    ]
    assert calls.read_text().splitlines() == [
        "auth status --hostname github.com",
        f"pr create --repo github.com/acme/widgets --head {BRANCH} --base main --title {TITLE} --body Why: faster.",
    ]
    assert files_of(remote, BRANCH) == ["README.md", "beeuni.yaml", "tools/lib/shout.ts", "tools/lookup.ts"]
    assert user_side(work) == before


def test_without_a_logged_in_client_the_push_link_is_printed(work: Path, bin_folder: Path) -> None:
    """`gh` installed but logged out is not asked to open anything; the forge's link in the
    push's answer (a hook of the bare repository says it, as GitHub does) is printed."""
    remote = work.parent / "remote.git"
    git(work, "remote", "set-url", "origin", "git@github.com:acme/widgets.git")
    git(work, "config", f"url.{remote}.pushInsteadOf", "git@github.com:acme/widgets.git")
    hook = remote / "hooks" / "post-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "echo \"Create a pull request for '$BRANCH' on GitHub by visiting:\" >&2\n"
        "echo '     https://github.com/acme/widgets/pull/new/beeuni/customize-web-search' >&2\n"
    )
    hook.chmod(0o755)
    calls = work.parent / "gh-calls"
    fake_gh(bin_folder, calls, logged_in=False)
    make_change(work)
    stdout, _, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 0
    assert stdout.splitlines()[-1] == (
        "Open the change request: https://github.com/acme/widgets/pull/new/beeuni/customize-web-search"
    )
    assert calls.read_text().splitlines() == ["auth status --hostname github.com"]


def fake_gh(bin_folder: Path, calls: Path, logged_in: bool) -> None:
    script = bin_folder / "gh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{calls}"\n'
        f'if [ "$1" = auth ]; then exit {0 if logged_in else 1}; fi\n'
        'echo "https://github.com/acme/widgets/pull/7"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_a_change_that_does_not_validate_is_refused(work: Path, bin_folder: Path) -> None:
    """The commit is checked, not the working tree: a module git ignores stays out of the
    change, so the commit lacks it, though the working tree has it."""
    (work / ".gitignore").write_text("tools/secret.ts\n")
    (work / "beeuni.yaml").write_text(MANIFEST + "  secret: tools/secret.ts\n")
    (work / "tools").mkdir()
    (work / "tools" / "secret.ts").write_text("export default { description: 'x', parameters: {}, execute() {} }\n")
    before = user_side(work)
    refs_before = bare_git(work.parent / "remote.git", "for-each-ref")
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE)
    assert (stdout, stderr, code) == (
        "beeuni.yaml:4:11: error[tools/module-missing] `tools/secret.ts` does not exist\n",
        "beeuni: tools/secret.ts is ignored by git, so the change leaves it out: `git add -f tools/secret.ts` (or"
        " stop ignoring it) to include it\n"
        "beeuni: the change does not validate (1 error): nothing was committed or pushed; `beeuni validate` shows"
        " the problems of the working tree\n",
        1,
    )
    assert user_side(work) == before
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/heads").split() == ["refs/heads/main"]
    assert bare_git(work.parent / "remote.git", "for-each-ref") == refs_before


def test_no_remote(work: Path, bin_folder: Path) -> None:
    git(work, "remote", "remove", "origin")
    make_change(work)
    before = user_side(work)
    assert cr_open(work, bin_folder, "--title", TITLE) == (
        "",
        "beeuni: the repository has no remote to push the change to: add one (`git remote add origin URL`),"
        " then run `beeuni cr open` again\n",
        2,
    )
    assert user_side(work) == before
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/heads").split() == ["refs/heads/main"]


def test_nothing_to_open(work: Path, bin_folder: Path) -> None:
    (work / "notes.txt").write_text("stray: no release needs it\n")
    assert cr_open(work, bin_folder, "--title", TITLE) == (
        "",
        "beeuni: nothing to open: the working tree holds no change against origin/main\n",
        2,
    )


def test_committed_changes_go_in_when_the_base_is_the_upstream(work: Path, bin_folder: Path) -> None:
    """The design document's way: commit on the branch, then open the request — the change
    against the upstream is the commit's."""
    make_change(work)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "local")
    stdout, _, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 0
    assert "     A tools/lookup.ts" in stdout.splitlines()
    assert files_of(work.parent / "remote.git", BRANCH) == [
        "README.md",
        "beeuni.yaml",
        "notes.txt",
        "tools/lib/shout.ts",
        "tools/lookup.ts",
        "tools/scratch.ts",
    ]


def test_the_documents_steps_on_a_branch_of_ones_own(work: Path, bin_folder: Path) -> None:
    """`tools eject`'s steps 3 and 4 on a clone: commit on a branch of one's own, `git push
    origin HEAD` (no upstream set), then `cr open`: the request goes to the remote's default
    branch, with the branch's change."""
    clone = work.parent / "clone"
    git(work.parent, "clone", "-q", str(work.parent / "remote.git"), str(clone))
    git(clone, "switch", "-q", "-c", "own-lookup")
    make_change(clone)
    git(clone, "add", "beeuni.yaml", "tools/lookup.ts", "tools/lib/shout.ts")
    git(clone, "commit", "-q", "-m", "Own the lookup tool")
    git(clone, "push", "-q", "origin", "HEAD")
    before = user_side(clone)
    stdout, stderr, code = cr_open(clone, bin_folder, "--title", "Own the lookup tool")
    assert (stderr, code) == ("", 0)
    assert stdout.splitlines()[0] == (
        '  ✓  Committed "Own the lookup tool" on the new branch beeuni/own-the-lookup-tool, on top of origin/main'
    )
    assert stdout.splitlines()[-1] == (
        "Open a pull request (merge request) from branch beeuni/own-the-lookup-tool to main on origin."
    )
    # the commit and the working tree's other tracked changes (README, old.txt), never the strays
    assert files_of(work.parent / "remote.git", "beeuni/own-the-lookup-tool") == [
        "README.md",
        "beeuni.yaml",
        "tools/lib/shout.ts",
        "tools/lookup.ts",
    ]
    assert user_side(clone) == before


def test_a_base_that_moved_on_under_the_same_files_is_refused(work: Path, bin_folder: Path) -> None:
    """Someone else changed the manifest on main since this branch left it: the working tree's
    manifest would undo that, so nothing is opened."""
    other = work.parent / "other"
    git(work.parent, "clone", "-q", "-b", "main", str(work.parent / "remote.git"), str(other))
    (other / "beeuni.yaml").write_text(MANIFEST + "  show: beeuni:show\n")
    git(other, "commit", "-q", "-am", "show")
    git(other, "push", "-q", "origin", "main")
    git(work, "fetch", "-q")
    make_change(work)
    assert cr_open(work, bin_folder, "--title", TITLE) == (
        "",
        "beeuni: origin/main changed files your change changes too, since your branch left it: beeuni.yaml;"
        " bring your branch up to date (`git pull`), then run `beeuni cr open` again\n",
        2,
    )


def test_base_names_the_branch_to_merge_into(work: Path, bin_folder: Path) -> None:
    git(work, "push", "-q", "origin", "main:release")
    git(work, "fetch", "-q")
    make_change(work)
    stdout, _, code = cr_open(work, bin_folder, "--title", TITLE, "--base", "release")
    assert code == 0
    assert stdout.splitlines()[0].endswith("on top of origin/release")
    assert stdout.splitlines()[-1].endswith(f"from branch {BRANCH} to release on origin.")
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE, "--base", "nowhere")
    assert (stdout, code) == ("", 2)
    assert stderr == (
        "beeuni: no branch nowhere on origin (nor here): fetch it (`git fetch origin`) or name another with --base\n"
    )


def test_outside_git(tmp_path: Path, bin_folder: Path) -> None:
    (tmp_path / "beeuni.yaml").write_text(MANIFEST)
    stdout, stderr, code = cr_open(tmp_path, bin_folder, "--title", TITLE)
    assert (stdout, code) == ("", 2)
    assert stderr.endswith("is in no git repository: a change request needs one, with a commit and a remote\n")


def test_a_project_in_a_folder_of_the_repository(tmp_path: Path, bin_folder: Path) -> None:
    """The project is `apps/bot/`: its paths are shown from its folder, a change elsewhere in
    the repository goes in too, named from there."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    top = tmp_path / "work"
    project = top / "apps" / "bot"
    project.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    (project / "beeuni.yaml").write_text(MANIFEST)
    (project / "README.md").write_text("the bot\n")
    (project / "old.txt").write_text("to be deleted\n")
    (top / "README.md").write_text("the monorepo\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "base")
    git(top, "remote", "add", "origin", str(remote))
    git(top, "push", "-q", "-u", "origin", "main")
    make_change(project)
    (top / "README.md").write_text("the monorepo, changed\n")
    before = user_side(top)
    stdout, stderr, code = cr_open(project, bin_folder, "--title", TITLE)
    assert (stderr, code) == ("", 0)
    assert stdout.splitlines()[1:7] == [
        "     M ../../README.md",
        "     M README.md",
        "     M beeuni.yaml",
        "     D old.txt",
        "     A tools/lib/shout.ts",
        "     A tools/lookup.ts",
    ]
    assert files_of(remote, BRANCH) == [
        "README.md",
        "apps/bot/README.md",
        "apps/bot/beeuni.yaml",
        "apps/bot/tools/lib/shout.ts",
        "apps/bot/tools/lookup.ts",
    ]
    assert user_side(top) == before


def test_what_the_index_says_of_a_file_counts(work: Path, bin_folder: Path) -> None:
    """A file only intended to be added (`git add -N`) goes in; one taken out of the index
    (`git rm --cached`, still on disk) goes out."""
    (work / "planned.txt").write_text("to be added\n")
    git(work, "add", "-N", "planned.txt")
    git(work, "rm", "-q", "--cached", "README.md")
    before = user_side(work)
    stdout, _, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 0
    assert stdout.splitlines()[1:3] == ["     D README.md", "     A planned.txt"]
    assert files_of(work.parent / "remote.git", BRANCH) == ["beeuni.yaml", "old.txt", "planned.txt"]
    assert user_side(work) == before


def test_a_client_that_cannot_open_the_request(work: Path, bin_folder: Path) -> None:
    """`gh` is logged in but fails: the branch is pushed, the failure said, and how to open the
    request by hand printed; exit 2."""
    remote = work.parent / "remote.git"
    git(work, "remote", "set-url", "origin", "https://github.com/acme/widgets.git")
    git(work, "config", f"url.{remote}.pushInsteadOf", "https://github.com/acme/widgets.git")
    script = bin_folder / "gh"
    script.write_text(
        '#!/bin/sh\nif [ "$1" = auth ]; then exit 0; fi\necho "GraphQL: Resource not accessible" >&2\nexit 1\n'
    )
    script.chmod(0o755)
    make_change(work)
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 2
    assert stderr == "beeuni: gh could not open the change request: GraphQL: Resource not accessible\n"
    assert stdout.splitlines()[-1] == f"Open a pull request (merge request) from branch {BRANCH} to main on origin."
    assert files_of(remote, BRANCH)


def test_a_refused_push(work: Path, bin_folder: Path) -> None:
    """The remote refuses the push: the new local branch stays, with the command that pushes it."""
    hook = work.parent / "remote.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
    hook.chmod(0o755)
    make_change(work)
    before = user_side(work)
    stdout, stderr, code = cr_open(work, bin_folder, "--title", TITLE)
    assert code == 2
    assert stdout.splitlines()[0].startswith("  ✓  Committed")
    assert stderr.splitlines()[0].startswith("beeuni: the push to origin failed: remote: pushes are closed today; ")
    assert stderr.splitlines()[1] == (
        f"the change is on the new local branch {BRANCH}: push it with `git push origin {BRANCH}`"
    )
    assert git(work, "rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}")
    assert user_side(work) == before


def test_an_empty_title(work: Path, bin_folder: Path) -> None:
    make_change(work)
    assert cr_open(work, bin_folder, "--title", " ") == (
        "",
        "beeuni: --title is empty: a change request needs a title (its commit's subject)\n",
        2,
    )
