"""Google ADK's criteria, turn by turn, with ADK 2.13's semantics.

A check written under an ADK criterion name (`tool_trajectory_avg_score`, `response_match_score`,
`final_response_match_v2`, ...) is scored as ADK scores it: the recorded conversation is cut into
invocations at each user message, the Nth is paired with the case's Nth turn, each turn gets a score,
and the check passes when the mean over the turns reaches the threshold (>=). A case without `turns` is
one turn: the whole conversation against the case's own expectations.

- tool_trajectory_avg_score: a turn scores 1 when its calls match the expected ones under `match_type`
  (EXACT: the same calls in the same order and no other; IN_ORDER: in this order, others allowed
  between; ANY_ORDER: all made, in any order, others allowed), else 0. Arguments compare as ADK compares
  them, whole objects by Python equality, unless the expected call relaxes one with `arg_matching`
  (evalrun's modes; the other arguments stay exact) or says `extra_args: allow`.
- response_match_score: ROUGE-1 F1 of the turn's final answer against its expected one, with ADK's
  tokenizer (response_match.adk_rouge_tokens).
- The judged criteria run evalrun's own judged check of the same family on each turn alone
  (final_response_match_v2: 1 when most samples say the answer matches, else 0). Without a judge they
  are unscored, never passed.
ADK's criteria that have no evalrun family (the simulated user's quality, the efficiency metrics) are in
adk_metrics.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..score.explain import describe_mismatches, message_number, message_ref
from ..score.normalize import show
from ..score.turns import TurnPair, turn_name, turn_pairs
from ..suite.models import IGNORE_KEY, Case, ExpectedCall, TextGoal, ToolCallGoal
from ..transcripts.invocations import invocation_trajectory
from ..transcripts.read import ToolCall
from .base import CheckContext, CheckFamily, CheckOptions, Verdict

# How each ADK criterion that an evalrun family answers to scores one turn.
TURN_CRITERIA: dict[str, str] = {
    "tool_trajectory_avg_score": "trajectory",
    "response_match_score": "rouge",
    "final_response_match_v2": "majority",
    "rubric_based_final_response_quality_v1": "score",
    "rubric_based_tool_use_quality_v1": "score",
    "hallucinations_v1": "score",
    "safety_v1": "score",
}
EFFICIENCY = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1")
# Every criterion name ADK 2.13 knows that evalrun runs, in the order a message lists them.
KNOWN_CRITERIA: tuple[str, ...] = (*TURN_CRITERIA, "per_turn_user_simulator_quality_v1", *EFFICIENCY)
RUBRIC_TYPES = {"rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
                "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY"}


def turn_context(ctx: CheckContext, pair: TurnPair) -> CheckContext:
    """The context a check reads when it runs on one turn: the turn's messages, and a case whose goals are
    the turn's expected calls and answer (so `trajectory` and `response_match` default to them)."""
    assert pair.actual is not None
    if pair.expected is None:
        return ctx
    turn = pair.expected
    goals: list[Any] = [_goal_of(call, i) for i, call in enumerate(turn.calls or ())]
    if turn.response is not None:
        goals.append(TextGoal(type="text", name="expected answer", response=turn.response or " ", scope="final"))
    case = ctx.case.model_copy(update={"goal_details": goals, "goals": {}, "turns": None, "checks": [],
                                       "rubrics": [*(ctx.case.rubrics or ()), *(turn.rubrics or ())] or None})
    return CheckContext(case=case, trajectory=invocation_trajectory(ctx.trajectory, pair.actual),
                        cascade=ctx.cascade, usage=ctx.usage, duration_s=ctx.duration_s, selection=ctx.selection,
                        base_dir=ctx.base_dir)


def _goal_of(call: ExpectedCall | ToolCallGoal, i: int) -> ToolCallGoal:
    if isinstance(call, ToolCallGoal):
        return call
    return ToolCallGoal(type="tool_call", name=f"expected call {i + 1}", tool_name=call.tool_name,
                        args=call.args if call.args is not None else {IGNORE_KEY: None},
                        arg_matching=call.arg_matching, extra_args=call.extra_args)


# ------------------------------------------------------------------------ one turn's score

@dataclass
class TurnScore:
    pair: TurnPair
    score: float | None  # None: the turn has no score (nothing expected, judge could not tell)
    explanation: str
    evidence: dict[str, Any] = field(default_factory=dict)
    compared: bool = True  # False: the score is ADK's, but nothing was compared (no expected calls in IN_ORDER)

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.pair.number, **({"id": self.pair.expected.id} if self.pair.expected and
                                             self.pair.expected.id else {}),
                "score": self.score, "explanation": self.explanation, **self.evidence}


def score_turns(family: CheckFamily, options: CheckOptions, ctx: CheckContext) -> Verdict:
    """The check's verdict under ADK's rule: each turn scored, the mean over scored turns against the threshold."""
    pairs, problem = turn_pairs(ctx.case, ctx.trajectory)
    if problem is not None:
        return Verdict(unscored=problem)
    kind = TURN_CRITERIA[options.type]
    scores = [_score_turn(kind, family, options, ctx, pair) for pair in pairs]
    unscored = [s for s in scores if s.score is None]
    scored = [s for s in scores if s.score is not None]
    # a case without turns is one turn: its evidence is that turn's, as the family gives it
    evidence = scores[0].evidence if pairs[0].expected is None else {"turns": [s.to_json() for s in scores]}
    if not scored:
        if unscored and all(s.evidence.get("skipped") for s in unscored):  # ADK fails a criterion it cannot run
            named = getattr(options, "judge_model", None)
            why = (f"the eval config names '{named}'; declare `judge:` in evalrun.yaml (with enable_fuzzy_matching on), "
                   "whose api_base and key will serve that model" if named else unscored[0].explanation)
            return Verdict(unscored=f"{options.type} needs a judge model: {why}", evidence=evidence)
        reasons = "; ".join(f"{turn_name(s.pair)}: {s.explanation}" for s in unscored)
        return Verdict(unscored=reasons or "nothing to score", evidence=evidence)
    if not any(s.compared for s in scored):  # ADK would pass it whatever the agent did: never a pass here
        return Verdict(unscored=f"{options.type} compares nothing: no turn expects a call, and every turn matches no "
                       f"expected calls in {getattr(options, 'match_type', None)}; list the calls a turn expects, or "
                       "use match_type EXACT for \"no call\"", evidence=evidence)
    total = 0.0
    for s in scored:  # summed in turn order, then divided: the same float as ADK's
        total += s.score  # type: ignore[operator]
    mean = total / len(scored)
    if len(scores) == 1:
        only = scores[0]
        explanation = only.explanation if only.pair.expected is None else \
            f"{_cap(turn_name(only.pair))}: {only.explanation}"
    else:
        shown = ", ".join(f"{s.pair.number}: {'-' if s.score is None else format(s.score, '.3g')}" for s in scores)
        worst = [s for s in scored if s.score < 1.0] or unscored  # type: ignore[operator]
        why = "; ".join(f"{turn_name(s.pair)}: {s.explanation}" for s in worst[:3])
        explanation = f"mean {mean:.3g} over {len(scored)} turn(s) (scores by turn {shown})" + (f"; {why}" if why else "")
    return Verdict(score=mean, explanation=explanation, evidence=evidence)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _score_turn(kind: str, family: CheckFamily, options: CheckOptions, ctx: CheckContext, pair: TurnPair) -> TurnScore:
    if pair.actual is None:
        return TurnScore(pair, 0.0, "the conversation ended before this turn (no such user message was recorded)")
    if kind == "trajectory":
        return _trajectory_turn(options, ctx, pair)
    if kind == "rouge":
        return _rouge_turn(options, ctx, pair)
    return _judged_turn(kind, family, options, ctx, pair)


# ------------------------------------------------------------------------ tool_trajectory_avg_score

def _expected_calls(options: Any, ctx: CheckContext, pair: TurnPair) -> list[ExpectedCall | ToolCallGoal] | None:
    if pair.expected is not None:
        return None if pair.expected.calls is None else list(pair.expected.calls)
    if options.expected is not None:
        return list(options.expected)
    from .trajectory_match import expected_goals  # the case's tool goals, in the order its goal graph gives

    return list(expected_goals(options.model_copy(update={"expected": None}), ctx)) or None


def args_match(expected: ExpectedCall | ToolCallGoal, call: ToolCall, ctx: CheckContext, *,
               ignore_args: bool = False) -> bool:
    """ADK's test for one call: same tool, and (unless ignore_args) the same arguments. Without a
    relaxation the arguments are ADK's `dict ==`; with one, evalrun's matchers, unlisted arguments exact."""
    if call.name != expected.tool_name:
        return False
    if ignore_args or expected.args is None or expected.args == {IGNORE_KEY: None}:
        return True
    if call.arguments is None:
        return False
    if not expected.arg_matching and expected.extra_args != "allow":
        return call.arguments == expected.args
    from ..score.args import arguments_match

    return arguments_match(_exact_goal(expected), call.arguments, ctx.cascade, "forbid")  # type: ignore[arg-type]


def _exact_goal(expected: ExpectedCall | ToolCallGoal) -> ToolCallGoal:
    """The expected call as a goal whose unlisted arguments compare exactly (ADK's equality)."""
    rules: dict[str, Any] = {key: "exact" for key in (expected.args or {})
                             if not any(path == key or path.startswith(key + ".") for path in expected.arg_matching)}
    return ToolCallGoal(type="tool_call", name=expected.tool_name, tool_name=expected.tool_name,
                        args=expected.args or {}, arg_matching={**rules, **expected.arg_matching},
                        extra_args=expected.extra_args or "forbid")


def _trajectory_turn(options: Any, ctx: CheckContext, pair: TurnPair) -> TurnScore:
    expected = _expected_calls(options, ctx, pair)
    if expected is None:
        what = "no `calls` in this turn" if pair.expected is not None else \
            "nothing to compare: the case has no turns, no `expected:` and no tool goals"
        return TurnScore(pair, None, what)
    assert pair.actual is not None
    calls = [c for c in pair.actual.tool_calls if not (ctx.case.failed_calls == "ignore" and c.is_error)]
    mode = options.match_type or "EXACT"
    if not expected and mode != "EXACT":  # ADK's 1, though every turn makes all of no calls: see score_turns
        return TurnScore(pair, 1.0, f"no expected calls, which every turn matches ({mode})",
                         {"match_type": mode, "expected": [], "calls": [_call_at(c) for c in calls]}, compared=False)
    table = [[args_match(e, c, ctx, ignore_args=options.ignore_args) for c in calls] for e in expected]
    divergence = _divergence(mode, expected, calls, table, ctx)
    evidence = {"match_type": mode, "expected": [_show_call(e) for e in expected],
                "calls": [_call_at(c) for c in calls]}
    if divergence is None:
        return TurnScore(pair, 1.0, f"the {len(calls)} call(s) match the {len(expected)} expected ({mode})", evidence)
    return TurnScore(pair, 0.0, divergence, {**evidence, "first_divergence": divergence})


def _divergence(mode: str, expected: Sequence[Any], calls: list[ToolCall], table: list[list[bool]],
                ctx: CheckContext) -> str | None:
    """Why the calls do not match under `mode`, or None when they do."""
    from .trajectory_match import ordered_pairs, unordered_pairs

    if mode == "EXACT":
        for k in range(max(len(expected), len(calls))):
            if k < len(expected) and k < len(calls) and table[k][k]:
                continue
            if k >= len(expected):
                return f"call {k + 1}: the agent made an extra call, {_call_at(calls[k])}; no more calls were expected (EXACT)"
            if k >= len(calls):
                return f"call {k + 1}: expected {_show_call(expected[k])}, but the agent made no more calls (EXACT)"
            return f"call {k + 1}: expected {_show_call(expected[k])}, the agent called {_call_at(calls[k])}" \
                   f"{_argument_difference(expected[k], calls[k], ctx)} (EXACT)"
        return None
    pairs = ordered_pairs(table) if mode == "IN_ORDER" else unordered_pairs(table, len(calls))
    if len(pairs) == len(expected):
        return None
    missing = min(set(range(len(expected))) - {i for i, _ in pairs})
    before = [j for i, j in pairs if i < missing]
    where = f" after {_call_at(calls[before[-1]])}" if mode == "IN_ORDER" and before else ""
    said = f"expected call {missing + 1} of {len(expected)}, {_show_call(expected[missing])}, was not made{where} ({mode})"
    matching = [j for j, ok in enumerate(table[missing]) if ok]
    if matching and mode == "IN_ORDER" and before and matching[-1] < before[-1]:
        return f"{said}: it was called earlier, {_call_at(calls[matching[-1]])}, out of the expected order"
    if matching:
        used = next((i for i, j in pairs if j == matching[0]), None)
        owner = f" by expected call {used + 1}" if used is not None else ""
        return f"{said}: its matching call, {_call_at(calls[matching[0]])}, is already used{owner} (each call " \
               "matches one expected call)"
    return f"{said}: {_why_missing(expected[missing], calls, ctx)}"


def _why_missing(expected: Any, calls: list[ToolCall], ctx: CheckContext) -> str:
    same_tool = [c for c in calls if c.name == expected.tool_name]
    if not same_tool:
        made = ", ".join(sorted({c.name for c in calls}))
        return f"{expected.tool_name} was never called" + (f" (the agent called {made})" if made else
                                                           " (the agent made no call)")
    return f"closest: {_call_at(same_tool[0])}{_argument_difference(expected, same_tool[0], ctx)}"


def _argument_difference(expected: Any, call: ToolCall, ctx: CheckContext) -> str:
    if call.name != expected.tool_name:
        return ""
    if call.arguments is None:
        return f": its arguments could not be read ({call.arguments_error})"
    from ..score.args import match_arguments

    verdicts = match_arguments(_exact_goal(expected), call.arguments, ctx.cascade, "forbid")  # type: ignore[arg-type]
    wrong = [v for v in verdicts if not v.matched]
    return f": {describe_mismatches(verdicts)}" if wrong else ""


def _show_call(expected: Any) -> str:
    if expected.args is None or expected.args == {IGNORE_KEY: None}:
        return f"{expected.tool_name}(any arguments)"
    return f"{expected.tool_name}({', '.join(f'{k}={show(v)}' for k, v in expected.args.items())})"


def _call_at(call: ToolCall) -> str:
    shown = ", ".join(f"{k}={show(v)}" for k, v in call.arguments.items()) if call.arguments is not None else "?"
    return f"{call.name}({shown}) at {message_ref(message_number(call.message_index))}"


# ------------------------------------------------------------------------ response_match_score

def _rouge_turn(options: Any, ctx: CheckContext, pair: TurnPair) -> TurnScore:
    from .response_match import adk_rouge_tokens, rouge1

    if pair.expected is not None:
        reference = pair.expected.response
        if reference is None:
            return TurnScore(pair, None, "no `response` in this turn")
    else:
        reference = options.reference or next((g.response for g in ctx.case.text_goals() if g.response), None)
        if reference is None:
            return TurnScore(pair, None, "nothing to compare: no `reference:` and no text goal with a `response`")
    assert pair.actual is not None
    answer = pair.actual.answer
    precision, recall, f1, shared = rouge1(reference, answer, adk_rouge_tokens)
    said = "the agent gave no final answer" if not answer else \
        f"ROUGE-1 F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f}, {len(shared)} shared word(s))"
    return TurnScore(pair, f1, said, {"reference": reference, "answer": answer, "matched_unigrams": shared})


# ------------------------------------------------------------------------ judged criteria

def _judged_turn(kind: str, family: CheckFamily, options: Any, ctx: CheckContext, pair: TurnPair) -> TurnScore:
    turn_ctx = turn_context(ctx, pair)
    run_options = options
    if options.type in RUBRIC_TYPES:
        run_options = _with_case_rubrics(options, turn_ctx.case)
        if not run_options.rubrics:
            return TurnScore(pair, None, f"no rubric applies (the criterion, the case and the turn give none of type "
                                         f"{RUBRIC_TYPES[options.type]})")
    verdict = family.run(run_options, turn_ctx)
    if verdict.skipped is not None:
        return TurnScore(pair, None, verdict.skipped, {"skipped": True})
    if verdict.unscored is not None or verdict.score is None:
        return TurnScore(pair, None, verdict.unscored or "the check gave no score")
    if kind == "majority":
        samples = verdict.evidence.get("verdicts")
        if samples is None:  # decided without the judge (no final answer)
            score = 1.0 if verdict.passed else 0.0
        else:
            score = 1.0 if sum(bool(s.get("match")) for s in samples) * 2 > len(samples) else 0.0
        return TurnScore(pair, score, f"{'valid' if score else 'invalid'}: {verdict.explanation}")
    return TurnScore(pair, verdict.score, verdict.explanation, dict(verdict.evidence))


def _with_case_rubrics(options: Any, case: Case) -> Any:
    from .graded_options import RubricItem

    wanted = RUBRIC_TYPES[options.type]
    extra = [RubricItem(name=r.id, description=r.text) for r in case.rubrics or ()
             if r.type in (None, wanted) and all(r.id != item.name for item in options.rubrics)]
    return options.model_copy(update={"rubrics": [*options.rubrics, *extra]})


def adk_verdict(family: CheckFamily, options: CheckOptions, ctx: CheckContext) -> Verdict:
    """The verdict of a check written under one of ADK's criterion names. A judged criterion with no judge
    to ask is unscored, never skipped: ADK counts a criterion it could not evaluate as a failure."""
    return score_turns(family, options, ctx)
