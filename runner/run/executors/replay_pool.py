"""The replay pool: recorded cases scored in worker processes, one per usable CPU.

Scoring a recording is pure CPU (read the transcript, build the trajectory, score it), so threads share
one core; processes use them all. The pool is forked once the run is planned: each worker starts with
the run's collected cases and its case runner already in memory (nothing is pickled to start it, and
the cases collection kept loaded are not read again). This process hands out batches of job numbers, a
few per worker in flight so that no worker waits; each batch comes back as its cases' results (and the
model calls they made, counted in this run's totals), and each result is saved at once, as the local
executor would. A worker sends each result as its digest (runner.results.digest): its line of results.jsonl
and the few fields this process reads, so this process, which writes every worker's lines, never validates
a line back into a CaseResult unless something asks for the whole result. Workers ignore Ctrl-C: this process decides what a stop means. A worker that dies
takes only its batch with it: those cases become errors that say so, and a new pool runs the rest.
"""
from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Optional

from .base import Executor, Work
from ..execute import PARTS_PER_REPEAT, CaseRunner
from ...results.digest import ResultDigest
from ...results.models import CaseResult

MAX_BATCH = 64
MIN_BATCH = 4
BATCHES_PER_WORKER = 8  # enough for the workers to finish together; few enough to cost little to hand out

Batch = list[tuple[int, int]]  # jobs: (a case's position in the run, which repeat)
Played = list[tuple[int, int, "CaseResult | ResultDigest"]]  # (position, part, the result or its digest)

# The worker's copy of the run (set before the pool forks, so each worker inherits it)
_work: Optional[Work] = None


class ReplayPoolExecutor(Executor):
    name = "processes"

    def __init__(self, processes: int):
        self.processes = processes

    async def run(self, work: Work) -> None:
        global _work
        from ...llm.runtime import current_runtime

        jobs = [(position, repeat) for position in range(len(work.refs)) for repeat in range(work.repeats)]
        runtime = current_runtime()  # the calls workers make count in this run's totals
        task = asyncio.current_task()
        assert task is not None
        work.stop.watch([task])  # a stop cancels the waits below; the pool then drops what was not started
        _work = work
        try:
            # The first case is scored here: the modules scoring imports on first use are then imported once,
            # before the fork, instead of once per worker.
            if not self._save(work, _play_batch(jobs[:1]), runtime):
                return
            batches = list(_batches(jobs[1:], self.processes))
            if not _alone():
                # Scoring started threads (the embedding model's, a python check that hung): a fork would copy
                # the locks they hold and could hang, so the cases are scored here, a batch at a time.
                for batch in batches:
                    if not self._save(work, _play_batch(batch), runtime):
                        return
                    await asyncio.sleep(0)  # a signal's stop request runs here
                return
            gc.freeze()  # the workers' collector then never walks (and so copies) the run's collected cases
            loop = asyncio.get_running_loop()
            while batches and work.stop.reason is None:
                suspects, batches = await self._run_pool(work, batches, loop, runtime, self.processes)
                if suspects and not await self._run_suspects(work, suspects, loop, runtime):
                    return
        except asyncio.CancelledError:
            if work.stop.reason is None:
                raise
        finally:
            _work = None
            gc.unfreeze()

    @staticmethod
    def _save(work: Work, played: tuple[list, list], runtime: Any) -> bool:
        """Save a batch's results (and count its model calls); False once the run was asked to stop."""
        results, calls = played
        if work.stop.reason is not None:
            return False
        for call in calls:
            runtime.record(call)
        for position, part, result in results:
            work.save(position, part, result)
            if work.stop.reason is not None:
                return False
        return True

    async def _run_pool(self, work: Work, batches: list[Batch], loop: asyncio.AbstractEventLoop, runtime: Any,
                        processes: int) -> tuple[list[Batch], list[Batch]]:
        """Run `batches` in a new pool of `processes`. When a worker dies, the pool is gone: returns the
        batches that were in flight (one of them killed it) and those not started; else two empty lists."""
        pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_start_worker)
        waiting: dict[asyncio.Future, Batch] = {}
        left = iter(batches)
        broken = False
        try:
            def submit_next() -> None:
                batch = next(left, None)
                if batch is not None:
                    waiting[asyncio.wrap_future(pool.submit(_play_batch, batch), loop=loop)] = batch

            for _ in range(processes * 2):
                submit_next()
            while waiting:
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    try:
                        played = future.result()
                    except BrokenProcessPool:
                        broken = True
                        break
                    waiting.pop(future)
                    if not self._save(work, played, runtime):
                        return [], []
                    submit_next()
                if broken:
                    _kill_workers(pool)  # the survivors may be blocked writing results nobody will read now
                    return list(waiting.values()), list(left)
            return [], []
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    async def _run_suspects(self, work: Work, suspects: list[Batch], loop: asyncio.AbstractEventLoop,
                            runtime: Any) -> bool:
        """The batches in flight when a worker died, each alone in a pool of its own: the one that kills its
        worker again is lost (its cases errors that say so), the others are scored. False once stopped."""
        for batch in suspects:
            again, _ = await self._run_pool(work, [batch], loop, runtime, 1)
            if again and not self._save(work, (_lost(work, batch), []), runtime):
                return False
            if work.stop.reason is not None:
                return False
        return True


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    # Python 3.11's pool joins the surviving workers of a broken pool without ending them (3.12 ends them)
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, ValueError):
            pass


def _batches(jobs: Batch, processes: int):
    size = max(MIN_BATCH, min(MAX_BATCH, len(jobs) // (processes * BATCHES_PER_WORKER) or 1))
    for start in range(0, len(jobs), size):
        yield jobs[start:start + size]


def threads_running() -> int:
    """Threads of this process, native ones included (a library's thread pool) where the system tells."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _alone(patience_s: float = 0.05) -> bool:
    """Whether this process runs no other thread, a thread that just ended given a moment to be gone (its
    join returns before the system has removed it)."""
    deadline = time.monotonic() + patience_s
    while threads_running() > 1:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _start_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the run's process decides
    if sys.platform == "linux":  # and a worker never outlives it, even when it is killed outright
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _play_batch(jobs: Batch) -> tuple[Played, list]:
    """In a worker: the results of a batch's jobs as (position, part, the result's digest, which carries its
    line of results.jsonl) (the result itself when there is no run folder to serialise for), and the model
    calls made."""
    assert _work is not None, "the pool is forked from a run"
    runner: CaseRunner = _work.runner
    repeats = _work.repeats
    serialise = _work.serialise
    out: Played = []
    calls: list = []
    for position, repeat in jobs:
        results = runner.run_recorded(_work.refs[position], repeat if repeats > 1 else None, calls_made=calls)
        for part, result in enumerate(results):
            # A result travels as its digest (made here, where the work is spread): its line and a few fields
            # pickle in microseconds; a result's models take a millisecond to unpickle, its line 0.1-0.6 ms to
            # validate on the run's process, which saves every worker's results.
            out.append((position, repeat * PARTS_PER_REPEAT + part,
                        serialise.digest(result) if serialise is not None else result))
    return out, calls


def _lost(work: Work, batch: Batch) -> Played:
    """The results of a batch that killed its worker process twice: each case an error that says so."""
    from ..execute import case_error

    error = (f"the worker process scoring this case's batch of {len(batch)} ended abruptly, twice (killed, or "
             "crashed in native code); the other cases went on")
    return [(position, repeat * PARTS_PER_REPEAT, case_error(work.refs[position], repeat if work.repeats > 1 else None,
                                                             error))
            for position, repeat in batch]
