"""How a case's results are made and finished: the fields every result starts from, a failure as the case's
error, a recording read only in part, the verdicts the judge's fallback reached, and the duration, model
usage and run-level checks settled once the case is done.
"""
from __future__ import annotations

import time
import traceback

from ..checks.run import settle_run_checks
from ..results.models import CaseResult
from .case_index import CaseRef


def judge_fallbacks(result: CaseResult) -> list[str]:
    """The verdicts of this case that were reached by an offline stage because the configured judge
    failed, in the words of the report: which goal, which argument, which stage, and why."""
    found = []
    for goal in result.goals:
        for attempt in goal.attempts:
            for verdict in attempt.arguments:
                if verdict.judge_failure:
                    found.append(f"goal '{goal.name}', argument `{verdict.path}`: decided by {verdict.decided_by} "
                                 f"because the judge failed: {verdict.judge_failure}")
        decision = goal.text_decision
        if decision is not None and decision.judge_failure:
            found.append(f"goal '{goal.name}', the answer: decided by {decision.decided_by} because the judge "
                         f"failed: {decision.judge_failure}")
    return found


def not_passed_on_part(result: CaseResult, problems: list[str], shown: int = 5) -> CaseResult:
    """A recording with parts that could not be read (a trace's unreadable spans) never passes on what
    remains: a pass becomes `unscored`, and every outcome names the parts."""
    if not problems:
        return result
    listed = "; ".join(problems[:shown]) + (f"; and {len(problems) - shown} more" if len(problems) > shown else "")
    reason = f"part of the recording could not be read, so the case is not passed on what remains: {listed}"
    if result.status == "passed":
        result.status = "unscored"
        result.unscored_reason = reason
    elif result.status == "unscored":
        result.unscored_reason = "; ".join(filter(None, [result.unscored_reason, reason]))
    elif result.status == "failed":
        result.failures.append(reason)
    else:
        result.notes.append(reason)
    return result


def case_error(ref: CaseRef, repeat: int | None, error: str) -> CaseResult:
    """A case that could not be run, as its result: an error with the reason."""
    return CaseResult(**base_fields(ref, repeat), status="error", error=error)


def base_fields(ref: CaseRef, repeat: int | None) -> dict:
    """The fields every result of this case starts from."""
    return {"id": ref.id, "source": str(ref.source), "tags": list(ref.tags), "repeat": repeat}


def finished(results: list[CaseResult], started: float, calls: list) -> list[CaseResult]:
    """The case's results with their duration and model usage, and the checks that need both settled."""
    from ..llm.calls import summarize

    for result in results:
        result.duration_s = (time.perf_counter() - started) / len(results)
    if calls:
        results[0].model_usage = summarize(calls)
    for result in results:
        settle_run_checks(result)  # budget checks need the duration and usage just measured
    return results


def internal_error(doing: str, exc: BaseException) -> str:
    """A failure of evalrun's own (a bug, SystemExit from a check) as a case's error: what, and where."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return f"internal error while {doing}: {detail}\n{traceback.format_exc(limit=6)}"

