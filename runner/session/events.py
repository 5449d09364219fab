"""RunEvents: what a front end hears of a run while it goes on, one protocol for all of them (the CLI's case
lines and progress, a script's own hooks). The base class hears nothing: override what you need.

    started(total)   how many cases (times their repeats) will be played
    result(result)   each case's result, whole, as it is saved: opt-in (override it), because a result scored
                     in a worker process is then read back from its line and validated (0.1-0.6 ms each)
    saved(digest)    each saved result's digest (runner.results.digest: what a console line reads, `whole()`)
    notice(message)  a pause ahead, said before it happens (a model loading)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results.digest import ResultDigest
    from ..results.models import CaseResult


class RunEvents:
    def started(self, total: int) -> None:
        pass

    def result(self, result: CaseResult) -> None:
        pass

    def saved(self, digest: ResultDigest) -> None:
        pass

    def notice(self, message: str) -> None:
        pass

    @property
    def wants_results(self) -> bool:
        """Whether `result` is overridden: only then is each result validated whole for it."""
        return type(self).result is not RunEvents.result


class CallbackEvents(RunEvents):
    """RunEvents from the loose callbacks runner.api.run took before (on_start, on_result, on_saved, on_notice)."""

    def __init__(self, on_start=None, on_result=None, on_saved=None, on_notice=None):
        self.on_start, self.on_result, self.on_saved, self.on_notice = on_start, on_result, on_saved, on_notice

    def started(self, total: int) -> None:
        if self.on_start is not None:
            self.on_start(total)

    def result(self, result: CaseResult) -> None:
        self.on_result(result)

    def saved(self, digest: ResultDigest) -> None:
        if self.on_saved is not None:
            self.on_saved(digest)

    def notice(self, message: str) -> None:
        if self.on_notice is not None:
            self.on_notice(message)

    @property
    def wants_results(self) -> bool:
        return self.on_result is not None
