"""`trajectory`: the agent's tool calls against an expected list, in one of five match modes.

Calls pair one to one and optimally: in the ordered modes by a longest-common-subsequence table, in
the others by a maximum bipartite matching, so a greedy early pairing can never cost a match.
"""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from ..score.explain import describe_mismatches, message_number, message_ref
from ..suite.models import IGNORE_KEY, ExpectedCall, ToolCallGoal
from ..transcripts.read import ToolCall
from .base import CheckContext, CheckFamily, CheckOptions, Verdict

MatchMode = Literal["exact", "in_order", "any_order", "superset", "unordered", "subset"]
_MODE_ALIASES = {"superset": "any_order"}


class TrajectoryOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: trajectory",
        json_schema_extra={"description": "The agent's tool calls against `expected:` in a match mode; the score "
                           "is the fraction matched.",
                           "examples": [{"type": "trajectory", "match": "in_order",
                                         "expected": [{"tool_name": "get_assignment_id"},
                                                      {"tool_name": "get_timeoff_schedule"}]}]})

    type: Literal["trajectory", "tool_trajectory_avg_score", "trajectory_match"] = Field(
        title="Check type", description="trajectory (aliases: ADK's tool_trajectory_avg_score, openevals' "
        "trajectory_match).", examples=["trajectory"])
    expected: list[ExpectedCall] | None = Field(
        None, title="Expected calls",
        description="The calls, in order. Default: the case's tool goals, in the order the goal graph gives "
        "(goals the graph leaves unordered keep their goal_details order).",
        examples=[[{"tool_name": "get_assignment_id", "args": {"username": "nwaters"}}]])
    match: MatchMode = Field(
        "in_order", title="Match mode",
        description="exact: these calls in this order and no other. in_order (default): these calls in this "
        "order, others may come between. any_order (alias superset): every expected call made, in any order, "
        "others allowed. unordered: the same calls in any order and no other. subset: every call made is an "
        "expected one (each used once); some may be missing. (tool_trajectory_avg_score takes `match_type`.)",
        examples=["any_order"])
    match_type: Literal["EXACT", "IN_ORDER", "ANY_ORDER"] | None = Field(
        None, title="ADK match type",
        description="tool_trajectory_avg_score only, as ADK: EXACT (default): each turn's calls are the expected "
        "ones in order and no other; IN_ORDER: in order, others allowed between; ANY_ORDER: all made, in any order, "
        "others allowed. A turn scores 1 or 0; the check passes when the mean reaches the threshold.",
        examples=["IN_ORDER"])
    ignore_args: bool = Field(
        False, title="Ignore arguments",
        description="tool_trajectory_avg_score only, as ADK: compare tool names only.", examples=[True])

    @model_validator(mode="after")
    def _options_of_its_type(self) -> TrajectoryOptions:
        adk = self.type == "tool_trajectory_avg_score"
        if adk and "match" in self.model_fields_set:
            raise ValueError("tool_trajectory_avg_score takes ADK's `match_type` (EXACT, IN_ORDER, ANY_ORDER), not `match`")
        if not adk and ({"match_type", "ignore_args"} & self.model_fields_set):
            raise ValueError(f"`match_type` and `ignore_args` are options of tool_trajectory_avg_score; {self.type} "
                             "takes `match` (exact, in_order, any_order, unordered, subset)")
        return self


def expected_goals(options: TrajectoryOptions, ctx: CheckContext) -> list[ToolCallGoal]:
    """The expected calls as tool goals, so that arguments are compared by the goals' own matchers."""
    if options.expected is None and ctx.case.turns and not ctx.case.tool_goals():
        # the turns' calls, one after the other
        calls = [call for turn in ctx.case.turns for call in turn.calls or ()]
        return expected_goals(options.model_copy(update={"expected": calls}), ctx)
    if options.expected is None:
        from ..score.assign import visit_order

        case = ctx.case
        by_name = {g.name: g for g in case.tool_goals()}
        edges = [(a, b) for a, targets in case.goals.items() for b in targets]
        return [by_name[n] for n in visit_order([g.name for g in case.goal_details], edges) if n in by_name]
    return [ToolCallGoal(type="tool_call", name=f"expected call {i + 1}", tool_name=e.tool_name,
                         args=e.args if e.args is not None else {IGNORE_KEY: None},
                         arg_matching=e.arg_matching, extra_args=e.extra_args)
            for i, e in enumerate(options.expected)]


def counted_calls(ctx: CheckContext) -> list[ToolCall]:
    ignore_failed = ctx.case.failed_calls == "ignore"
    return [c for c in ctx.trajectory.tool_calls if not (ignore_failed and c.is_error)]


def _matches(goal: ToolCallGoal, call: ToolCall, ctx: CheckContext) -> bool:
    from ..score.args import arguments_match

    if call.name != goal.tool_name:
        return False
    if goal.args == {IGNORE_KEY: None}:
        return True
    return call.arguments is not None and arguments_match(goal, call.arguments, ctx.cascade, ctx.case.extra_args)  # type: ignore[arg-type]  # scoring sets it


def ordered_pairs(table: list[list[bool]]) -> list[tuple[int, int]]:
    """A longest order-preserving one-to-one pairing (expected i, call j) with table[i][j] true."""
    n, m = len(table), len(table[0]) if table else 0
    best = [[0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: pairs within expected[i:], calls[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1], best[i + 1][j + 1] + 1 if table[i][j] else 0)
    pairs, i, j = [], 0, 0
    while i < n and j < m:  # walk forward, pairing as early as an optimal pairing allows
        if table[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i][j + 1]:
            j += 1
        else:
            i += 1
    return pairs


def unordered_pairs(table: list[list[bool]], calls: int) -> list[tuple[int, int]]:
    from ..score.normalize import max_pairing

    right = max_pairing([[j for j, ok in enumerate(row) if ok] for row in table], calls)
    return [(i, j) for i, j in enumerate(right) if j >= 0]


def trajectory_score(mode: str, expected: int, calls: int, matched: int) -> float:
    """The fraction matched, over what the mode counts: expected calls, calls made, or the larger."""
    denominator = {"in_order": expected, "any_order": expected, "subset": calls,
                   "exact": max(expected, calls), "unordered": max(expected, calls)}[mode]
    return 1.0 if denominator == 0 else matched / denominator


def _show_call(goal: ToolCallGoal) -> str:
    if goal.args == {IGNORE_KEY: None}:
        return goal.tool_name
    return f"{goal.tool_name}({', '.join(f'{k}={v!r}' for k, v in goal.args.items())})"


def _call_at(call: ToolCall) -> str:
    return f"{call.name} at {message_ref(message_number(call.message_index))}"


def _why_missing(goal: ToolCallGoal, calls: list[ToolCall], ctx: CheckContext) -> str:
    """Why no call was paired with an expected one: never made, or made with other arguments."""
    from ..score.args import match_arguments

    same_tool = [c for c in calls if c.name == goal.tool_name]
    if not same_tool:
        return f"{goal.tool_name} was never called"
    for call in same_tool:
        if call.arguments is not None and not _matches(goal, call, ctx):
            verdicts = match_arguments(goal, call.arguments, ctx.cascade, ctx.case.extra_args)  # type: ignore[arg-type]  # scoring sets it
            return f"closest: {_call_at(call)}: {describe_mismatches(verdicts)}"
    return f"its matching call(s) ({', '.join(_call_at(c) for c in same_tool)}) were used by other expected calls or out of order"


def first_divergence(mode: str, goals: list[ToolCallGoal], calls: list[ToolCall],
                     pairs: list[tuple[int, int]], ctx: CheckContext) -> str | None:
    paired_goals = {i for i, _ in pairs}
    paired_calls = {j for _, j in pairs}
    if mode == "exact":
        for k in range(max(len(goals), len(calls))):
            if k < len(goals) and k < len(calls) and _matches(goals[k], calls[k], ctx):
                continue
            if k >= len(goals):
                return f"call {k + 1}: the agent made an extra call, {_call_at(calls[k])}; no more calls were expected"
            if k >= len(calls):
                return f"call {k + 1}: expected {_show_call(goals[k])}, but the agent made no more calls"
            return f"call {k + 1}: expected {_show_call(goals[k])}, the agent called {_call_at(calls[k])}"
        return None
    missing = [i for i in range(len(goals)) if i not in paired_goals]
    extra = [j for j in range(len(calls)) if j not in paired_calls]
    if mode in ("in_order", "any_order", "unordered") and missing:
        i = missing[0]
        where = ""
        if mode == "in_order":
            before = [j for gi, j in pairs if gi < i]
            where = f" after {_call_at(calls[before[-1]])}" if before else ""
        return (f"expected call {i + 1} of {len(goals)}, {_show_call(goals[i])}, was not made{where}"
                f": {_why_missing(goals[i], calls, ctx)}")
    if mode in ("unordered", "subset") and extra:
        return f"the call {_call_at(calls[extra[0]])} is not one of the expected calls (or repeats one already used)"
    return None


def run_trajectory(options: TrajectoryOptions, ctx: CheckContext) -> Verdict:
    mode = _MODE_ALIASES.get(options.match, options.match)
    goals = expected_goals(options, ctx)
    if not goals and mode in ("in_order", "any_order"):  # every conversation makes all of no calls
        return Verdict(unscored=f"{options.type} compares nothing: the case gives no expected calls (no `expected:`, "
                       f"no tool goals, no turn calls), which every conversation matches in mode {options.match}")
    calls = counted_calls(ctx)
    table = [[_matches(g, c, ctx) for c in calls] for g in goals]
    pairs = ordered_pairs(table) if mode in ("exact", "in_order") else unordered_pairs(table, len(calls))
    score = trajectory_score(mode, len(goals), len(calls), len(pairs))
    divergence = first_divergence(mode, goals, calls, pairs, ctx)
    matched = [{"expected": i + 1, "tool_name": goals[i].tool_name,
                "message": message_number(calls[j].message_index)} for i, j in pairs]
    summary = f"{len(pairs)} of {len(goals)} expected call(s) matched among {len(calls)} call(s) ({mode})"
    return Verdict(score=score, explanation=summary + (f"; first divergence: {divergence}" if divergence else ""),
                   evidence={"mode": mode, "matched": matched, "first_divergence": divergence,
                             "expected": [_show_call(g) for g in goals],
                             "calls": [_call_at(c) for c in calls]})


FAMILIES = (
    CheckFamily(types=("trajectory", "tool_trajectory_avg_score", "trajectory_match"),
                description="The agent's tool calls against an expected list, in a match mode.",
                options=TrajectoryOptions, run=run_trajectory),
)
