"""What the suite says about the place a mutant changed: the goal a recorded call achieved, and the
`arg_matching` entry (or `args` entry) an argument path is compared under. Shared by the equivalence test
and the diagnosis of survivors."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..results.models import CaseResult
from ..score.args import Matcher, rule_from_spec
from ..suite.models import IGNORE_KEY, IGNORE_VALUE, Case, ToolCallGoal


@dataclass
class ArgRuleAt:
    """How an argument path is compared: the goal (and its position in goal_details), whether `args` lists the
    path, the `arg_matching` key that rules it (None: strict by default) and the rule's mode."""

    goal: ToolCallGoal
    goal_index: int
    listed: bool
    key: str | None
    mode: str
    rule: Any
    ignored_value: bool  # the expected value is "<IGNORE>"


def goal_of_call(original: CaseResult, call_index: int | None) -> str | None:
    """The goal the recorded call achieved when the recording was scored, or None."""
    if call_index is None:
        return None
    return next((call.goal for call in original.calls if call.index == call_index), None)


def goal_named(case: Case, name: str | None) -> tuple[int, Any]:
    for index, goal in enumerate(case.goal_details):
        if goal.name == name:
            return index, goal
    return -1, None


def argument_rule(case: Case, original: CaseResult, call_index: int | None, path: str) -> ArgRuleAt | None:
    """The rule the achieved goal compares `path` of the call with, or None when the call achieved no goal."""
    index, goal = goal_named(case, goal_of_call(original, call_index))
    if not isinstance(goal, ToolCallGoal):
        return None
    if goal.args == {IGNORE_KEY: None}:
        return ArgRuleAt(goal, index, False, None, "ignore_all", None, False)
    rules = {key: rule_from_spec(spec) for key, spec in goal.arg_matching.items()}
    key = max((k for k in rules if path == k or path.startswith(k + ".")), key=len, default=None)
    rule = Matcher(rules, None, "allow").rule_for(path)  # type: ignore[arg-type]
    expected, listed = _expected_at(goal.args, path.split("."))
    return ArgRuleAt(goal, index, listed, key, rule.mode, rule, isinstance(expected, str) and expected == IGNORE_VALUE)


def _expected_at(args: Any, parts: list[str]) -> tuple[Any, bool]:
    """The expected value at a dot path and whether `args` holds it (or a whole value above it)."""
    value = args
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None, value is not args and not isinstance(value, (dict, list))
    return value, True
