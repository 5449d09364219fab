"""What every executor is given and promises (runner.run.executors)."""
from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...results.auto_repeat import AutoRepeat
    from ...results.folder import ResultLines
    from ..case_index import CaseRef
    from ..execute import CaseRunner, Stop


@dataclass
class Work:
    """What an executor runs: the selected cases (each `repeats` times), how one case is played, where each
    result goes (`save(position, part, result)`, never raising), the run's stop, and how a result becomes its
    line of results.jsonl where it was made (`serialise(result) -> (result as saved, line)`; `serialise.digest
    (result)` -> the digest `save` takes in its place, which carries the line: runner.results.digest)."""

    refs: Sequence[CaseRef]
    repeats: int
    concurrency: int
    runner: CaseRunner
    save: Callable[..., None]
    stop: Stop
    serialise: ResultLines | None = None
    auto: AutoRepeat | None = None  # --repeat auto: each case repeated by this rule, `repeats` its maximum

    @property
    def jobs(self) -> int:
        return len(self.refs) * self.repeats


class Executor(ABC):
    name: str

    @abstractmethod
    async def run(self, work: Work) -> None:
        """Run every case of `work`, saving each result as it comes; return when all ran or the stop was
        asked (a case still running then is not saved: it counts as not run)."""


class ExecutorUnavailable(Exception):
    """The executor asked for cannot run this run; the message says why and what to do."""


async def take_pending_stop() -> None:
    """After an executor returned from a stopped run: an executor that watches its own task (the pool, Ray) has it
    cancelled by a stop asked while that task ran (-x or a full disk, from `save`), and the cancellation lands at
    the task's next await or, with none left, when it ends, where asyncio.run would raise it as a traceback.
    It lands here instead and is dropped: the stop is the run's own verdict."""
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        pass
