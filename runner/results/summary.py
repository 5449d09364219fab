"""The run's summary, counted as results arrive: nothing here keeps a case's result.

A run of 50,000 cases must not hold 50,000 results in memory, so the summary is a running tally
(counts, metric sums, the ids that finished); the run's verdict (exit code and reason) is decided from it
at the end by runner.results.verdict, the one place that decides it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .models import AutoRepeatRule, CaseRepeats, CaseResult, RepeatSummary, Summary, case_label
from .redteam import RedteamTally
from .stats import pass_at_k, pass_hat_k
from .verdict import (  # noqa: F401
    EXIT_ERRORS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_CASES,
    EXIT_OK,
    EXIT_USAGE,
    BaselineGate,
    decide,
)

if TYPE_CHECKING:
    from .auto_repeat import AutoRepeat
    from .digest import ResultDigest

_MEANS = ("journey_completion", "tool_call_precision", "tool_call_recall")


@dataclass
class Tally:
    selected: list[str]  # every case id the run was asked to run, in collection order
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("passed", "failed", "error", "unscored", "skipped"), 0))
    finished: set[str] = field(default_factory=set)
    judge_fallback_cases: int = 0
    _sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(_MEANS, 0.0))
    _ns: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_MEANS, 0))
    repeats: int = 1  # --repeat N: the counts are of cases, each decided from its runs by `policy`
    policy: str = "all"
    _runs: dict[str, list[str]] = field(default_factory=dict)  # result id -> the statuses of its runs
    redteam: RedteamTally = field(default_factory=RedteamTally)  # red-team results by attack and category
    auto: AutoRepeat | None = None  # --repeat auto's rule; `repeats` is then its max

    def add(self, result: CaseResult | ResultDigest, case_id: str | None = None) -> None:
        """Count one result; `case_id` names its case when it differs from the result's id (a recorded run)."""
        if self.repeated:  # a matrix run's case is one case per variant
            self._runs.setdefault(case_label(result.id, getattr(result, "variant", None)), []).append(result.status)
        else:
            self.counts[result.status] += 1
        self.finished.add(case_id or result.id)
        self.redteam.add(result.redteam, result.status)
        if result.judge_fallbacks:
            self.judge_fallback_cases += 1
        if result.metrics is not None:
            for name in _MEANS:
                value = getattr(result.metrics, name)
                if value is not None:
                    self._sums[name] += value
                    self._ns[name] += 1

    @property
    def repeated(self) -> bool:
        """--repeat N with N > 1, or --repeat auto: the counts are of cases, each decided from its runs."""
        return self.repeats > 1 or self.auto is not None

    def mean(self, name: str) -> float | None:
        return self._sums[name] / self._ns[name] if self._ns[name] else None

    @property
    def pass_rate(self) -> float | None:
        decided = self.counts["passed"] + self.counts["failed"]
        return self.counts["passed"] / decided if decided else None

    def not_run(self) -> list[str]:
        return [case_id for case_id in self.selected if case_id not in self.finished]

    def summary(self, *, min_pass_rate: float | None, judge_may_fall_back: bool, stop_reason: str | None,
                interrupted: bool, elapsed_s: float, model_usage=None, first_failure: str | None = None,
                baseline: BaselineGate | None = None, variants=()) -> Summary:
        """The run's summary, its exit code and reason the verdict of runner.results.verdict.decide.
        `first_failure`: -x stopped the run after it (then the run's stop reason); `baseline`: the gate's finding;
        `variants`: a --matrix run's (variant id, pass rate, failed cases), gated each (runner.results.verdict)."""
        repeats = self._settle_repeats() if self.repeated else None
        verdict = decide(self, min_pass_rate=min_pass_rate, judge_may_fall_back=judge_may_fall_back,
                         stop_reason=stop_reason, interrupted=interrupted, first_failure=first_failure,
                         baseline=baseline, variants=variants)
        code, reason = verdict.exit_code, verdict.reason
        stop_reason = first_failure or stop_reason
        return Summary(total=len(self.selected), **self.counts, pass_rate=self.pass_rate,
                       not_run=self.not_run(), judge_fallback_cases=self.judge_fallback_cases,
                       interrupted=interrupted, stop_reason=stop_reason,
                       mean_journey_completion=self.mean("journey_completion"),
                       mean_tool_call_precision=self.mean("tool_call_precision"),
                       mean_tool_call_recall=self.mean("tool_call_recall"),
                       exit_code=code, exit_reason=reason, duration_s=round(elapsed_s, 3),
                       model_usage=model_usage, repeats=repeats, redteam=self.redteam.summary())

    def _settle_repeats(self) -> RepeatSummary:
        """Each repeated case's status under the policy, counted; pass@k and pass^k from its runs. The
        means of the metrics stay over every run."""
        cases, flaky = [], []
        for case_id, statuses in self._runs.items():
            status = repeated_status(statuses, self.policy)
            self.counts[status] += 1
            runs = [s for s in statuses if s != "skipped"]
            passed = runs.count("passed")
            if runs:
                cases.append(CaseRepeats(id=case_id, runs=len(runs), passed=passed, status=status,
                                         pass_at_k=pass_at_k(len(runs), passed, len(runs)),
                                         pass_hat_k=pass_hat_k(len(runs), passed, len(runs)),
                                         settled=self.auto.verdict(passed, len(runs)) if self.auto else None))
            if len(set(statuses)) > 1:
                flaky.append(case_id)
        at, hat = {}, {}
        # under --repeat auto only k up to its min: a larger k would count only the cases still in doubt there
        for k in range(1, (self.auto.min if self.auto else self.repeats) + 1):
            eligible = [c for c in cases if c.runs >= k]  # an interrupted case may have fewer runs
            if eligible:
                at[str(k)] = sum(pass_at_k(c.runs, c.passed, k) for c in eligible) / len(eligible)
                hat[str(k)] = sum(pass_hat_k(c.runs, c.passed, k) for c in eligible) / len(eligible)
        return RepeatSummary(runs=self.repeats, policy=self.policy, pass_at_k=at, pass_hat_k=hat, flaky=flaky,
                             per_case=cases, auto=self._auto_rule(cases))

    def _auto_rule(self, cases: list[CaseRepeats]) -> AutoRepeatRule | None:
        rule = self.auto
        if rule is None:
            return None
        return AutoRepeatRule(max=rule.max, min=rule.min, confidence=rule.confidence,
                              threshold=rule.threshold, total_runs=sum(c.runs for c in cases))



def repeated_status(statuses: list[str], policy: str) -> str:
    """A repeated case's status: passed when its runs satisfy the policy (all / a majority / any passed);
    otherwise the most serious status among its runs that did not pass, so an error still exits 3."""
    runs = [s for s in statuses if s != "skipped"]
    if not runs:
        return "skipped"
    passed = runs.count("passed")
    met = {"all": passed == len(runs), "majority": 2 * passed > len(runs), "any": passed > 0}[policy]
    if met:
        return "passed"
    for status in ("error", "unscored", "failed"):
        if status in runs:
            return status
    return "failed"
