"""Playing a run under --repeat auto (runner.results.auto_repeat): each case's repeats are scheduled in rounds.

A case starts with the rule's minimum runs; when all its started runs have finished, the rule looks at their
outcomes (and only at them) and gives it the runs it needs before it could possibly stop, or none. Every
round's runs are jobs of their own, so with -j N the later repeats of unsettled cases run side by side with
the others. Given the same outcomes the same runs are made, whatever order the runs finish in.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..results.auto_repeat import AutoRepeat

if TYPE_CHECKING:
    from ..results.models import CaseResult
    from .case_index import CaseRef
    from .execute import CaseRunner, Stop


class RepeatRounds:
    """Each case's runs so far (started, finished, passed) and the jobs they call for, as (position, repeat)."""

    def __init__(self, cases: int, rule: AutoRepeat) -> None:
        self.rule = rule
        self.started, self.finished, self.passed = [0] * cases, [0] * cases, [0] * cases

    def first_jobs(self) -> list[tuple[int, int]]:
        jobs = []
        for position in range(len(self.started)):
            jobs.extend(self._start(position, self.rule.runs_before_possible_stop(0, 0)))
        return jobs

    def finish(self, position: int, results: list[CaseResult]) -> list[tuple[int, int]]:
        """Record one finished run (it passed when every result it made passed); the case's next jobs, if any.
        A skipped run ends the case: nothing about it can be settled by running it again."""
        self.finished[position] += 1
        skipped = any(r.status == "skipped" for r in results)
        self.passed[position] += bool(results) and all(r.status == "passed" for r in results)
        if skipped:
            self.started[position] = max(self.started[position], self.rule.max)  # no further round
        if self.finished[position] < self.started[position] or skipped:
            return []  # a round still running, or the case is over
        runs, passed = self.finished[position], self.passed[position]
        return self._start(position, self.rule.runs_before_possible_stop(passed, runs))

    def _start(self, position: int, count: int) -> list[tuple[int, int]]:
        first = self.started[position]
        self.started[position] += count
        return [(position, repeat) for repeat in range(first, first + count)]


async def run_cases_auto(refs: list[CaseRef], runner: CaseRunner,
                         on_result: Callable[[int, int, CaseResult], None], stop: Stop, concurrency: int,
                         rule: AutoRepeat) -> None:
    """As runner.run.execute.run_cases, each case repeated by `rule` instead of a fixed number of times."""
    from .execute import PARTS_PER_REPEAT

    rounds = RepeatRounds(len(refs), rule)
    queue: asyncio.Queue = asyncio.Queue()
    for job in rounds.first_jobs():
        queue.put_nowait(job)
    pending = [queue.qsize()]  # jobs queued or running; the run is over when none is left
    if not pending[0]:
        return
    workers_count = max(1, min(concurrency, pending[0]))

    async def worker() -> None:
        while True:
            job = await queue.get()
            if job is None or stop.reason is not None:
                return
            position, repeat = job
            results = await runner.run(refs[position], repeat)
            if stop.reason is not None and stop.interrupted:
                return  # finished after the stop: reported as not run, like the others in flight
            for part, result in enumerate(results):
                on_result(position, repeat * PARTS_PER_REPEAT + part, result)
            more = rounds.finish(position, results)
            pending[0] += len(more) - 1
            for next_job in more:
                queue.put_nowait(next_job)
            if pending[0] == 0:
                for _ in range(workers_count):
                    queue.put_nowait(None)  # every case is settled or at its maximum: the workers end

    workers = [asyncio.ensure_future(worker()) for _ in range(workers_count)]
    stop.watch(workers)
    await asyncio.gather(*workers, return_exceptions=True)
