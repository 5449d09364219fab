"""What every executor is given and promises (runner.run.executors)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

if TYPE_CHECKING:
    from ..case_index import CaseRef
    from ..execute import CaseRunner, Stop
    from ...results.folder import ResultLines


@dataclass
class Work:
    """What an executor runs: the selected cases (each `repeats` times), how one case is played, where each
    result goes (`save(position, part, result)`, never raising), the run's stop, and how a result becomes its
    line of results.jsonl where it was made (`serialise(result) -> (result as saved, line)`; `serialise.digest
    (result)` -> the digest `save` takes in its place, which carries the line: runner.results.digest)."""

    refs: Sequence["CaseRef"]
    repeats: int
    concurrency: int
    runner: "CaseRunner"
    save: Callable[..., None]
    stop: "Stop"
    serialise: Optional["ResultLines"] = None

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
