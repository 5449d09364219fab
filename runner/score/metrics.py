"""Per-case metrics, each defined once here (docs/reference/reports.md describes this code).

- journey_success: every goal achieved (the order graph holds by construction of the placement), no
  forbidden call, and the conversation ended as `termination` requires (when the case says).
- journey_completion: achieved goals / goals scored (1.0 for a case without them). Goals evalrun
  cannot score (`interaction`, `assert_llm`) are left out of every metric but journey_success.
- tool_call_precision: calls that achieved a goal / tool calls counted (failed calls excluded under
  `failed_calls: ignore`); None when no call was counted or the case has no tool goals (as watsonx's
  NaN: there is nothing a call could have been precise about).
- tool_call_recall: achieved tool goals / tool goals; None without tool goals.
- tool_parameter_f1: for each tool goal whose tool was called, the arguments of the call that
  achieved it (or else the closest attempt) score TP = expected arguments that match, FN = expected
  arguments that do not, FP = wrong values plus arguments the call added; F1 = 2TP / (2TP + FP + FN).
  The mean over those goals; None when no tool goal's tool was called.
- text_match: achieved text goals / text goals; None without text goals.
"""
from __future__ import annotations

from ..results.models import CallAttempt, CallRecord, Counts, GoalResult, Metrics
from ..suite.models import IGNORE_KEY, Case
from .assign import Slot


def compute_metrics(case: Case, goals: list[GoalResult], calls: list[CallRecord], *,
                    evidence_attempts: dict[str, list[CallAttempt]], placement: dict[str, Slot],
                    user_turns: int, ended_as_required: bool = True) -> Metrics:
    tool_goals = [g for g in goals if g.type == "tool_call"]
    text_goals = [g for g in goals if g.type == "text"]
    unscored = sum(1 for g in goals if g.status == "unscored")
    counted = [c for c in calls if c.role != "ignored_failed"]
    correct = sum(1 for c in counted if c.role == "goal")
    forbidden = sum(1 for c in counted if c.role == "forbidden")
    achieved = sum(1 for g in goals if g.achieved)
    counts = Counts(
        tool_calls=len(counted), correct_calls=correct, missed_goals=len(goals) - unscored - achieved,
        wrong_argument_calls=sum(1 for c in counted if c.role in ("wrong_arguments", "invalid_arguments")),
        extra_calls=sum(1 for c in counted if c.role == "extra"), forbidden_calls=forbidden,
        ignored_failed_calls=len(calls) - len(counted))
    return Metrics(
        journey_success=achieved == len(goals) and forbidden == 0 and ended_as_required,
        journey_completion=_ratio(achieved, len(goals) - unscored, empty=1.0),
        tool_call_precision=_ratio(correct, len(counted)) if tool_goals else None,
        tool_call_recall=_ratio(sum(1 for g in tool_goals if g.achieved), len(tool_goals)),
        tool_parameter_f1=_parameter_f1(case, tool_goals, calls, evidence_attempts, placement),
        text_match=_ratio(sum(1 for g in text_goals if g.achieved), len(text_goals)),
        turns=user_turns, counts=counts)


def _ratio(numerator: int, denominator: int, empty: float | None = None) -> float | None:
    return numerator / denominator if denominator else empty


def _parameter_f1(case: Case, tool_goals: list[GoalResult], calls: list[CallRecord],
                  attempts: dict[str, list[CallAttempt]], placement: dict[str, Slot]) -> float | None:
    expected_keys = {g.name: set(g.args) for g in case.tool_goals()}
    arguments = {c.index: c.arguments for c in calls}
    scores = []
    for goal in tool_goals:
        tried = attempts.get(goal.name) or []
        if not tried:
            continue
        slot = placement.get(goal.name)
        chosen = next((a for a in tried if slot is not None and a.call_index == slot.key), None)
        chosen = chosen or min(tried, key=lambda a: sum(not v.matched for v in a.arguments))
        tp = fp = fn = 0
        actual = arguments.get(chosen.call_index)
        if isinstance(actual, dict) and expected_keys[goal.name] != {IGNORE_KEY}:
            fp += len(set(actual) - expected_keys[goal.name])  # arguments the call added
        for v in chosen.arguments:
            if v.decided_by == "ignore" or (not v.present and v.matched):
                continue  # not compared: neither evidence for nor against
            if v.decided_by == "structure" and v.expected is None:
                continue  # an added argument (extra_args: forbid), counted above
            if v.matched:
                tp += 1
            else:
                fn += 1
                fp += 1 if v.present else 0
        scores.append(1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else None
