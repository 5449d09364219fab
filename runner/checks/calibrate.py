"""`evalrun calibrate LABELS.yaml`: run one judged check on examples a person labelled pass or fail, and
report how often the judge agrees, Cohen's kappa and the confusion table — so a team can see whether its
judge and template deserve trust before a run leans on them.

A labels file:

    check: {type: semantic_match}        # any check (a judged one is the point), with its options
    examples:
      - id: same-date-other-words        # unique
        question: When is my time off?   # the user's message (optional)
        answer: You're off on 5 Jan 2025. # the agent's final answer ...
        # messages: [...]                # ... or a whole conversation (OpenAI-style messages) instead
        reference: Your time off is on January 5, 2025.   # merged into the check's options
        options: {}                      # any other check options for this example
        label: pass                      # what a person decided: pass or fail
        note: date written another way   # optional, for people

Verdicts that are `unscored` or `skipped` are counted apart and left out of agreement and kappa. This module
reads labels and measures agreement; playing the check with the project's judge is runner/session/calibrate.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..results.models import CheckResult
from ..util.diagnostics import Diagnostic


class LabelledExample(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Labelled example", json_schema_extra={
        "description": "One conversation (or question and answer) and the verdict a person gave it.",
        "examples": [{"id": "same-date", "answer": "You're off on 5 Jan 2025.",
                      "reference": "Your time off is on January 5, 2025.", "label": "pass"}]})

    id: str = Field(min_length=1, title="Example id", description="Unique within the file.", examples=["same-date"])
    question: str | None = Field(None, title="Question", description="The user's message.",
                                    examples=["When is my time off?"])
    answer: str | None = Field(None, title="Answer", description="The agent's final answer.",
                                  examples=["You're off on 5 Jan 2025."])
    messages: list[dict[str, Any]] | None = Field(
        None, title="Messages", description="A whole conversation (OpenAI-style messages), instead of question/answer.",
        examples=[[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]])
    reference: str | None = Field(None, min_length=1, title="Reference",
                                     description="The check's `reference` option for this example.",
                                     examples=["Your time off is on January 5, 2025."])
    options: dict[str, Any] = Field(default_factory=dict, title="Check options",
                                    description="Further options of the check for this example.",
                                    examples=[{"statement": "The agent apologises."}])
    label: Literal["pass", "fail"] = Field(title="Label", description="What a person decided.", examples=["pass"])
    note: str | None = Field(None, title="Note", description="Why, for people.", examples=["same date"])

    @model_validator(mode="after")
    def _one_conversation(self) -> LabelledExample:
        if (self.messages is None) == (self.answer is None):
            raise ValueError("give either `answer` (with an optional `question`) or `messages`, not both")
        if self.messages is not None and self.question is not None:
            raise ValueError("`question` goes with `answer`; with `messages`, put it in the messages")
        return self

    def conversation(self) -> list[dict[str, Any]]:
        if self.messages is not None:
            return self.messages
        return ([{"role": "user", "content": self.question}] if self.question else []) + [
            {"role": "assistant", "content": self.answer}]


class LabelSet(BaseModel):
    model_config = ConfigDict(extra="forbid", title="evalrun calibration labels", json_schema_extra={
        "description": "A check and examples labelled by people, for `evalrun calibrate`.",
        "examples": [{"check": {"type": "semantic_match"}, "examples": [
            {"id": "a", "answer": "Jan 5", "reference": "January 5", "label": "pass"}]}]})

    schema_: str | None = Field(None, alias="$schema", title="JSON Schema", description="Editor hint.",
                                   examples=["schemas/labels.schema.json"])
    check: dict[str, Any] = Field(title="Check", description="The check to calibrate, as in a suite's `checks:`.",
                                  examples=[{"type": "semantic_match"}])
    examples: list[LabelledExample] = Field(min_length=1, title="Examples", description="The labelled examples.",
                                            examples=[[{"id": "a", "answer": "Jan 5", "reference": "January 5",
                                                        "label": "pass"}]])

    @field_validator("check")
    @classmethod
    def _a_known_check(cls, spec: dict[str, Any]) -> dict[str, Any]:
        from . import registry

        if spec.get("type") not in registry():
            from ..util.diagnostics import did_you_mean

            raise ValueError(f"unknown check type {spec.get('type')!r}{did_you_mean(str(spec.get('type')), registry())}")
        return spec

    @field_validator("examples")
    @classmethod
    def _unique_ids(cls, items: list[LabelledExample]) -> list[LabelledExample]:
        ids = [e.id for e in items]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"example id(s) used twice: {', '.join(twice)}")
        return items


def load_labels(path: Path) -> tuple[LabelSet | None, list[Diagnostic]]:
    """The labels file, or its problems with line and column (each example's check options included)."""
    from ..suite.reader import read_document
    from ..util.files import display_path
    from .run import check_problem

    doc = read_document(path, display_path(path))
    if doc.diagnostics:
        return None, doc.diagnostics
    try:
        labels = LabelSet.model_validate(doc.data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            cause = (err.get("ctx") or {}).get("error")
            message = str(cause) if cause is not None else err["msg"]
            doc.error(loc, f"{'.'.join(map(str, loc)) or 'the file'}: {message}", "labels")
        return None, doc.diagnostics
    for n, example in enumerate(labels.examples):
        problem = check_problem(spec_for(labels, example))
        if problem:
            doc.error(("examples", n), f"examples[{n}] ('{example.id}'): the check with this example's options is "
                      f"invalid: {problem}", "labels")
    return (None if doc.diagnostics else labels), doc.diagnostics


def spec_for(labels: LabelSet, example: LabelledExample) -> dict[str, Any]:
    return {**labels.check, **({"reference": example.reference} if example.reference else {}), **example.options}


class Agreement(BaseModel):
    """Judge against people, over the examples the judge decided."""

    check: str  # the check's type, as written
    total: int
    decided: int
    agreement: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]  # human label -> judge verdict -> count
    undecided: list[str]  # example ids whose check was unscored or skipped, with why
    disagreements: list[str]


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (human, judge) labels; None when chance agreement is 1 (every label the same)."""
    from fractions import Fraction

    if not pairs:
        return None
    n = len(pairs)
    # Exact shares: in floats, 2 of 5 comes out as 0.3999999999999999 and could fall under a --min-kappa of 0.4.
    observed = Fraction(sum(h == j for h, j in pairs), n)
    labels = {h for h, _ in pairs} | {j for _, j in pairs}
    expected = sum(Fraction(sum(h == c for h, _ in pairs) * sum(j == c for _, j in pairs), n * n) for c in labels)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def agreement_of(labels: LabelSet, results: list[CheckResult]) -> Agreement:
    pairs, undecided, disagreements = [], [], []
    confusion = {h: {"pass": 0, "fail": 0} for h in ("pass", "fail")}
    for example, result in zip(labels.examples, results, strict=True):
        if result.status not in ("passed", "failed"):
            undecided.append(f"{example.id}: {result.explanation}")
            continue
        verdict = "pass" if result.status == "passed" else "fail"
        pairs.append((example.label, verdict))
        confusion[example.label][verdict] += 1
        if verdict != example.label:
            disagreements.append(f"{example.id}: labelled {example.label}, the check said {verdict}: "
                                 f"{result.explanation}")
    agree = sum(h == j for h, j in pairs) / len(pairs) if pairs else None
    return Agreement(check=str(labels.check["type"]), total=len(labels.examples), decided=len(pairs), agreement=agree, kappa=cohen_kappa(pairs),
                     confusion=confusion, undecided=undecided, disagreements=disagreements)
