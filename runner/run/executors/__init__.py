"""Executors: what runs a prepared run's cases, and where. The seam between planning a run and playing it.

    LocalExecutor        asyncio tasks in this process (worker threads for reading and scoring); live
                         cases and judges share the run's model limit here. Always able to run anything.
    ReplayPoolExecutor   recorded cases only, scored in a pool of processes sized from the CPUs, fed in
                         batches; the results come back to this process, which saves them as they come.
    RayExecutor          on a Ray cluster (RAY_ADDRESS, or a local one), in batches by the --shard hash: recorded
                         cases as Ray tasks, live ones in an async actor per node, every model call of the run
                         within one cluster-wide budget; only with --executor ray (runner.run.executors.ray_cluster).

Both hand each result to `Work.save` with its case's position, exactly as the other would have made it:
scoring, checks, the run folder and the reports never know which executor ran a case. `choose_executor`
picks one for a run (`--executor`, default `auto`).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .base import Executor, ExecutorUnavailable, Work

if TYPE_CHECKING:
    from ...config.model import Config
    from ..case_index import CaseRef
    from ..execute import RunOptions

__all__ = ["EXECUTORS", "Executor", "ExecutorUnavailable", "Work", "choose_executor", "pool_size", "usable_cpus"]

EXECUTORS = ("auto", "local", "processes", "ray")
MIN_POOL_JOBS = 64  # below this, starting processes costs more than a second core saves


def choose_executor(requested: str, refs: Sequence[CaseRef], *, repeats: int, concurrency: int,
                    config: Config, options: RunOptions, auto: bool = False) -> Executor:
    """The executor for these cases: `requested` (--executor) when it is `local` or `processes`; with
    `auto`, the process pool when the run only scores recordings and can use more than one core, else
    local. ExecutorUnavailable when `processes` was asked for a run it cannot take. `auto` (--repeat auto):
    only the local executor decides a case's next runs as its runs finish."""
    from .local import LocalExecutor

    if requested == "local" or (auto and requested == "auto"):
        return LocalExecutor()
    if auto:
        raise ExecutorUnavailable(f"--executor {requested} cannot run --repeat auto, whose next runs of a case are "
                                  "decided as its runs finish, in this process; use --executor local (or auto), "
                                  "or a fixed --repeat N")
    if requested == "ray":
        return _ray_executor(refs, options)
    if requested == "auto" and _plays_live(refs, options):
        return LocalExecutor()  # whatever else holds: the pool and multiprocessing are then never imported
    from .replay_pool import ReplayPoolExecutor

    why_not = _why_not_pool(refs, repeats, concurrency, config, options, forced=requested == "processes")
    if requested == "processes":
        if why_not:
            raise ExecutorUnavailable(f"--executor processes cannot run this run: {why_not}; use --executor local")
        return ReplayPoolExecutor(pool_size(concurrency))
    return LocalExecutor() if why_not else ReplayPoolExecutor(pool_size(concurrency))


def _ray_executor(refs: Sequence[CaseRef], options: RunOptions) -> Executor:
    from .ray_cluster import INSTALL_HINT, RayExecutor, connect_timeout, ray_installed, unreachable

    if not ray_installed():
        raise ExecutorUnavailable(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}")
    address = os.environ.get("RAY_ADDRESS")
    why = unreachable(address, connect_timeout()) if address else None
    if why:
        raise ExecutorUnavailable(f"--executor ray cannot run this run: {why}")
    return RayExecutor()


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool_size(concurrency: int) -> int:
    """One process per usable CPU, never more than -j."""
    return max(1, min(usable_cpus(), concurrency))


def _why_not_pool(refs: Sequence[CaseRef], repeats: int, concurrency: int, config: Config,
                  options: RunOptions, *, forced: bool) -> str | None:
    """Why the process pool cannot (or, for `auto`, should not) run these cases; None when it should."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform cannot fork processes"
    # What the run is comes before what this process holds: the same run gets the same answer in any process
    if _plays_live(refs, options):
        live = next(ref.id for ref in refs if not ref.recorded)
        return f"case '{live}' is played live (the pool scores recordings only)"
    if _threads_running() > 1:  # forking a process with threads can copy a lock someone holds
        return ("this process runs other threads (the calling program's, or a model an earlier run in it loaded); "
                "forking it is not safe")
    if forced:
        return None
    if concurrency < 2 or usable_cpus() < 2:
        return "one core (or -j 1)"
    if len(refs) * repeats < MIN_POOL_JOBS:
        return "too few cases"
    if config.judge is not None and config.enable_fuzzy_matching:
        return "a judge is configured (its calls run -j at a time in this process)"
    if config.embeddings.enabled and _embeddings_installed():
        return "the embedding model may load (once here, not once per process)"
    return None


def _plays_live(refs: Sequence[CaseRef], options: RunOptions) -> bool:
    """Whether some case is played live (the pool scores recordings only)."""
    return options.replay_dir is None and options.conversations_dir is None and not all(ref.recorded for ref in refs)


def _threads_running() -> int:
    from .replay_pool import threads_running

    return threads_running()


def _embeddings_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("sentence_transformers") is not None
