"""The run's summary, counted as results arrive: nothing here keeps a case's result.

A run of 50,000 cases must not hold 50,000 results in memory, so the summary is a running tally
(counts, metric sums, the ids that finished) and the exit code is decided from it at the end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .models import CaseRepeats, CaseResult, RepeatSummary, Summary
from .redteam import RedteamTally
from .stats import pass_at_k, pass_hat_k

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_ERRORS, EXIT_USAGE, EXIT_NO_CASES = 0, 1, 2, 3, 4, 5
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

    def add(self, result: CaseResult, case_id: Optional[str] = None) -> None:
        """Count one result; `case_id` names its case when it differs from the result's id (a recorded run)."""
        if self.repeats > 1:
            self._runs.setdefault(result.id, []).append(result.status)
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

    def mean(self, name: str) -> Optional[float]:
        return self._sums[name] / self._ns[name] if self._ns[name] else None

    @property
    def pass_rate(self) -> Optional[float]:
        decided = self.counts["passed"] + self.counts["failed"]
        return self.counts["passed"] / decided if decided else None

    def not_run(self) -> list[str]:
        return [case_id for case_id in self.selected if case_id not in self.finished]

    def summary(self, *, min_pass_rate: Optional[float], judge_may_fall_back: bool, stop_reason: Optional[str],
                interrupted: bool, elapsed_s: float, model_usage=None) -> Summary:
        repeats = self._settle_repeats() if self.repeats > 1 else None
        code, reason = decide_exit(self, min_pass_rate=min_pass_rate, judge_may_fall_back=judge_may_fall_back,
                                   stop_reason=stop_reason, interrupted=interrupted)
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
                                         pass_hat_k=pass_hat_k(len(runs), passed, len(runs))))
            if len(set(statuses)) > 1:
                flaky.append(case_id)
        at, hat = {}, {}
        for k in range(1, self.repeats + 1):
            eligible = [c for c in cases if c.runs >= k]  # an interrupted case may have fewer runs
            if eligible:
                at[str(k)] = sum(pass_at_k(c.runs, c.passed, k) for c in eligible) / len(eligible)
                hat[str(k)] = sum(pass_hat_k(c.runs, c.passed, k) for c in eligible) / len(eligible)
        return RepeatSummary(runs=self.repeats, policy=self.policy, pass_at_k=at, pass_hat_k=hat, flaky=flaky,
                             per_case=cases)


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


def decide_exit(tally: Tally, *, min_pass_rate: Optional[float], judge_may_fall_back: bool,
                stop_reason: Optional[str], interrupted: bool) -> tuple[int, str]:
    """pytest's codes, most serious first, each with the one line that says why."""
    counts = tally.counts
    finished = len(tally.finished)
    if interrupted:
        return EXIT_INTERRUPTED, f"interrupted ({stop_reason or 'stopped'}): {finished} of {len(tally.selected)} " \
                                 "cases finished: exit 2"
    if stop_reason:  # the run could not go on (a full disk for results): what finished is reported
        return EXIT_ERRORS, f"stopped: {stop_reason}; {finished} of {len(tally.selected)} cases finished: exit 3"
    problems = []
    if counts["error"]:
        problems.append(f"{counts['error']} case(s) ended in error")
    if counts["unscored"]:
        problems.append(f"{counts['unscored']} case(s) could not be scored")
    if tally.judge_fallback_cases and not judge_may_fall_back:
        problems.append(f"{tally.judge_fallback_cases} case(s) rest on verdicts reached without the judge, which "
                        "failed (set judge.offline_fallback: true to accept them)")
    if problems:
        return EXIT_ERRORS, "; ".join(problems) + ": exit 3"
    if counts["failed"]:
        rate = tally.pass_rate
        if min_pass_rate is not None and rate is not None and rate >= min_pass_rate:
            return EXIT_OK, f"min_pass_rate {min_pass_rate:.2f} reached ({rate:.2f}) although {counts['failed']} " \
                            "case(s) failed: exit 0"
        if min_pass_rate is not None and rate is not None:
            return EXIT_FAILED, f"{counts['failed']} case(s) failed; pass rate {rate:.2f} is below min_pass_rate " \
                                f"{min_pass_rate:.2f}: exit 1"
        return EXIT_FAILED, f"{counts['failed']} case(s) failed: exit 1"
    if not counts["passed"]:  # every case was skipped: nothing was checked, which is not a green run
        what = f"every case was skipped ({counts['skipped']})" if counts["skipped"] else "no case finished"
        return EXIT_NO_CASES, f"{what}: nothing was checked: exit 5"
    skipped = f" ({counts['skipped']} skipped)" if counts["skipped"] else ""
    return EXIT_OK, f"all cases that ran passed{skipped}: exit 0" if skipped else "all cases passed: exit 0"
