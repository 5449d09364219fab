"""Checks a judge model decides: `semantic_match` (the final answer means the same as a reference) and
`assert` (the conversation satisfies a statement). Both go through the LLM layer: the agent's text
reaches the judge JSON-encoded between boundary lines, the verdict is the judge's own (tagged with the
boundary token), an unusable reply is retried and then makes the check `unscored`, never a pass.

The check passes when the judge says yes; with `samples: N` it asks N times (each its own request and cache
entry) and passes when more than half say yes: a tie is not a majority, so it fails; the explanation gives
the agreement and the spread of the scores. At temperature 0 the N answers would be one answer repeated, so
one request stands for all (`validate` warns). The score is the mean of the judge's scores; a `threshold`
(default 0) also requires that mean to reach it.
Without a judge (none configured, or fuzzy matching turned off) a judged check cannot be decided: it is
`unscored` with the reason (runner/checks/run.py), never a pass.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, Optional

from pydantic import ConfigDict, Field, create_model

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

SEMANTIC_MATCH_PROMPT = "semantic_match.j2"
ASSERT_PROMPT = "check_assert.j2"
NO_JUDGE = ("no judge model is configured: add `judge:` to evalrun.yaml, or give this check `judge: {model: ...}` "
            "(a --profile with `judged: false` leaves judged checks out on purpose)")
JUDGE_TURNED_OFF = ("evalrun.yaml sets enable_fuzzy_matching: false, which turns the judge off: set it to true, or give "
                    "this check `judge: {model: ...}` (a --profile with `judged: false` leaves judged checks out on "
                    "purpose)")


def _judge_override_model() -> type:
    """evalrun.yaml's judge settings, every one optional: what a check may override."""
    from ..llm.settings import JudgeSettings

    fields: dict[str, Any]
    # Optional[...] rather than `| None`: the annotation is a run-time value that mypy types as possibly None
    fields = {name: (Optional[field.annotation], Field(None, title=field.title, description=field.description,  # noqa: UP045
                                                       examples=field.examples))
              for name, field in JudgeSettings.model_fields.items()}
    model = create_model("JudgeOverride", __config__=ConfigDict(
        extra="forbid", title="Judge override",
        json_schema_extra={"description": "Settings of evalrun.yaml's `judge` to use for this check, over the "
                           "configured ones.", "examples": [{"model": "openai/gpt-4o", "temperature": 0}]}), **fields)
    return model


if TYPE_CHECKING:  # a model built at run time is a plain model to the type checker
    from pydantic import BaseModel as JudgeOverride
else:
    JudgeOverride = _judge_override_model()


class JudgedOptions(CheckOptions):
    judge: JudgeOverride | None = Field(
        None, title="Judge override",
        description="Settings of evalrun.yaml's `judge` (model, temperature, api_base, ...) to use for this check, "
        "over the configured ones.", examples=[{"model": "openai/gpt-4o", "temperature": 0}])
    judge_model: str | None = Field(
        None, min_length=1, title="Judge model",
        description="The model name to ask, with the other settings (api_base, key) of evalrun.yaml's `judge`, as an "
        "ADK or Agentflow eval config's `judge_model` means. Without a judge in evalrun.yaml the check is not run.",
        examples=["gpt-4o-mini"])
    samples: int = Field(
        1, ge=1, le=15, title="Samples",
        description="How many verdicts to ask for (each its own request and cache entry) when the judge's temperature "
        "is above 0; at temperature 0 they would repeat one answer, so one request is sent (validate warns). The "
        "check passes when more than half say yes (a tie fails); the score is the mean of the judge's scores.",
        examples=[3])


class SemanticMatchOptions(JudgedOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: semantic_match",
        json_schema_extra={"description": "A judge model decides whether the final answer means the same as "
                           "`reference` (passes on the judge's yes).",
                           "examples": [{"type": "semantic_match", "reference": "Your time off is on January 5."}]})

    type: Literal["semantic_match", "final_response_match_v2"] = Field(
        title="Check type", description="semantic_match (alias: ADK's final_response_match_v2).",
        examples=["semantic_match"])
    reference: str | None = Field(
        None, min_length=1, title="Reference answer",
        description="Default: the `response` of the case's text goal (the first one that has one).",
        examples=["Your time off is on January 5, 2025."])


class AssertOptions(JudgedOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: assert",
        json_schema_extra={"description": "A judge model decides whether the conversation satisfies `statement` "
                           "(watsonx's assert_llm).",
                           "examples": [{"type": "assert", "statement": "The agent confirms before cancelling."}]})

    type: Literal["assert", "llm_judge"] = Field(
        title="Check type", description="assert (alias: llm_judge).", examples=["assert"])
    statement: str = Field(
        min_length=1, title="Statement", description="What must be true of the conversation, in plain words.",
        examples=["The agent asks for the booking reference before cancelling."])


def judge_for(options: JudgedOptions, ctx: CheckContext) -> Any:
    """The LLMJudge this check uses, or None when there is none."""
    configured = getattr(ctx.cascade, "judge", None)
    if options.judge_model and configured is not None:  # the eval config's model, on evalrun.yaml's judge settings
        options = options.model_copy(update={"judge": JudgeOverride(**{
            **(options.judge.model_dump(exclude_none=True) if options.judge else {}), "model": options.judge_model})})
    if not options.judge or (options.judge_model and configured is None):
        return configured
    from ..llm.client import LLMClient
    from ..llm.judge import LLMJudge
    from ..llm.prompts import PromptLibrary
    from ..llm.settings import JudgeSettings

    override = options.judge.model_dump(exclude_none=True)
    if configured is None and "model" not in override:
        return None
    base = configured.client.settings.model_dump(exclude_unset=True) if configured is not None else {}
    settings = JudgeSettings.model_validate({**base, **override})
    prompts = configured.prompts if configured is not None else PromptLibrary()
    return LLMJudge(LLMClient(settings, role="judge"), prompts)


def ask(judge: Any, prompt: str, variables: dict[str, Any], data: dict[str, Any], samples: int) -> list[Any]:
    """`samples` verdicts on one prompt (one at temperature 0, where more would repeat it). LLMError when the
    judge gives no usable answer after its retries: only a reply tagged with this call's token counts."""
    from ..llm.judge import boundary_token, judge_prompt, match_reader, verdict_shape

    texts = [v for v in data.values() if isinstance(v, str)]
    token = boundary_token(*texts, json.dumps(data, ensure_ascii=False))
    data_json = json.dumps(data, ensure_ascii=False, indent=1)
    content = judge_prompt(judge.prompts, prompt, token, **variables, data_json=data_json)
    messages = [{"role": "user", "content": content}]
    read = match_reader(token)
    completions = judge.ask(messages, accept=read, expect=verdict_shape(token), samples=samples,
                            response_format=judge.verdict_format())
    return [read(completion) for completion in completions]


def samples_note(samples: int, asked: int) -> str:
    """What the explanation says when fewer samples were asked than written (temperature 0)."""
    if samples > asked:
        return f" (samples: {samples} at temperature 0 would repeat one answer: asked once)"
    return ""


def _decide(verdicts: list[Any], threshold: float, samples: int = 1) -> Verdict:
    scores = [v.score if v.score is not None else float(v.matched) for v in verdicts]
    mean = sum(scores) / len(scores)
    yes = sum(v.matched for v in verdicts)
    majority = yes * 2 > len(verdicts)
    reasons = [v.reason for v in verdicts]
    agreement = ""
    if len(verdicts) > 1:
        agreement = (f" ({yes} of {len(verdicts)} verdicts yes; scores {min(scores):.3g}-{max(scores):.3g}, "
                     f"spread {max(scores) - min(scores):.3g})")
    summary = f"the judge said {'yes' if majority else 'no'}{agreement}: {reasons[0]}"
    return Verdict(score=mean, passed=majority and mean >= threshold,
                   explanation=f"{summary} (score {mean:.3g}, threshold {threshold:g}){samples_note(samples, len(verdicts))}",
                   evidence={"verdicts": [{"match": v.matched, "score": v.score, "reason": v.reason} for v in verdicts],
                             **({"agreement": {"yes": yes, "of": len(verdicts), "min_score": min(scores),
                                               "max_score": max(scores)}} if len(verdicts) > 1 else {})})


def judge_verdict(options: JudgedOptions, ctx: CheckContext, prompt: str, variables: dict, data: dict,
                  default_threshold: float) -> Verdict:
    """Ask the judge with `prompt` (samples as the options say) and decide; without a judge the check is skipped
    (the case's scoring makes a gating skip `unscored`), an unusable judge makes it `unscored`."""
    from ..llm.errors import LLMError

    try:
        judge = judge_for(options, ctx)
    except ValueError as error:  # pydantic's ValidationError: the merged settings do not hold together
        return Verdict(unscored=f"the judge override is invalid: {error}")
    if judge is None:
        return Verdict(skipped=NO_JUDGE)
    try:
        verdicts = ask(judge, prompt, variables, data, options.samples)
    except LLMError as error:
        return Verdict(unscored=f"the judge gave no usable answer: {error}")
    threshold = options.threshold if options.threshold is not None else default_threshold
    return _decide(verdicts, threshold, options.samples)


def run_semantic_match(options: SemanticMatchOptions, ctx: CheckContext) -> Verdict:
    reference = options.reference or next((g.response for g in ctx.case.text_goals() if g.response), None)
    if reference is None:
        return Verdict(skipped="no reference answer: give `reference:` or a text goal with `response`")
    answer = ctx.trajectory.final_text
    if answer is None:
        return Verdict(score=0.0, passed=False, explanation="the agent gave no final answer")
    context = "the agent's final answer, against the reference answer of the check"
    return judge_verdict(options, ctx, SEMANTIC_MATCH_PROMPT,
                         {"expected": reference, "actual": answer, "context": context,
                          "context_json": json.dumps(context)},
                         {"expected": reference, "actual": answer}, 0.0)


def judge_conversation(ctx: CheckContext) -> list[dict]:
    """The conversation as a judge reads it: no system messages (planted canaries and the agent's instructions
    stay out), only the fields that say what was said and done."""
    return [{k: m[k] for k in ("role", "content", "tool_calls", "name") if k in m}
            for m in ctx.trajectory.messages if m.get("role") != "system"]


def run_assert(options: AssertOptions, ctx: CheckContext) -> Verdict:
    return judge_verdict(options, ctx, ASSERT_PROMPT, {"statement": options.statement},
                         {"statement": options.statement, "conversation": judge_conversation(ctx)}, 0.0)


FAMILIES = (
    CheckFamily(types=("semantic_match", "final_response_match_v2"), needs_model=True, default_threshold=0.0,
                alias_thresholds=(("final_response_match_v2", 1.0),),  # the share of turns judged a match
                description="A judge decides whether the final answer means the same as a reference.",
                options=SemanticMatchOptions, run=run_semantic_match),
    CheckFamily(types=("assert", "llm_judge"), needs_model=True, default_threshold=0.0,
                description="A judge decides whether the conversation satisfies a statement.",
                options=AssertOptions, run=run_assert),
)


def samples_warnings(cases: Any, config: Any) -> list[Any]:
    """A warning for each judged check (nested ones too) with `samples` > 1 whose judge runs at temperature 0:
    the answers would be one answer repeated, so one request is sent. `validate` shows them."""
    from ..util.diagnostics import Diagnostic
    from . import registry

    configured = getattr(config, "judge", None)
    families = registry()
    found = []

    def walk(case: Any, specs: Any, where: str) -> None:
        for index, spec in enumerate(specs if isinstance(specs, list) else []):
            if not isinstance(spec, dict):
                continue
            here = f"{where}[{index}]"
            walk(case, spec.get("checks"), f"{here}.checks")
            family = families.get(spec.get("type") or "")
            samples = spec.get("samples")
            if family is None or not family.needs_model or not isinstance(samples, int) or samples <= 1:
                continue
            override = given if isinstance(given := spec.get("judge"), dict) else {}
            if configured is None and "model" not in override:
                continue  # no judge at all: the check is not asked
            temperature = override.get("temperature", configured.temperature if configured is not None else 0.0)
            if temperature == 0:
                found.append(Diagnostic(
                    case.source.path, case.source.line, case.source.column, "warning",
                    f"case '{case.id}': check {here} ({spec['type']}) asks for samples: {samples} from a judge at "
                    "temperature 0, which would give one answer repeated: one request is sent; raise the judge's "
                    "temperature (evalrun.yaml or the check's `judge:`) for independent samples, or drop `samples`",
                    "samples-at-temperature-0"))

    for case in cases:
        walk(case, case.checks, "checks")
    return found
