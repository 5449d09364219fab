"""THE verdict of a run: its exit code and the one line that says why, decided here and nowhere else.

Every front end reports this decision: the CLI exits with it, `evaluate` returns it (`Report.passed`),
`evaluate_file` raises on it, pytest sets its session's exit status from it, `watch` prints it. The gates,
most serious first: interrupted (2); the report not written, the run stopped by a fault, a case in error or
unscored, a verdict resting on the offline judge fallback when not accepted (3); failed cases below
min_pass_rate, -x's stop, a regression against --baseline (1); every case skipped (5); else 0. A --matrix run's
gates hold for each variant: min_pass_rate must be reached by every variant, and the reason names the variant
that fails.

Only the standard library: the results' tally is read by its attributes (counts, finished, selected,
judge_fallback_cases, pass_rate), so this module imports nothing of evalrun's but runner/layout.py (the codes).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..layout import EXIT_ERRORS, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_CASES, EXIT_OK, EXIT_USAGE  # noqa: F401


@dataclass(frozen=True)
class Verdict:
    exit_code: int
    reason: str  # one line for people, ending in ": exit N"

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK


@dataclass(frozen=True)
class BaselineGate:
    """What the --baseline comparison found (runner.report.compare.Baseline.compare)."""
    path: str
    regressions: Sequence[str]
    newly_passing: int
    compared: int


def decide(tally: Any, *, min_pass_rate: float | None = None, judge_may_fall_back: bool = False,
           stop_reason: str | None = None, interrupted: bool = False, first_failure: str | None = None,
           baseline: BaselineGate | None = None, report_error: str | None = None,
           variants: Sequence[tuple[str, float | None, int]] = ()) -> Verdict:
    """The run's verdict from its tally and gates. `first_failure`: -x stopped the run after this case (the
    run's own verdict, exit 1, not a fault); `report_error`: report.json could not be written; `variants`: a
    --matrix run's (variant id, pass rate, failed cases), each gated alone."""
    verdict = _from_results(tally, min_pass_rate=min_pass_rate, judge_may_fall_back=judge_may_fall_back,
                            stop_reason=None if first_failure else stop_reason, interrupted=interrupted)
    if variants:
        verdict = per_variant(verdict, variants, min_pass_rate)
    if first_failure:
        not_run = len(tally.selected) - len(tally.finished)
        verdict = Verdict(verdict.exit_code, f"stopped after the first failure ({first_failure}), "
                                             f"{not_run} case(s) not run; {verdict.reason}")
    if baseline is not None:
        verdict = with_baseline(verdict, baseline)
    return not_written(verdict, report_error) if report_error is not None else verdict


def per_variant(verdict: Verdict, variants: Sequence[tuple[str, float | None, int]],
                min_pass_rate: float | None) -> Verdict:
    """A matrix run passes only when every variant does: with min_pass_rate, each variant must reach it (the
    run's rate may hide a variant far below it); a failing run names the variants with failed cases."""
    if verdict.exit_code not in (EXIT_OK, EXIT_FAILED):
        return verdict
    if min_pass_rate is not None:
        below = [f"variant '{vid}': pass rate {rate:.2f} is below min_pass_rate {min_pass_rate:.2f}"
                 for vid, rate, _ in variants if rate is not None and rate < min_pass_rate]
        if below:
            return Verdict(EXIT_FAILED, "; ".join(below) + f" ({_cause(verdict)}): exit 1")
        return verdict
    failing = [f"'{vid}' {failed}" for vid, _, failed in variants if failed]
    if verdict.exit_code == EXIT_FAILED and failing:
        return Verdict(EXIT_FAILED, f"{_cause(verdict)} (by variant: {', '.join(failing)}): exit 1")
    return verdict


def not_written(verdict: Verdict, report_error: str) -> Verdict:
    """A run whose report.json could not be written exits 3 (an interrupted one keeps its 2)."""
    if verdict.exit_code in (EXIT_INTERRUPTED, EXIT_ERRORS):
        return verdict
    return Verdict(EXIT_ERRORS, f"{report_error}; {_cause(verdict)}: exit {EXIT_ERRORS}")


def with_baseline(verdict: Verdict, gate: BaselineGate) -> Verdict:
    """A run that fell behind its baseline fails (exit 1); an interrupted or faulty run keeps that verdict."""
    before = _cause(verdict)
    if verdict.exit_code not in (EXIT_OK, EXIT_FAILED):
        return verdict
    if gate.regressions:
        kept = f"; {before}" if before and not before.startswith(("all cases passed", "nothing failed")) else ""
        return Verdict(EXIT_FAILED, f"baseline {gate.path}: " + "; ".join(gate.regressions) + kept + ": exit 1")
    return Verdict(verdict.exit_code, f"{before}; no regression against baseline {gate.path} ({gate.newly_passing} "
                                      f"newly passing, {gate.compared} compared): exit {verdict.exit_code}")


def _cause(verdict: Verdict) -> str:
    return verdict.reason.rsplit(": exit ", 1)[0]


def _from_results(tally: Any, *, min_pass_rate: float | None, judge_may_fall_back: bool,
                  stop_reason: str | None, interrupted: bool) -> Verdict:
    """pytest's codes, most serious first, each with the one line that says why."""
    counts = tally.counts
    finished, total = len(tally.finished), len(tally.selected)
    if interrupted:
        return Verdict(EXIT_INTERRUPTED, f"interrupted ({stop_reason or 'stopped'}): {finished} of {total} "
                                         "cases finished: exit 2")
    if stop_reason:  # the run could not go on (a full disk for results): what finished is reported
        return Verdict(EXIT_ERRORS, f"stopped: {stop_reason}; {finished} of {total} cases finished: exit 3")
    problems = []
    if counts["error"]:
        problems.append(f"{counts['error']} case(s) ended in error")
    if counts["unscored"]:
        problems.append(f"{counts['unscored']} case(s) could not be scored")
    if tally.judge_fallback_cases and not judge_may_fall_back:
        problems.append(f"{tally.judge_fallback_cases} case(s) rest on verdicts reached without the judge, which "
                        "failed (set judge.offline_fallback: true to accept them)")
    if problems:
        return Verdict(EXIT_ERRORS, "; ".join(problems) + ": exit 3")
    if counts["failed"]:
        rate = tally.pass_rate
        if min_pass_rate is not None and rate is not None and rate >= min_pass_rate:
            return Verdict(EXIT_OK, f"min_pass_rate {min_pass_rate:.2f} reached ({rate:.2f}) although "
                                    f"{counts['failed']} case(s) failed: exit 0")
        if min_pass_rate is not None and rate is not None:
            return Verdict(EXIT_FAILED, f"{counts['failed']} case(s) failed; pass rate {rate:.2f} is below "
                                        f"min_pass_rate {min_pass_rate:.2f}: exit 1")
        return Verdict(EXIT_FAILED, f"{counts['failed']} case(s) failed: exit 1")
    if not counts["passed"]:  # every case was skipped: nothing was checked, which is not a green run
        what = f"every case was skipped ({counts['skipped']})" if counts["skipped"] else "no case finished"
        return Verdict(EXIT_NO_CASES, f"{what}: nothing was checked: exit 5")
    skipped = f" ({counts['skipped']} skipped)" if counts["skipped"] else ""
    return Verdict(EXIT_OK, f"all cases that ran passed{skipped}: exit 0" if skipped else "all cases passed: exit 0")
