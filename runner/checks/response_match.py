"""`response_match`: ROUGE-1 F1 of the final answer against a reference (ADK's response_match_score).

Tokens and stems are those of Google's rouge-score with its Porter stemmer on: lower case, every run of
characters outside [a-z0-9] is a separator, and words longer than 3 characters are stemmed with NLTK's
Porter stemmer (its default NLTK_EXTENSIONS mode, the one rouge-score uses). NLTK is imported the first
time a word is stemmed, never before.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Literal, Optional

from pydantic import ConfigDict, Field

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_SEPARATORS = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer  # pure Python, but a slow import: only when a check runs

    return PorterStemmer()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer().stem(word) if len(word) > 3 else word


def rouge_tokens(text: str) -> list[str]:
    words = _SEPARATORS.sub(" ", text.lower()).split()
    # A stem is kept only if it is still plain [a-z0-9] (as rouge-score does).
    return [t for t in (stem(w) for w in words) if t and _SEPARATORS.search(t) is None]


def rouge1(reference: str, answer: str) -> tuple[float, float, float, list[str]]:
    """(precision, recall, F1, the shared unigrams) of `answer` against `reference`."""
    ref, ans = Counter(rouge_tokens(reference)), Counter(rouge_tokens(answer))
    shared = ref & ans
    overlap = sum(shared.values())
    precision = overlap / max(sum(ans.values()), 1)
    recall = overlap / max(sum(ref.values()), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1, sorted(shared.elements())


class ResponseMatchOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: response_match",
        json_schema_extra={"description": "ROUGE-1 F1 of the final answer against `reference` (default threshold 0.8).",
                           "examples": [{"type": "response_match", "reference": "Your time off is on 2025-01-05.",
                                         "threshold": 0.6}]})

    type: Literal["response_match", "response_match_score"] = Field(
        title="Check type", description="response_match (alias: ADK's response_match_score).",
        examples=["response_match"])
    reference: Optional[str] = Field(
        None, min_length=1, title="Reference answer",
        description="The answer to compare with. Default: the `response` of the case's text goal (the first one that "
        "has one).", examples=["Your time off is on 2025-01-05."])


def run_response_match(options: ResponseMatchOptions, ctx: CheckContext) -> Verdict:
    reference = options.reference
    if reference is None:
        reference = next((g.response for g in ctx.case.text_goals() if g.response), None)
    if reference is None:
        return Verdict(skipped="no reference answer: give `reference:` or a text goal with `response`")
    answer = ctx.trajectory.final_text
    if answer is None:
        return Verdict(score=0.0, passed=False, explanation="the agent gave no final answer",
                       evidence={"reference": reference})
    precision, recall, f1, shared = rouge1(reference, answer)
    return Verdict(score=f1, explanation=f"ROUGE-1 F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f}); "
                   f"{len(shared)} shared word(s)",
                   evidence={"precision": precision, "recall": recall, "f1": f1, "matched_unigrams": shared,
                             "reference": reference})


FAMILIES = (
    CheckFamily(types=("response_match", "response_match_score"),
                description="ROUGE-1 F1 of the final answer against a reference answer.",
                options=ResponseMatchOptions, run=run_response_match, default_threshold=0.8),
)
