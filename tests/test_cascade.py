"""The fuzzy cascade (runner/score/cascade.py) and the date parser it uses (runner/score/dates.py)."""
from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.dates import parse_date
from runner.score.embeddings import EmbeddingUnavailable


class FakeJudge:
    """Answers from a table, or raises like an unreachable LLM; records what it was asked."""

    def __init__(self, matched=True, score=0.9, reason="same meaning", error=None):
        self.answer = SimpleNamespace(matched=matched, score=score, reason=reason)
        self.error = error
        self.calls = []

    def semantic_match(self, expected, actual, context):
        self.calls.append((expected, actual, context))
        if self.error is not None:
            raise self.error
        return self.answer


class FakeEmbedder:
    def __init__(self, score=0.85):
        self.score = score
        self.calls = []

    def similarity(self, a, b):
        self.calls.append((a, b))
        return self.score


class UnavailableEmbedder:
    def similarity(self, a, b):
        raise EmbeddingUnavailable("sentence-transformers is not installed (pip install 'evalrun[embeddings]')")


def cascade(judge=None, embedder=None, **settings):
    return Cascade(CascadeSettings(**settings), judge=judge, embedder=embedder)


# ---------------------------------------------------------------- stage 0: fuzzy matching off


def test_disabled_fuzzy_matching_behaves_as_strict():
    judge, embedder = FakeJudge(), FakeEmbedder(score=1.0)
    off = cascade(judge, embedder, enable_fuzzy_matching=False)
    decision = off.compare("New York", "new york city")
    assert (decision.matched, decision.decided_by, decision.score) == (False, "exact", None)
    assert decision.reason == "expected 'New York', got 'new york city'"
    assert off.compare(10, "10.0").decided_by == "number"
    assert off.compare(100, 100.5).matched is False  # no relative tolerance either
    assert off.compare("2025-01-05", "January 5, 2025").matched is False
    assert judge.calls == [] and embedder.calls == []


# ---------------------------------------------------------------- stage 1: no model


def test_equal_after_normalisation_needs_no_model():
    judge, embedder = FakeJudge(matched=False), FakeEmbedder(score=0.0)
    decision = cascade(judge, embedder).compare(" New York ", "new york")
    assert (decision.matched, decision.decided_by, decision.score, decision.notes) == (True, "exact", 1.0, [])
    assert judge.calls == [] and embedder.calls == []


def test_numbers_within_relative_tolerance():
    judge = FakeJudge(matched=True)
    decision = cascade(judge).compare(100, "100.9")
    assert (decision.matched, decision.decided_by, decision.score) == (True, "number", None)
    assert decision.reason == "'100.9' is within ±1.00% of 100"
    decision = cascade(judge).compare(100, 101.5)
    assert (decision.matched, decision.decided_by) == (False, "number")
    assert decision.reason == "101.5 is outside ±1.00% of 100"
    assert judge.calls == []  # numbers never reach the models


def test_numbers_with_absolute_tolerance():
    decision = cascade().compare(100, 104, tolerance=5)
    assert (decision.matched, decision.decided_by, decision.reason) == (True, "number", "104 is within ±5 of 100")
    assert not cascade().compare(100, 106, tolerance=5).matched


def test_relative_tolerance_setting_and_zero():
    assert cascade(number_rel_tolerance=0.05).compare(100, 104.5).matched
    assert not cascade().compare(0, 0.001).matched
    assert cascade().compare(0, "0.0").matched


def test_dates_across_formats():
    judge = FakeJudge(matched=True)
    decision = cascade(judge).compare("2025-01-05", "January 5, 2025")
    assert (decision.matched, decision.decided_by) == (True, "date")
    assert decision.reason == "same date: 2025-01-05 vs 2025-01-05"
    decision = cascade(judge).compare("2025-01-05", "2025-01-06")
    assert (decision.matched, decision.decided_by) == (False, "date")
    assert decision.reason == "different dates: 2025-01-05 vs 2025-01-06"
    assert judge.calls == []  # dates never reach the models


def test_eight_digit_dates_are_dates_not_close_numbers():
    decision = cascade().compare("20250105", "20250106")
    assert (decision.matched, decision.decided_by) == (False, "date")
    assert cascade().compare(datetime.date(2025, 1, 5), "5 Jan 2025").decided_by == "date"


def test_structures_are_decided_by_strict_equality():
    judge = FakeJudge(matched=True)
    decision = cascade(judge).compare({"a": "x"}, {"a": "y"})
    assert (decision.matched, decision.decided_by) == (False, "exact")
    assert decision.reason == "at a: expected 'x', got 'y'"
    assert cascade(judge).compare(["a", "b"], ["B", "A"]).matched
    assert cascade(judge).compare(True, "yes").decided_by == "exact"
    assert judge.calls == []


# ---------------------------------------------------------------- stage 2: LLM judge


def test_llm_judge_decides():
    judge = FakeJudge(matched=True, score=0.93, reason="both name the same city")
    decision = cascade(judge, FakeEmbedder(0.0)).compare("NYC", "New York", context="the tool argument `city`")
    assert (decision.matched, decision.decided_by, decision.score, decision.reason) == (
        True, "llm", 0.93, "both name the same city")
    assert judge.calls == [("NYC", "New York", "the tool argument `city`")]


def test_llm_judge_can_say_no():
    decision = cascade(FakeJudge(matched=False, score=None, reason="different"), FakeEmbedder(1.0)).compare("a", "b")
    assert (decision.matched, decision.decided_by, decision.score) == (False, "llm", None)


def test_llm_failure_falls_through_with_a_note():
    judge = FakeJudge(error=ConnectionError("connection refused"))
    decision = cascade(judge, FakeEmbedder(0.85)).compare("The meeting is Monday", "Meeting on Monday")
    assert (decision.matched, decision.decided_by, decision.score) == (True, "embedding", 0.85)
    assert decision.notes == ["llm: judge failed: ConnectionError: connection refused"]


def test_llm_failure_is_never_a_silent_pass():
    judge = FakeJudge(matched=True, error=RuntimeError("bad json"))
    decision = cascade(judge, use_embeddings=False).compare("laptop computers", "banana bread recipe")
    assert (decision.matched, decision.decided_by) == (False, "rapidfuzz")
    assert decision.notes == ["llm: judge failed: RuntimeError: bad json"]


def test_numbers_go_to_models_as_text_when_only_one_side_is_numeric():
    judge = FakeJudge(matched=True)
    decision = cascade(judge).compare(10, "ten")
    assert decision.decided_by == "llm"
    assert judge.calls[0][:2] == ("10", "ten")


# ---------------------------------------------------------------- stage 3: embeddings (fake)


def test_embedding_decides_with_threshold():
    decision = cascade(embedder=FakeEmbedder(0.85)).compare("a b c", "x y z")
    assert (decision.matched, decision.decided_by, decision.score) == (True, "embedding", 0.85)
    assert decision.reason == "cosine similarity 0.85 >= threshold 0.80"
    decision = cascade(embedder=FakeEmbedder(0.85)).compare("a b c", "x y z", threshold=0.9)
    assert (decision.matched, decision.reason) == (False, "cosine similarity 0.85 < threshold 0.90")
    assert cascade(embedder=FakeEmbedder(0.85), similarity_threshold=0.86).compare("a", "b").matched is False


def test_embeddings_unavailable_falls_to_rapidfuzz_with_a_note():
    decision = cascade(embedder=UnavailableEmbedder()).compare("New York", "new york city")
    assert (decision.matched, decision.decided_by) == (True, "rapidfuzz")
    assert decision.score == pytest.approx(0.9)
    assert decision.notes == ["embedding: sentence-transformers is not installed (pip install 'evalrun[embeddings]')"]


def test_embedding_failure_of_another_kind_also_falls_through():
    class Broken:
        def similarity(self, a, b):
            raise RuntimeError("out of memory")

    decision = cascade(embedder=Broken()).compare("New York", "new york city")
    assert decision.decided_by == "rapidfuzz"
    assert decision.notes == ["embedding: failed: RuntimeError: out of memory"]


def test_notes_collect_every_stage_that_could_not_decide():
    decision = cascade(FakeJudge(error=TimeoutError("timed out")), UnavailableEmbedder()).compare("abc", "xyz")
    assert decision.decided_by == "rapidfuzz"
    assert [note.split(":")[0] for note in decision.notes] == ["llm", "embedding"]


# ---------------------------------------------------------------- stage 4: rapidfuzz


def test_rapidfuzz_when_embeddings_are_disabled():
    embedder = FakeEmbedder(1.0)
    decision = cascade(embedder=embedder, use_embeddings=False).compare("New York", "new york city")
    assert (decision.matched, decision.decided_by, decision.notes) == (True, "rapidfuzz", [])
    assert decision.score == pytest.approx(0.9)
    assert decision.reason == "text similarity 0.90 >= threshold 0.80"
    assert embedder.calls == []


def test_rapidfuzz_score_is_on_the_0_1_scale():
    # watsonx compares WRatio's 0-100 score with 0.8, so almost anything matched there.
    decision = cascade(use_embeddings=False).compare("laptop computers", "banana bread recipe")
    assert (decision.matched, decision.decided_by) == (False, "rapidfuzz")
    assert 0 <= decision.score < 0.5


def test_text_goals_use_the_same_cascade():
    judge = FakeJudge(matched=True)
    decision = cascade(judge).compare("Your time off is on 2025-01-05.", "You are off on 5 Jan 2025.",
                                      context="the agent's answer")
    assert decision.decided_by == "llm"
    assert judge.calls[0][2] == "the agent's answer"


# ---------------------------------------------------------------- stage 3 with the real model


@pytest.mark.slow
def test_real_embeddings_match_paraphrases():
    decision = cascade().compare("The meeting is on Monday", "The meeting takes place on Monday")
    assert (decision.matched, decision.decided_by, decision.notes) == (True, "embedding", [])
    assert 0.8 <= decision.score <= 1.0


@pytest.mark.slow
def test_real_embeddings_reject_unrelated_text():
    decision = cascade().compare("laptop computers", "banana bread recipe")
    assert (decision.matched, decision.decided_by) == (False, "embedding")
    assert -0.3 <= decision.score < 0.4


# ---------------------------------------------------------------- dates.py


@pytest.mark.parametrize("text", [
    "2025-01-05", "2025-1-5", "2025-01-05T10:00:00", "2025-01-05T10:00:00Z", "2025-01-05 10:00",
    "2025-01-05T10:00:00.123+02:00", "20250105", "2025/01/05", "01/05/2025", "1/5/2025",
    "5 January 2025", "January 5, 2025", "january 5 2025", "Jan 5 2025", "Jan. 5, 2025", "5 Jan 2025",
    "5th January 2025", "JAN 5, 2025", " 2025-01-05 ",
])
def test_date_formats(text):
    assert parse_date(text) == datetime.date(2025, 1, 5)


def test_us_order_and_month_names():
    assert parse_date("12/01/2025") == datetime.date(2025, 12, 1)
    assert parse_date("Sept 3, 2025") == datetime.date(2025, 9, 3)
    assert parse_date(20250105) == datetime.date(2025, 1, 5)
    assert parse_date(datetime.datetime(2025, 1, 5, 10, 0)) == datetime.date(2025, 1, 5)


@pytest.mark.parametrize("value", [
    "15778303", 15778303, "2025-02-30", "13/01/2025", "Foo 5 2025", "2025", "5 January", "1234567",
    "202501051", "January 5, 2025 and more", "", None, 3.5, True, "2025-01-05T25:99",
])
def test_not_dates(value):
    assert parse_date(value) is None


def test_expected_texts_are_encoded_in_one_batch_when_embeddings_are_reached():
    class CountingEmbedder:
        def __init__(self):
            self.batches = []

        def encode_many(self, texts):
            self.batches.append(list(texts))

        def similarity(self, a, b):
            self.batches.append([a, b])
            return 0.9

    embedder = CountingEmbedder()
    cascade = Cascade(CascadeSettings(), embedder=embedder)
    cascade.expect(["the answer", "first reply", "second reply"])
    assert embedder.batches == []  # nothing is encoded before a comparison needs it
    assert cascade.compare("the answer", "first reply").decided_by == "embedding"
    assert embedder.batches[0] == ["the answer", "first reply", "second reply"]
    cascade.compare("the answer", "second reply")
    assert len(embedder.batches) == 3  # the batch is not sent again


@pytest.mark.parametrize("expected, actual, matched, stage", [
    ("2025", "2044", False, "number"), ("15778303", "15800000", False, "number"), (100, "100", True, "exact"),
    (100, 100.0, True, "exact"),
])
def test_whole_numbers_match_only_when_equal_without_a_tolerance(expected, actual, matched, stage):
    decision = cascade().compare(expected, actual)
    assert (decision.matched, decision.decided_by) == (matched, stage)
    if not matched:
        assert decision.reason.endswith("(whole numbers match only when equal, unless a tolerance is given)")
