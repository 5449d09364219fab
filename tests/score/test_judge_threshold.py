"""A fuzzy argument's own `threshold` applies to the judge's score (issue 15: a judge that said match with
score 0.5 passed `{mode: fuzzy, threshold: 0.95}`). The end-to-end version, over HTTP with the real CLI, is
in test_offline_verdicts_cli.py; these pin the rule's edges."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from runner.score.cascade import Cascade, CascadeSettings


class Judge:
    def __init__(self, matched: bool, score):
        self.verdict = SimpleNamespace(matched=matched, score=score, reason="same meaning")

    def semantic_match(self, expected, actual, context):
        return self.verdict


def judged(matched, score, threshold, **settings):
    return Cascade(CascadeSettings(**settings), judge=Judge(matched, score)).compare(
        "the customer changed their mind", "changed my mind", threshold=threshold)


@pytest.mark.parametrize("matched, score, threshold, passes, reason", [
    (True, 0.5, 0.95, False, "the judge said match with score 0.50 < threshold 0.95: same meaning"),
    (True, 0.95, 0.95, True, "same meaning"),  # reaching the threshold is enough
    (True, 0.99, 0.95, True, "same meaning"),
    (True, 0.5, None, True, "same meaning"),  # no explicit threshold: the judge's word
    (False, 0.99, 0.5, False, "same meaning"),  # a judge's "no" stands whatever its score
    (True, None, 0.9, False, "the judge said match but gave no score, and the threshold 0.90 needs one: same meaning"),
    (True, None, None, True, "same meaning"),
])
def test_an_explicit_threshold_applies_to_the_judges_score(matched, score, threshold, passes, reason):
    decision = judged(matched, score, threshold)
    assert (decision.matched, decision.decided_by, decision.score, decision.reason) == (passes, "llm", score, reason)


def test_the_configured_similarity_threshold_is_not_applied_to_the_judge():
    decision = judged(True, 0.5, None, similarity_threshold=0.99)
    assert (decision.matched, decision.decided_by) == (True, "llm")
