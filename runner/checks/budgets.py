"""Budgets: `max_turns` and `max_tool_calls` over the conversation, `latency` and `cost` over what the
run measured for the case (its wall time, the model calls recorded for it)."""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from .base import CheckContext, CheckFamily, CheckOptions, Verdict


def _model(title: str, description: str, example: dict) -> ConfigDict:
    return ConfigDict(extra="forbid", title=title,
                      json_schema_extra={"description": description, "examples": [example]})


class MaxTurnsOptions(CheckOptions):
    model_config = _model("Check: max_turns", "The conversation has at most `max` user turns.",
                          {"type": "max_turns", "max": 4})
    type: Literal["max_turns"] = Field(title="Check type", description="max_turns.", examples=["max_turns"])
    max: int = Field(ge=0, title="Maximum user turns", description="The most user messages allowed.", examples=[4])


class MaxToolCallsOptions(CheckOptions):
    model_config = _model("Check: max_tool_calls", "The agent made at most `max` tool calls.",
                          {"type": "max_tool_calls", "max": 5})
    type: Literal["max_tool_calls"] = Field(title="Check type", description="max_tool_calls.",
                                            examples=["max_tool_calls"])
    max: int = Field(ge=0, title="Maximum tool calls", description="The most tool calls allowed (failed ones count).",
                     examples=[5])


class LatencyOptions(CheckOptions):
    model_config = _model("Check: latency", "A live case took at most `max_s` seconds (skipped on a replay).",
                          {"type": "latency", "max_s": 30})
    type: Literal["latency"] = Field(title="Check type", description="latency.", examples=["latency"])
    max_s: float = Field(gt=0, title="Maximum seconds",
                         description="The most wall time the case may take: conversation and scoring.", examples=[30])


class CostOptions(CheckOptions):
    model_config = _model("Check: cost", "The model calls made for the case cost at most `max_usd`.",
                          {"type": "cost", "max_usd": 0.05})
    type: Literal["cost"] = Field(title="Check type", description="cost.", examples=["cost"])
    max_usd: float = Field(ge=0, title="Maximum cost (USD)",
                           description="The most the case's model calls (agent, simulator, judge) may cost, from "
                           "litellm's price list.", examples=[0.05])


def _within(measured: float, limit: float, what: str, unit: str = "") -> Verdict:
    passed = measured <= limit
    return Verdict(score=1.0 if passed else 0.0, passed=passed,
                   explanation=f"{what}: {measured:g}{unit}, {'within' if passed else 'over'} the limit of {limit:g}{unit}",
                   evidence={"measured": measured, "limit": limit})


def run_max_turns(options: MaxTurnsOptions, ctx: CheckContext) -> Verdict:
    return _within(ctx.trajectory.user_turns, options.max, "user turns")


def run_max_tool_calls(options: MaxToolCallsOptions, ctx: CheckContext) -> Verdict:
    return _within(len(ctx.trajectory.tool_calls), options.max, "tool calls")


def run_latency(options: LatencyOptions, ctx: CheckContext) -> Verdict:
    if ctx.duration_s is None:
        return Verdict(skipped="no live timing: the case was scored from a recording")
    return _within(round(ctx.duration_s, 3), options.max_s, "wall time", " s")


def run_cost(options: CostOptions, ctx: CheckContext) -> Verdict:
    if ctx.usage is None or ctx.usage.calls == 0:
        return Verdict(skipped="no model calls were recorded for this case")
    if ctx.usage.cost_usd is None:
        return Verdict(skipped=f"none of the {ctx.usage.calls} model call(s) recorded has a known price")
    return _within(round(ctx.usage.cost_usd, 6), options.max_usd, "cost", " USD")


FAMILIES = (
    CheckFamily(types=("max_turns",), description="At most N user turns.", options=MaxTurnsOptions, run=run_max_turns),
    CheckFamily(types=("max_tool_calls",), description="At most N tool calls.", options=MaxToolCallsOptions,
                run=run_max_tool_calls),
    CheckFamily(types=("latency",), description="The case's wall time within a limit (live runs).",
                options=LatencyOptions, run=run_latency, reads="run"),
    CheckFamily(types=("cost",), description="The case's model calls cost within a limit.", options=CostOptions,
                run=run_cost, reads="run"),
)
