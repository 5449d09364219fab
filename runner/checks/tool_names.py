"""`tool_name_f1`: precision, recall and F1 of the tool names called against the expected ones (multisets)."""
from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import ConfigDict, Field

from .base import CheckContext, CheckFamily, CheckOptions, Verdict
from .trajectory_match import counted_calls


class ToolNameF1Options(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: tool_name_f1",
        json_schema_extra={"description": "F1 of the tool names called against the expected names (each name "
                           "counted as often as it appears).",
                           "examples": [{"type": "tool_name_f1", "expected": ["search", "book"], "threshold": 0.8}]})

    type: Literal["tool_name_f1"] = Field(title="Check type", description="tool_name_f1.", examples=["tool_name_f1"])
    expected: list[str] | None = Field(
        None, title="Expected tool names", description="Default: the tool names of the case's tool goals.",
        examples=[["search_flights", "book_flight"]])


def name_f1(expected: list[str], called: list[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of two multisets of names; both empty counts as a perfect match."""
    if not expected and not called:
        return 1.0, 1.0, 1.0
    common = sum((Counter(expected) & Counter(called)).values())
    precision = common / len(called) if called else 0.0
    recall = common / len(expected) if expected else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def run_tool_name_f1(options: ToolNameF1Options, ctx: CheckContext) -> Verdict:
    expected = options.expected if options.expected is not None else [g.tool_name for g in ctx.case.tool_goals()]
    called = [c.name for c in counted_calls(ctx)]
    precision, recall, f1 = name_f1(expected, called)
    missing = sorted((Counter(expected) - Counter(called)).elements())
    extra = sorted((Counter(called) - Counter(expected)).elements())
    parts = [f"precision {precision:.2f}, recall {recall:.2f}, F1 {f1:.2f}"]
    parts += [f"not called: {', '.join(missing)}"] if missing else []
    parts += [f"not expected: {', '.join(extra)}"] if extra else []
    return Verdict(score=f1, explanation="; ".join(parts),
                   evidence={"precision": precision, "recall": recall, "f1": f1, "missing": missing, "extra": extra})


FAMILIES = (
    CheckFamily(types=("tool_name_f1",), description="Precision/recall/F1 of the tool names called.",
                options=ToolNameF1Options, run=run_tool_name_f1),
)
