"""Offline facts beyond dates and amounts (runner/score/facts.py) and left-out clauses (omission.py):
without a judge, an answer that changes a day, a name, a code or a number word, or says half of the
expected text, does not match however similar it reads."""
from __future__ import annotations

import pytest

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.facts import check_facts, word_facts
from runner.score.omission import omitted_clause


class EverythingIsSimilar:
    model_id = None

    def similarity(self, a, b):
        return 1.0


def offline():
    return Cascade(CascadeSettings(), embedder=EverythingIsSimilar())


@pytest.mark.parametrize("expected, actual, reason", [
    ("The package will arrive on Thursday.", "The package will arrive on Tuesday.",
     "decided offline: the answer lacks the day 'thursday' of the expected text"),
    ("Your appointment with Dr. Patel is on Tuesday.", "Your appointment with Dr. Shah is on Tuesday.",
     "decided offline: the answer lacks the name 'Patel' of the expected text"),
    ("Your flight departs from gate B12.", "Your flight departs from gate B21.",
     "decided offline: the answer lacks the code 'B12' of the expected text"),
    ("Your room is booked for two nights.", "Your room is booked for three nights.",
     "decided offline: the answer lacks the number 2 of the expected text"),
    ("Maria Lopez", "Mario Lopez", "decided offline: the answer lacks the name 'Maria' of the expected text"),
    ("Rain is expected today in Berlin.", "Rain is expected tomorrow in Munich.",
     "decided offline: the answer lacks the day 'today' and the name 'Berlin' of the expected text"),
])
def test_a_changed_fact_is_a_non_match_explained(expected, actual, reason):
    decision = offline().compare(expected, actual)
    assert (decision.matched, decision.decided_by, decision.score, decision.reason) == (False, "embedding", None, reason)


@pytest.mark.parametrize("expected, actual", [
    ("Your table for 4 is booked for 7 pm tonight.", "I've reserved a table for four people at 7 pm this evening."),
    ("The transfer of 250 GBP to Anna Schmidt was completed.", "I sent £250 to Anna Schmidt successfully."),
    ("Expect heavy rain in Berlin tomorrow afternoon.", "Tomorrow afternoon it will rain heavily in berlin."),
    ("Your appointment with Dr. Patel is on Tuesday at 10 am.", "You're booked in with Dr. Patel on Tuesday at 10 am."),
    ("Customer Changed Their Mind about the Order", "changed my mind"),  # Title Case: no names
    ("Refund NOT approved", "The refund was not approved"),  # capitals for emphasis are no name
    ("Payslips are on the HR portal.", "You can find payslips in the HR portal."),
    ("Anna's transfer was sent.", "The transfer of Anna was sent."),
])
def test_facts_written_another_way_are_found(expected, actual):
    assert check_facts(expected, actual).missing == []


def test_the_kinds_of_word_facts():
    assert word_facts("Your flight LH400 to Lisbon leaves on Monday from gate B12; Dr. Patel and I fly too.") == (
        ("day", "monday"), ("code", "LH400"), ("code", "B12"), ("name", "Lisbon"), ("name", "Patel"))
    assert word_facts("Hamburg") == (("name", "Hamburg"),)  # a short value all in capitals is a name
    assert word_facts("Please Confirm The Booking For Me") == ()  # a longer one is Title Case
    assert word_facts("The refund is 49.90 EUR, paid at 10 am.") == ()  # currency codes and units are not names


def test_a_three_word_value_in_capitals_is_names_and_a_four_word_one_title_case():
    assert check_facts("Anna Maria Lopez", "Anna Lopez").missing == [("name", "Maria")]
    assert check_facts("Anna Maria Lopez Garcia", "Anna Lopez").missing == []


def test_similarity_equal_to_the_threshold_passes():
    class Fixed:
        model_id = None

        def similarity(self, a, b):
            return 0.74

    decision = Cascade(CascadeSettings(similarity_threshold=0.74), embedder=Fixed()).compare("a b", "c d")
    assert (decision.matched, decision.reason) == (True, "decided offline: embeddings 0.74 >= threshold 0.74")


def test_number_words_are_amounts_but_one_is_not():
    assert check_facts("booking for two adults", "2 adults").missing == []
    assert check_facts("Your bag allowance is one checked bag.", "Your allowance is two bags.").missing == []
    assert check_facts("check your email for the temporary one", "we emailed a temporary password").missing == []


# ---------------------------------------------------------------- left-out clauses


@pytest.mark.parametrize("expected, actual, left_out", [
    ("Your card is blocked and a replacement is on its way.", "Your card is blocked.", "a replacement is on its way"),
    ("Your time off is approved and your manager has been notified.", "Your manager has been notified.",
     "Your time off is approved"),
    ("fever and cough", "fever", "cough"),
    ("The hotel has a pool, a gym and free parking.", "The hotel has a pool.", "a gym"),
])
def test_an_answer_that_says_half_of_the_expected_text_does_not_match(expected, actual, left_out):
    assert omitted_clause(expected, actual) == left_out
    decision = offline().compare(expected, actual)
    assert (decision.matched, decision.decided_by) == (False, "embedding")
    assert decision.reason == f"decided offline: the answer says nothing of {left_out!r} of the expected text"


@pytest.mark.parametrize("expected, actual", [
    # Both clauses said in other words: the similarity stages weigh it.
    ("Your card has been blocked and a replacement is on its way.", "We froze your card and are sending a new one."),
    # A courtesy clause is never required.
    ("Good news: your refund is approved.", "Your refund is approved."),
    # One clause: nothing can be left out.
    ("Your refund is approved.", "Approved."),
])
def test_no_omission_where_nothing_was_left_out(expected, actual):
    assert omitted_clause(expected, actual) is None
