"""Agentflow's judged criteria through evalrun's judge: response_match and llm_judge (the same judge in
Agentflow), rubric_based, factual_accuracy, hallucination, safety, simulation_goals.

Each reads what Agentflow's criterion reads (the first user message, the last answer, the last expected answer,
the rubrics, the case's reference facts or context, the tool results) and asks evalrun's judge, with evalrun's
template (prompts/check_agentflow.j2), boundary token and retries, for a 0-1 score; the score is the mean of
`samples` verdicts (Agentflow's num_samples), against the threshold. Where Agentflow silently scores without a
judge, evalrun does not: an unreachable or unusable judge leaves the criterion unscored (Agentflow: 0.5); an
answer that is missing where one is judged scores 0 (Agentflow: 1.0); nothing to compare against (no expected
answer, no rubric) skips the criterion (Agentflow: 1.0), which never passes a case on its own.
"""
from __future__ import annotations

import json
from typing import Any

from ..base import CheckContext, Verdict
from . import actuals
from .options import AgentflowJudgeOptions

PROMPT = "check_agentflow.j2"
_NEEDS_REFERENCE = ("response_match", "llm_judge", "simulation_goals")


def _read(reply: dict) -> Any:
    from ...llm.errors import LLMError
    from ..graded import Reading

    score = reply.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise LLMError(f"judge reply has no score from 0 to 1: {score!r:.40}")
    reason = reply.get("reason") if isinstance(reply.get("reason"), str) else ""
    return Reading(float(score), f"{float(score):.3g}: {reason}", {"reason": reason})


def _hallucination_context(ctx: CheckContext, options: AgentflowJudgeOptions) -> str:
    """Agentflow's context: each recorded call's non-empty result, then the case's metadata.context."""
    parts = [f"Tool {c.name} returned: {c.result if isinstance(c.result, str) else json.dumps(c.result, default=str)}"
             for c in ctx.trajectory.tool_calls if not c.is_error and c.result not in (None, "")]
    if options.context:
        parts.append(f"Reference context: {options.context}")
    return "\n\n".join(parts) or "No context available"


def run_judge(options: AgentflowJudgeOptions, ctx: CheckContext) -> Verdict:
    from ..graded import _graded, _schema

    criterion = options.criterion
    answer = actuals.last_answer(ctx)
    reference = options.reference if options.reference is not None else actuals.reference_of_turns(ctx)
    head = f"Agentflow {criterion}"
    if criterion in _NEEDS_REFERENCE and not reference:
        return Verdict(skipped=f"{head}: no expected answer to compare with (Agentflow scores it 1.0; evalrun "
                       "passes nothing on nothing)")
    if criterion == "rubric_based" and not options.rubrics:
        return Verdict(skipped=f"{head}: no rubrics (Agentflow scores it 1.0)")
    if not answer and criterion != "simulation_goals":
        if criterion == "safety":
            return Verdict(skipped=f"{head}: the last turn gave no answer to rate")
        return Verdict(score=0.0, explanation=f"{head}: the last turn gave no answer (Agentflow scores an empty answer "
                       "1.0; evalrun does not pass it)")
    data: dict[str, Any] = {"question": actuals.question(ctx), "answer": answer}
    if criterion in ("response_match", "llm_judge"):
        data["expected"] = reference
    elif criterion == "simulation_goals":
        data = {"conversation": answer, "goals": reference}
    elif criterion == "rubric_based":
        data["rubrics"] = [{"rubric_id": r.rubric_id, "content": r.content} for r in options.rubrics]
    elif criterion == "factual_accuracy":
        data["reference"] = reference or options.reference_facts or "Not provided"
    elif criterion == "hallucination":
        data["context"] = _hallucination_context(ctx, options)
    verdict = _graded(options, ctx, PROMPT, {"criterion": criterion}, data, _read,
                      _schema({"score": {"type": "number"}}), five_point=False)
    if verdict.score is not None:
        verdict.explanation = f"{head}, mean of {options.samples} sample(s): {verdict.explanation}"
    return verdict
