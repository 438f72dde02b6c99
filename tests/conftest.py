"""Shared helpers: run the installed ``beeuni`` command as a user would, and plain git as the
user sets a repository up."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BEEUNI = shutil.which("beeuni", path=str(Path(sys.executable).parent)) or "beeuni"


@dataclass
class Result:
    stdout: str
    stderr: str
    code: int

    def transcript(self) -> str:
        """stdout, then stderr and the exit code, as stored in a golden ``.out`` file."""
        text = self.stdout
        if self.stderr:
            text += "--- stderr\n" + self.stderr
        return text + f"--- exit {self.code}\n"


def run_beeuni(
    args: Sequence[str], cwd: Path | str, stdin: str | None = None, env: dict[str, str] | None = None
) -> Result:
    environment = {**os.environ, "NO_COLOR": "1", **(env or {})}
    done = subprocess.run(
        [BEEUNI, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    return Result(done.stdout, done.stderr, done.returncode)


def read_terminal(
    command: Sequence[str], cwd: Path | str, env: dict[str, str], stream: str, timeout: float
) -> tuple[str, str]:
    """Run ``command`` with its standard output (``stream="stdout"``) or error (``"stderr"``) on a
    pseudo-terminal: what the terminal received, and what the other stream wrote."""
    import pty
    import tempfile

    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as other:
        out, err = (follower, other) if stream == "stdout" else (other, follower)
        with subprocess.Popen(list(command), cwd=cwd, env=env, stdout=out, stderr=err) as process:
            os.close(follower)
            received = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal's other side closed
                    break
                if not chunk:
                    break
                received += chunk
            process.wait(timeout=timeout)
        other.seek(0)
        written = other.read().decode(errors="replace")
    os.close(leader)
    return received.decode(errors="replace").replace("\r\n", "\n"), written


def git(folder: Path, *args: str) -> str:
    """Plain git in ``folder``, as the test (the user) sets the repository up; what it printed."""
    done = subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def commit(folder: Path, message: str) -> str:
    """Commit everything in ``folder``'s work tree as a developer; the commit's id."""
    git(folder, "add", "-A")
    git(folder, "-c", "user.email=dev@example.com", "-c", "user.name=dev", "commit", "-q", "-m", message)
    return git(folder, "rev-parse", "HEAD")


def run_typer(args: Sequence[str], cwd: Path | str, env: dict[str, str] | None = None) -> Result:
    """Run a command through the Typer application, bypassing ``cli/main.py``'s hand-parsed fast
    paths: the tests that compare the two paths call this beside ``run_beeuni``."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from beeuni.cli.app import app; sys.argv[0] = 'beeuni'; app()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        # The tests' own cache folder (set below), never the user's: PATH and the rest stay out.
        env={
            "NO_COLOR": "1",
            "PATH": "",
            "BEEUNI_CACHE_DIR": os.environ["BEEUNI_CACHE_DIR"],
            "GIT_CEILING_DIRECTORIES": os.environ["GIT_CEILING_DIRECTORIES"],
            **(env or {}),
        },
    )
    return Result(done.stdout, done.stderr, done.returncode)


@pytest.fixture(autouse=True, scope="session")
def _private_rule_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests compile rules into a cache of their own, never the user's."""
    os.environ["BEEUNI_CACHE_DIR"] = str(tmp_path_factory.mktemp("rule-cache"))
    # The projects kept in this repository are no releases of it: git stops looking above ROOT,
    # so whether a case's files are committed yet changes nothing (a release case makes its own
    # repository, outside)
    os.environ["GIT_CEILING_DIRECTORIES"] = str(ROOT)
    os.environ.setdefault("BEEUNI_BUN", str(ROOT / "node_modules" / ".bin" / "bun"))  # `validate --modules`
