"""Run ``compare_project`` over many projects: in this process, on a local process pool, or on a
Dask distributed cluster — the same task everywhere, so the results are the same everywhere.

The two compiled rule sets travel as ``marshal`` bytes (the form the rule cache already stores
them in: code objects do not pickle) with a digest; each worker process unmarshals a rule set
once and keeps it, so the rules are compiled once, on the client, and loaded once per worker. A
local pool gets them through its initializer, a Dask cluster as data scattered to every worker.
Projects go out in batches, to keep the per-task overhead of either scheduler small beside the
work. A batch that fails as a whole (a worker died) is reported as a failure of each of its
projects; the run goes on.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from typing import TYPE_CHECKING, NamedTuple

from .compare import compare_project, not_compared

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Project = tuple[str, str]  # (as shown in the report, path to read)

#: at most this many projects per task: small enough to spread the work, large enough that a
#: task's scheduling cost is a small part of it
MAX_BATCH = 32


class PackedRules(NamedTuple):
    digest: str
    code: bytes


class SchedulerUnavailable(Exception):
    """The Dask cluster cannot be used: the package is missing or the scheduler cannot be reached."""


def pack(program: dict[str, Any]) -> PackedRules:
    code = marshal.dumps(program)
    return PackedRules(hashlib.sha256(code).hexdigest(), code)


_unpacked: dict[str, dict[str, Any]] = {}
_installed: list[PackedRules] = []


def unpack(rules: PackedRules) -> dict[str, Any]:
    """The program of a packed rule set, unmarshalled once per process."""
    program = _unpacked.get(rules.digest)
    if program is None:
        if len(_unpacked) >= 4:  # a long-lived Dask worker may see many rule sets over time
            _unpacked.clear()
        program = _unpacked[rules.digest] = marshal.loads(rules.code)
    return program


def compare_batch(batch: Sequence[Project], base: PackedRules, new: PackedRules) -> list[dict[str, Any]]:
    """The task: compare each project of the batch under both rule sets."""
    base_program, new_program = unpack(base), unpack(new)
    return [compare_project(shown, path, base_program, new_program) for shown, path in batch]


def _install(base: PackedRules, new: PackedRules) -> None:
    """A pool worker's initializer: load both rule sets once, before any task."""
    unpack(base)
    unpack(new)
    _installed[:] = [base, new]


def _compare_installed_batch(batch: Sequence[Project]) -> list[dict[str, Any]]:
    return compare_batch(batch, _installed[0], _installed[1])


def batches(projects: Sequence[Project], workers: int) -> list[list[Project]]:
    size = max(1, min(MAX_BATCH, -(-len(projects) // (workers * 4))))
    return [list(projects[start : start + size]) for start in range(0, len(projects), size)]


def local_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _nothing(done: int) -> None:
    """No one follows the progress."""


def run_local(
    projects: Sequence[Project],
    base: PackedRules,
    new: PackedRules,
    workers: int,
    compared: Callable[[int], None] = _nothing,
) -> list[dict[str, Any]]:
    """Compare every project with ``workers`` processes (1: in this process); ``compared`` is
    told how many projects each finished batch held."""
    if workers <= 1 or len(projects) <= 1:
        results = compare_batch(projects, base, new)
        compared(len(projects))
        return results
    from concurrent.futures import ProcessPoolExecutor

    work = batches(projects, workers)
    with ProcessPoolExecutor(max_workers=workers, initializer=_install, initargs=(base, new)) as pool:
        futures = [pool.submit(_compare_installed_batch, batch) for batch in work]
        return _collect(work, futures, compared)


def run_dask(
    projects: Sequence[Project],
    base: PackedRules,
    new: PackedRules,
    address: str,
    compared: Callable[[int], None] = _nothing,
) -> list[dict[str, Any]]:
    """Compare every project on the Dask cluster whose scheduler listens at ``address``."""
    from importlib import import_module

    try:  # as a plain module object: distributed's functions carry no type hints
        distributed: Any = import_module("distributed")
    except ImportError:
        raise SchedulerUnavailable(
            "--scheduler needs the Dask distributed package: install the `dask` extra (pip install 'beeuni[dask]')"
        ) from None
    try:
        client = distributed.Client(address, timeout="20s", set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise SchedulerUnavailable(f"cannot reach the Dask scheduler at {address}: {err}") from None
    with client:
        workers = max(1, sum(client.nthreads().values()))
        [base_data] = client.scatter([base], broadcast=True, hash=False)
        [new_data] = client.scatter([new], broadcast=True, hash=False)
        work = batches(projects, workers)
        futures = client.map(compare_batch, work, base=base_data, new=new_data, pure=False)
        return _collect(work, futures, compared)


def _collect(
    work: list[list[Project]], futures: Sequence[Any], compared: Callable[[int], None]
) -> list[dict[str, Any]]:
    """Every batch's results (``futures``: one per batch, of either scheduler) in the order of the
    projects; a failed batch is a failure of each of its projects, under both rule sets."""
    collected: list[dict[str, Any]] = []
    for batch, future in zip(work, futures, strict=True):
        try:
            collected.extend(future.result())
        except Exception as err:
            reason = f"the worker failed: {type(err).__name__}: {err}"
            collected.extend(not_compared(shown, reason) for shown, _ in batch)
        compared(len(batch))
    return collected
