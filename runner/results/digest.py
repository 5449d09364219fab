"""What the run's own process reads of a result while the run goes on: its digest.

The tally, the --baseline gate, -x and the console's line read a dozen fields of each result; the whole
CaseResult (the goals, the calls, the transcript) is read back only when something asks for it (-v's goal
lines, a python `on_result`). In a pool run the digest is made in the worker process, beside the result's
line of results.jsonl, and travels with it: the run's process, which also writes results.jsonl for every
worker, then never validates a line nobody reads whole (about 0.1 ms for a bench_scale line, against 16 µs
to save it from its digest: tests/bench/bench_pool_save.py; 1.2 s of this process's CPU at 10,000 cases).

A digest has the fields of CaseResult it carries under the same names, with the same values, so whatever
reads those fields of a CaseResult (Tally.add, Baseline.add, report.console.case_line) reads them of a
digest alike. `metrics` keeps the three means those read; `checks` each check's name, status and
explanation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .models import CaseResult


class MetricMeans(NamedTuple):
    """The metrics a run averages (and the console's line shows), as Metrics has them."""

    journey_completion: float
    tool_call_precision: float | None
    tool_call_recall: float | None


class CheckVerdict(NamedTuple):
    name: str
    status: str
    explanation: str


_FIELDS = ("id", "status", "run", "repeat", "metrics", "skip_reason", "checks", "extra_calls", "judge_fallbacks",
           "failures", "error", "unscored_reason", "redteam", "decision_notes", "conversation_source", "variant")


class ResultDigest:
    """One saved result as the run's process reads it (see the module's doc). `line` is its line of
    results.jsonl; `whole()` the CaseResult itself, read back from the line the first time it is asked for."""

    __slots__ = (*_FIELDS, "line", "_whole")

    def __init__(self, id: str, status: str, run: int | None, repeat: int | None,
                 metrics: MetricMeans | None, skip_reason: str | None, checks: tuple[CheckVerdict, ...],
                 extra_calls: list[str], judge_fallbacks: list[str], failures: list[str], error: str | None,
                 unscored_reason: str | None, redteam: Any, decision_notes: tuple[str, ...],
                 conversation_source: str | None, variant: str | None, line: str,
                 whole: CaseResult | None = None):
        self.id, self.status, self.run, self.repeat = id, status, run, repeat
        self.metrics, self.skip_reason, self.checks, self.extra_calls = metrics, skip_reason, checks, extra_calls
        self.judge_fallbacks, self.failures, self.error = judge_fallbacks, failures, error
        self.unscored_reason, self.redteam, self.decision_notes = unscored_reason, redteam, decision_notes
        self.conversation_source, self.variant = conversation_source, variant
        self.line = line
        self._whole = whole

    @classmethod
    def of(cls, result: CaseResult, line: str, *, keep: bool = False) -> ResultDigest:
        """The digest of `result` as saved, `line` its line of results.jsonl. `keep`: hold on to `result` for
        `whole()` (in the process that saves it); otherwise it is read back from `line` when asked for."""
        m = result.metrics
        return cls(result.id, result.status, result.run, result.repeat,
                   None if m is None else MetricMeans(m.journey_completion, m.tool_call_precision, m.tool_call_recall),
                   result.skip_reason, tuple(CheckVerdict(c.name, c.status, c.explanation) for c in result.checks),
                   result.extra_calls, result.judge_fallbacks, result.failures, result.error, result.unscored_reason,
                   result.redteam, tuple(decision_notes(result)), result.conversation_source, result.variant, line,
                   result if keep else None)

    def whole(self) -> CaseResult:
        """The CaseResult itself (validated from `line` once, the first time)."""
        if self._whole is None:
            from .models import CaseResult

            self._whole = CaseResult.model_validate_json(self.line)
        return self._whole

    def __reduce__(self):
        # Travels without the CaseResult it may hold: unpickling models costs more than the line's validation
        return ResultDigest, (*(getattr(self, name) for name in _FIELDS), self.line)

    def __repr__(self) -> str:
        return f"ResultDigest(id={self.id!r}, status={self.status!r}, run={self.run!r}, repeat={self.repeat!r})"


def decision_notes(result: CaseResult) -> list[str]:
    """The notes of every comparison the result's goals rest on (`stage: reason`, a cascade stage that could
    not decide), in order: the console counts them by stage."""
    notes = []
    for goal in result.goals:
        for attempt in goal.attempts:
            for verdict in attempt.arguments:
                notes += verdict.notes
        if goal.text_decision:
            notes += goal.text_decision.notes
    return notes
