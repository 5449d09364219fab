"""Google ADK's criteria that have no evalrun family of their own: the simulated user's quality
(`per_turn_user_simulator_quality_v1`) and the efficiency metrics, which are reported and never gate.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..transcripts.invocations import split_invocations
from .adk import EFFICIENCY
from .base import CheckContext, CheckFamily, CheckOptions, Verdict
from .judged import JudgedOptions


class SimulatorQualityOptions(JudgedOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: per_turn_user_simulator_quality_v1",
        json_schema_extra={"description": "ADK's judge of the simulated user: its first message must be the "
                           "case's starting_sentence; a judge decides whether each later one follows the story.",
                           "examples": [{"type": "per_turn_user_simulator_quality_v1", "threshold": 0.8}]})

    type: Literal["per_turn_user_simulator_quality_v1"] = Field(
        title="Check type", description="per_turn_user_simulator_quality_v1 (ADK).",
        examples=["per_turn_user_simulator_quality_v1"])


def run_simulator_quality(options: SimulatorQualityOptions, ctx: CheckContext) -> Verdict:
    from .judged import AssertOptions, run_assert

    users = [m for m in ctx.trajectory.messages if m.get("role") == "user"]
    start, plan = ctx.case.starting_sentence, ctx.case.story
    if not users or start is None or not plan:
        return Verdict(unscored="the case has no conversation plan: it needs a starting_sentence and a story "
                                "(ADK's conversation_scenario)")
    from ..transcripts.read import content_text

    scores = [1.0 if content_text(users[0].get("content")).strip() == start.strip() else 0.0]
    notes = [f"turn 1: {'is' if scores[0] else 'is not'} the starting sentence"]
    for number in range(2, len(users) + 1):
        cut = [i for i, m in enumerate(ctx.trajectory.messages) if m.get("role") == "user"][number - 1]
        statement = (f"The user's message number {number} follows this conversation plan, stays goal-oriented, "
                     f"answers what the agent asked, and does not end the conversation early. Plan: {plan}")
        sub = CheckContext(case=ctx.case, trajectory=ctx.trajectory.model_copy(
            update={"messages": ctx.trajectory.messages[:cut + 1]}), cascade=ctx.cascade)
        verdict = run_assert(AssertOptions(type="assert", statement=statement, judge=options.judge,
                                           judge_model=options.judge_model, samples=options.samples), sub)
        if verdict.skipped is not None:
            return Verdict(unscored=f"per_turn_user_simulator_quality_v1 needs a judge model: {verdict.skipped}")
        if verdict.unscored is not None:
            return Verdict(unscored=f"turn {number}: {verdict.unscored}")
        scores.append(1.0 if verdict.passed else 0.0)
        notes.append(f"turn {number}: {'follows' if verdict.passed else 'does not follow'} the plan")
    mean = sum(scores) / len(scores)
    return Verdict(score=mean, explanation=f"mean {mean:.3g} over {len(scores)} user message(s): " + "; ".join(notes),
                   evidence={"scores": scores})


class EfficiencyOptions(CheckOptions):
    gate: Literal[False] = Field(False, title="Gate", description="Always false: reported, never gating.",
                                 examples=[False])


_EFFICIENCY_SAYS = {"tool_call_count_v1": "tool calls per turn", "inference_call_count_v1": "the agent's model calls",
                    "token_usage_v1": "the tokens of the agent's model calls", "invocation_duration_v1": "the wall time"}


def _efficiency_options(kind: str) -> type[EfficiencyOptions]:
    return type(f"{''.join(p.capitalize() for p in kind.split('_'))}Options", (EfficiencyOptions,), {
        "__annotations__": {"type": Literal[kind]},
        "type": Field(title="Check type", description=f"{kind} (ADK's efficiency metric).", examples=[kind]),
        "model_config": ConfigDict(extra="forbid", title=f"Check: {kind}", json_schema_extra={
            "description": f"ADK's efficiency metric: {_EFFICIENCY_SAYS[kind]}; informational, it never decides the "
                           "case.", "examples": [{"type": kind}]}),
    })


def run_efficiency(options: Any, ctx: CheckContext) -> Verdict:
    """tool_call_count_v1 per turn, from the conversation; the others over the whole case, from what the run
    measured (the agent's own model calls, not the judge's or the simulated user's)."""
    if options.type == "tool_call_count_v1":
        per_turn = [len(p.tool_calls) for p in split_invocations(ctx.trajectory)] or [0]
        value = sum(per_turn) / len(per_turn)
        return Verdict(passed=True, explanation=f"informational: {value:g} tool call(s) per turn (by turn: "
                       f"{', '.join(map(str, per_turn))})", evidence={"value": value, "per_turn": per_turn})
    if options.type == "invocation_duration_v1":
        if ctx.duration_s is None:
            return Verdict(passed=True, explanation="informational: no live timing (the case was scored from a recording)")
        return Verdict(passed=True, explanation=f"informational: the case took {ctx.duration_s:.3g} s",
                       evidence={"value": ctx.duration_s})
    agent = ctx.usage.by_role.get("agent") if ctx.usage is not None else None
    if agent is None or agent.calls == 0:
        return Verdict(passed=True, explanation="informational: the agent's model calls were not recorded (only "
                       "`type: model` agents are measured)")
    if options.type == "inference_call_count_v1":
        return Verdict(passed=True, explanation=f"informational: the agent made {agent.calls} model call(s)",
                       evidence={"value": agent.calls})
    tokens = agent.prompt_tokens + agent.completion_tokens
    return Verdict(passed=True, explanation=f"informational: the agent's model calls used {tokens} token(s) "
                   f"({agent.prompt_tokens} prompt, {agent.completion_tokens} completion)", evidence={"value": tokens})


FAMILIES = (
    CheckFamily(types=("per_turn_user_simulator_quality_v1",), needs_model=True, default_threshold=1.0,
                description="ADK: the simulated user starts as planned and follows the conversation plan.",
                options=SimulatorQualityOptions, run=run_simulator_quality),
    *(CheckFamily(types=(kind,), description=f"ADK: {_EFFICIENCY_SAYS[kind]} (informational).",
                  options=_efficiency_options(kind), run=run_efficiency,
                  reads="trajectory" if kind == "tool_call_count_v1" else "run") for kind in EFFICIENCY),
)
