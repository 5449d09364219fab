"""The replay pool: recorded cases scored in worker processes, one per usable CPU.

Scoring a recording is pure CPU (read the transcript, build the trajectory, score it), so threads share
one core; processes use them all. The workers are forked once the run is planned: each starts with the run's
collected cases and its case runner already in memory (nothing is pickled to start it, and the cases
collection kept loaded are not read again). This process hands out batches of job numbers, two per worker in
flight so that no worker waits; each batch comes back as its cases' results (and the model calls they made,
counted in this run's totals), and each result is saved at once, as the local executor would. A worker sends
each result as its digest (runner.results.digest): its line of results.jsonl and the few fields this process
reads, so this process, which writes every worker's lines, never validates a line back into a CaseResult
unless something asks for the whole result.

Each worker talks over a socket of its own (runner.run.executors.pool_process), so a worker that dies, at any
moment, costs only what it held: the batch it was playing is tried again in another worker (a batch that kills
its worker twice is lost: its cases become errors that say how the worker ended), the batches queued behind it
go to the others, and a new worker takes its place. Workers ignore Ctrl-C and hang-ups: this process decides
what a stop means, and on a stop it ends every worker at once (what they were playing counts as not run).
"""
from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections import deque
from typing import Any

from ...results.digest import ResultDigest
from ...results.models import CaseResult
from ..execute import PARTS_PER_REPEAT, CaseRunner
from .base import Executor, Work
from .pool_process import WorkerProcess, stop_workers

MAX_BATCH = 64
MIN_BATCH = 4
BATCHES_PER_WORKER = 8  # enough for the workers to finish together; few enough to cost little to hand out
IN_FLIGHT = 2  # batches a worker holds: the one it plays, and the next, so that it never waits for this process
DEATHS = 2  # a batch whose worker died this many times while playing it is lost (the message says twice)

Batch = list[tuple[int, int]]  # jobs: (a case's position in the run, which repeat)
Played = list[tuple[int, int, "CaseResult | ResultDigest"]]  # (position, part, the result or its digest)

# The worker's copy of the run (set before the workers fork, so each inherits it)
_work: Work | None = None


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
        work.stop.watch([task])  # a stop cancels the waits below; the workers are then ended at once
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
            await asyncio.sleep(0)  # a stop asked while the first case was scored lands before any fork
            gc.freeze()  # the workers' collector then never walks (and so copies) the run's collected cases
            await _Pool(work, runtime, self.processes).play(batches)
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


class _Pool:
    """The workers of one run and the batches they play. A batch is handed out again when the worker holding it
    died: to the next worker free, first of what is left, so no case is played twice and none is forgotten."""

    def __init__(self, work: Work, runtime: Any, processes: int):
        self.work, self.runtime, self.processes = work, runtime, processes
        self.workers: list[WorkerProcess] = []
        self.events: asyncio.Queue = asyncio.Queue()
        self.deaths: dict[int, int] = {}  # id(batch) -> how often a worker died playing it

    async def play(self, batches: list[Batch]) -> None:
        left: deque[Batch] = deque(batches)
        try:
            for _ in range(min(self.processes, len(left))):
                await self._start_worker()
            self._feed(left)
            while any(worker.in_flight for worker in self.workers):
                worker, answer = await self.events.get()
                if answer is None:
                    if not await self._lost_worker(worker, left):
                        return
                    continue
                batch = worker.in_flight.pop(0)
                self._feed(left)  # the next batch goes out before this one is saved: no worker waits on the disk
                if not ReplayPoolExecutor._save(self.work, self._results(batch, answer), self.runtime):
                    return
        finally:
            await stop_workers(self.workers, patient=self.work.stop.reason is None)

    async def _start_worker(self) -> None:
        worker = WorkerProcess.fork(_play_batch, self.workers)
        self.workers.append(worker)
        await worker.listen(self.events)

    def _feed(self, left: deque) -> None:
        for worker in self.workers:
            while left and worker.status is None and len(worker.in_flight) < IN_FLIGHT:
                worker.send(left.popleft())

    async def _lost_worker(self, worker: WorkerProcess, left: deque) -> bool:
        """A worker's socket ended: the batch it was playing is tried again elsewhere, or lost after DEATHS tries;
        the ones queued behind it go back first in line; a new worker takes its place. False once stopped."""
        from ..agents._process import exit_description

        code = await worker.ended()
        self.workers.remove(worker)
        held, worker.in_flight = worker.in_flight, []
        if held:
            playing = held[0]
            self.deaths[id(playing)] = self.deaths.get(id(playing), 0) + 1
            if self.deaths[id(playing)] >= DEATHS:
                held.pop(0)
                why = (f"the worker process scoring this case's batch of {len(playing)} ended while scoring it, "
                       f"twice (the last time it {exit_description(code)}); the other cases went on")
                if not ReplayPoolExecutor._save(self.work, (_errors(self.work, playing, why), []), self.runtime):
                    return False
            left.extendleft(reversed(held))
        if self.work.stop.reason is not None:
            return False
        if left and len(self.workers) < self.processes:
            await self._start_worker()
        self._feed(left)
        return True

    def _results(self, batch: Batch, answer: tuple) -> tuple[list, list]:
        kind, value = answer
        if kind == "played":
            return value
        return _errors(self.work, batch, f"scoring this case's batch of {len(batch)} in a worker process failed: "
                                         f"{value}; the other cases went on"), []


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


def _play_batch(jobs: Batch) -> tuple[Played, list]:
    """In a worker: the results of a batch's jobs as (position, part, the result's digest, which carries its
    line of results.jsonl) (the result itself when there is no run folder to serialise for), and the model
    calls made."""
    assert _work is not None, "the workers are forked from a run"
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


def _errors(work: Work, batch: Batch, error: str) -> Played:
    """Each job of `batch` as an error result saying `error`."""
    from ..execute import case_error

    return [(position, repeat * PARTS_PER_REPEAT, case_error(work.refs[position], repeat if work.repeats > 1 else None,
                                                             error))
            for position, repeat in batch]
