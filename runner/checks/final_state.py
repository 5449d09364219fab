"""`final_state`: the world after the conversation against the case's `final_state:`.

Every case with a `final_state:` (or Google ADK's `final_session_state`, read by the same machinery
when the case has no `final_state` of its own) gets this check (runner/checks/run.py adds it when `checks:` does not
name it); written out, it takes the common options (a name, `gate`, a partial-credit `threshold`) and may
give its own `expected`/`matching`. The state is what the agent reported (runner/transcripts/state.py);
an agent that reported none leaves the check unscored with the reason, never passed. The explanation
names each path that differs, expected against actual, in the words of tool-argument verdicts.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..score.explain import describe_verdict
from ..score.state import compare_state
from ..suite.models import ArgSpec
from .base import CheckContext, CheckFamily, CheckOptions, Verdict
from .vacuity import state_compares_nothing

_SHOWN = 10  # differences spelled out in the explanation; the evidence holds them all


class FinalStateOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: final_state",
        json_schema_extra={"description": "The state the agent reports after the conversation against the case's "
                           "`final_state:` (or `expected`); the score is the fraction of compared values that match.",
                           "examples": [{"type": "final_state"},
                                        {"type": "final_state", "expected": {"orders": []}, "gate": False}]})

    type: Literal["final_state"] = Field(title="Check type", description="final_state.", examples=["final_state"])
    expected: dict[str, Any] | None = Field(
        None, title="Expected state", description="Default: the case's `final_state:`.",
        examples=[{"orders": [{"id": 1, "status": "cancelled"}]}])
    matching: dict[str, ArgSpec] | None = Field(
        None, title="Matching", description="Dot path to comparison mode, as `arg_matching`. Default: the case's "
        "`final_state_matching`.", examples=[{"orders.0.id": "ignore"}])
    extra_keys: Literal["allow", "forbid"] = Field(
        "allow", title="Extra keys",
        description="allow (default): the state may hold keys `expected` does not name. forbid: objects must have "
        "exactly the expected keys (lists always must have exactly the expected items).", examples=["forbid"])


def run_final_state(options: FinalStateOptions, ctx: CheckContext) -> Verdict:
    expected = next((e for e in (options.expected, ctx.case.final_state, ctx.case.final_session_state)
                     if e is not None), None)
    if expected is None:
        return Verdict(skipped="the case has no final_state: (nor final_session_state) to compare with")
    matching = options.matching if options.matching is not None else ctx.case.final_state_matching
    vacuous = state_compares_nothing(expected, matching) if options.extra_keys == "allow" else None
    if vacuous is not None:  # `validate` refuses it; from another format it still decides nothing
        return Verdict(unscored=f"final_state compares nothing: {vacuous}")
    state = ctx.trajectory.state
    if state is None or not state.reported:
        why = state.missing if state is not None else "no state was recorded for this conversation"
        return Verdict(unscored=f"no final state to compare with: {why}")
    verdicts = compare_state(expected, state.value, matching, ctx.cascade, options.extra_keys)
    wrong = [v for v in verdicts if not v.matched]
    evidence = {"source": state.source, "compared": len(verdicts),
                "differences": [v.model_dump(include={"path", "mode", "expected", "actual", "present", "reason"})
                                for v in wrong]}
    score = (len(verdicts) - len(wrong)) / len(verdicts) if verdicts else 1.0
    if not wrong:
        return Verdict(score=score, explanation=f"the final state matches ({_values(len(verdicts))} compared, "
                       f"from {state.source})", evidence=evidence)
    shown = "; ".join(describe_verdict(v) for v in wrong[:_SHOWN])
    more = f"; and {len(wrong) - _SHOWN} more (see the evidence)" if len(wrong) > _SHOWN else ""
    paths = "path" if len(wrong) == 1 else "paths"
    return Verdict(score=score, explanation=f"the final state differs at {len(wrong)} {paths} of "
                   f"{_values(len(verdicts))} compared (from {state.source}): {shown}{more}", evidence=evidence)


def _values(count: int) -> str:
    return f"{count} value" + ("" if count == 1 else "s")


FAMILIES = (
    CheckFamily(types=("final_state",), description="The state the agent reports after the conversation against "
                "the case's final_state.", options=FinalStateOptions, run=run_final_state),
)
