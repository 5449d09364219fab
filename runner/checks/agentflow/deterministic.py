"""Agentflow's deterministic criteria as evalrun checks: trajectory, tool_name_match, node_order, rouge_match,
contains_keywords, and the verdict of a config with no criterion. Scores are scoring.py's (Agentflow's own
rules, float for float); each explanation names the rule that applied."""
from __future__ import annotations

from ..base import CheckContext, Verdict
from . import actuals
from .options import (
    AgentflowKeywordsOptions,
    AgentflowNoCriteriaOptions,
    AgentflowNodeOrderOptions,
    AgentflowRougeOptions,
    AgentflowToolNameOptions,
    AgentflowTrajectoryOptions,
)
from .scoring import (
    keywords_found,
    keywords_score,
    node_order_score,
    rouge_f1,
    rouge_score,
    tool_name_score,
    trajectory_score,
)

_RULE = {"EXACT": "at their position", "IN_ORDER": "in order (greedy)", "ANY_ORDER": "in any order (first unused match)"}


def _pooled(ctx: CheckContext) -> str:
    turns = actuals.turn_count(ctx)
    return f"pooled over {turns} turn{'s' if turns != 1 else ''}"


def _failed_note(failed: int) -> str:
    return (f"; {failed} failed call(s) left out (Agentflow never records a call that raised)" if failed else "")


def run_trajectory(options: AgentflowTrajectoryOptions, ctx: CheckContext) -> Verdict:
    expected = ([(c.name, dict(c.args)) for c in options.expected] if options.expected is not None
                else actuals.expected_calls_of_turns(ctx))
    calls, failed = actuals.pooled_calls(ctx)
    mode = options.match_type
    result = trajectory_score(calls, expected, mode, options.check_args)
    args_rule = "arguments compared where listed" if options.check_args else "names only (check_args false)"
    head = f"Agentflow trajectory, {mode}, {_pooled(ctx)}, {args_rule}: "
    if not expected:
        said = ("no expected calls and none made" if not calls else
                f"no expected calls but {len(calls)} made, which EXACT fails" if mode == "EXACT" else
                f"no expected calls: Agentflow scores {mode} 1.0 whatever was called")
    else:
        said = f"{result.matched} of {result.expected} expected calls {_RULE[mode]}"
        missing = [i for i in range(len(expected)) if i not in result.matched_at]
        if missing:
            said += f"; not matched: {', '.join(actuals.shown_call(expected[i]) for i in missing[:3])}"
        if mode == "EXACT" and len(calls) > len(expected):
            said += f"; {len(calls) - len(expected)} call(s) after the expected ones cost nothing (Agentflow's " \
                    "code, although its docs say EXACT allows no extras)"
    evidence = {"match_type": mode, "check_args": options.check_args,
                "expected": [{"name": n, "args": a} for n, a in expected],
                "calls": [{"name": n, "args": a} for n, a in calls], "matched": result.matched}
    return Verdict(score=result.score, explanation=head + said + _failed_note(failed), evidence=evidence)


def run_tool_name_match(options: AgentflowToolNameOptions, ctx: CheckContext) -> Verdict:
    expected = options.expected if options.expected is not None else [n for n, _ in actuals.expected_calls_of_turns(ctx)]
    calls, failed = actuals.pooled_calls(ctx)
    names = [n for n, _ in calls]
    score = tool_name_score(names, expected)
    if not expected:
        said = "no expected tool names and no call" if not names else \
            f"no expected tool names but {len(names)} call(s): Agentflow scores 0.5"
    else:
        said = f"{round(score * len(expected))} of {len(expected)} expected tool names called (each once, any order)"
    return Verdict(score=score, explanation=f"Agentflow tool_name_match, {_pooled(ctx)}: {said}{_failed_note(failed)}",
                   evidence={"expected": list(expected), "called": names})


def run_node_order(options: AgentflowNodeOrderOptions, ctx: CheckContext) -> Verdict:
    visits = actuals.node_visits(ctx)
    if visits is None:
        return Verdict(unscored="node_order needs the graph's node visits, which only an Agentflow agent (`type: "
                       "agentflow`) records; this conversation has none (a transcript can carry them as "
                       "\"state\": {\"agentflow\": {\"node_visits\": [...]}})")
    result = node_order_score(visits, options.expected, options.match_type)
    said = ("no expected node order: Agentflow scores 1.0" if not options.expected else
            f"{result.matched} of {result.expected} expected node visits {_RULE[options.match_type]}")
    return Verdict(score=result.score, explanation=f"Agentflow node_order, {options.match_type}, {_pooled(ctx)}: {said} "
                   f"(visited: {', '.join(visits) or 'nothing'})",
                   evidence={"expected": options.expected, "visits": visits, "match_type": options.match_type})


def run_rouge_match(options: AgentflowRougeOptions, ctx: CheckContext) -> Verdict:
    reference = options.reference if options.reference is not None else actuals.reference_of_turns(ctx)
    answer = actuals.last_answer(ctx)
    score = rouge_score(answer, reference)
    if not reference:
        said = ("no expected answer and no answer: Agentflow scores 1.0" if not answer else
                "no expected answer: Agentflow scores any answer 0.5")
        evidence: dict[str, object] = {"answer": answer}
    else:
        precision, recall, f1 = rouge_f1(answer, reference)
        said = ("the last turn gave no answer" if not answer else
                f"ROUGE-1 F1 on word sets {f1:.3f} (precision {precision:.3f}, recall {recall:.3f})")
        evidence = {"reference": reference, "answer": answer, "precision": precision, "recall": recall}
    return Verdict(score=score, explanation=f"Agentflow rouge_match, last answer against the last expected answer: "
                   f"{said}", evidence=evidence)


def run_contains_keywords(options: AgentflowKeywordsOptions, ctx: CheckContext) -> Verdict:
    answer = actuals.last_answer(ctx)
    score = keywords_score(answer, options.keywords)
    if not options.keywords:
        return Verdict(score=score, explanation="Agentflow contains_keywords: no keywords listed, which Agentflow "
                       "scores 1.0", evidence={"answer": answer})
    found, missing = keywords_found(answer, options.keywords)
    said = f"{len(found)} of {len(options.keywords)} keywords in the last answer (case-insensitive)"
    if missing:
        said += f"; missing: {', '.join(repr(k) for k in missing[:5])}"
    return Verdict(score=score, explanation=f"Agentflow contains_keywords: {said}",
                   evidence={"found": found, "missing": missing, "answer": answer})


def run_no_criteria(options: AgentflowNoCriteriaOptions, ctx: CheckContext) -> Verdict:
    where = f" ({options.config})" if options.config else ""
    return Verdict(unscored=f"the eval config{where} checks nothing: its criteria are empty or all off (null, "
                   "enabled: false). Agentflow passes such a case; evalrun never passes a case on nothing. Turn on a "
                   "criterion, e.g. \"trajectory\": {\"threshold\": 1.0}")
