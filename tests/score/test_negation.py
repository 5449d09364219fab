"""Negations in the offline stages (runner/score/negation.py, and how the cascade uses it).

Issue 15: with no judge, "Your refund of 49.90 EUR is not approved." matched "...is approved." (embeddings)
and a fuzzy argument "Refund NOT approved" matched "Refund approved" (0.91). Such a pair is a non-match,
decided without a model, and explained.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.negation import clauses, contradiction, stem

NEVER_MATCH = ("(offline stages never match a statement with its negation)")


class EverythingIsSimilar:
    """The worst embedder for negations: every pair of texts scores 1.0. Records what it was asked."""

    model_id = None

    def __init__(self):
        self.calls = []

    def similarity(self, a, b):
        self.calls.append((a, b))
        return 1.0


def offline(**settings):
    embedder = EverythingIsSimilar()
    return Cascade(CascadeSettings(**settings), embedder=embedder), embedder


# ---------------------------------------------------------------- the reproductions


def test_a_negated_answer_does_not_match_the_reference_without_a_judge():
    cascade, embedder = offline()
    decision = cascade.compare("Your refund of 49.90 EUR is approved.", "Your refund of 49.90 EUR is not approved.",
                               context="the agent's answer")
    assert (decision.matched, decision.decided_by, decision.score) == (False, "embedding", None)
    assert decision.reason == ("decided offline: one text negates the other: the expected text says "
                               "'Your refund of 49.90 EUR is approved', the answer says "
                               "'Your refund of 49.90 EUR is not approved' " + NEVER_MATCH)
    assert embedder.calls == []  # decided before any model is needed


def test_a_negated_fuzzy_argument_does_not_match():
    cascade, _ = offline()
    decision = cascade.compare("Refund approved", "Refund NOT approved", context="the tool argument `status`")
    assert (decision.matched, decision.decided_by) == (False, "embedding")
    assert decision.reason == ("decided offline: one text negates the other: the expected text says 'Refund approved', "
                               "the answer says 'Refund NOT approved' " + NEVER_MATCH)


def test_without_embeddings_rapidfuzz_is_named_and_the_negation_still_decides():
    decision = Cascade(CascadeSettings(use_embeddings=False)).compare("Refund approved", "Refund NOT approved")
    assert (decision.matched, decision.decided_by, decision.score) == (False, "rapidfuzz", None)
    assert decision.reason.startswith("decided offline: one text negates the other:")


def test_a_negation_in_the_reference_is_caught_as_well():
    cascade, _ = offline()
    decision = cascade.compare("You don't need to bring your passport.", "You need to bring your passport.")
    assert decision.matched is False
    assert decision.reason == ("decided offline: one text negates the other: the expected text says "
                               "\"You don't need to bring your passport\", the answer says "
                               "'You need to bring your passport' " + NEVER_MATCH)


def test_a_judge_decides_negations_itself():
    class Judge:
        def semantic_match(self, expected, actual, context):
            from types import SimpleNamespace
            return SimpleNamespace(matched=True, score=0.9, reason="the judge's own call")

    decision = Cascade(CascadeSettings(), judge=Judge()).compare("Refund approved", "Refund NOT approved")
    assert (decision.matched, decision.decided_by, decision.reason) == (True, "llm", "the judge's own call")


# ---------------------------------------------------------------- what counts as a negation


@pytest.mark.parametrize("negated", [
    "Your refund is not approved.", "Your refund isn't approved.", "Your refund hasn't been approved.",
    "Your refund was never approved.", "Your refund is no longer approved.", "Your refund is not yet approved.",
    "Your refund is unapproved.", "Your refund is not approved yet.", "We can't approve your refund.",
    "We cannot approve your refund.", "We won't approve your refund.", "Your refund was declined.",
    "Your refund was rejected.", "Your refund was denied.",
])
def test_every_way_of_saying_no_is_a_negation(negated):
    assert contradiction("Your refund is approved.", negated) is not None
    assert contradiction(negated, "Your refund is approved.") is not None


@pytest.mark.parametrize("expected, actual", [
    ("The room is available.", "The room is unavailable."),
    ("The item is eligible for a refund.", "The item is ineligible for a refund."),
    ("Roaming is enabled on your line.", "Roaming is disabled on your line."),
    ("refundable ticket", "non-refundable ticket"),
    ("with breakfast", "without breakfast"),
    ("pets allowed", "no pets allowed"),
    ("A fee applies to this change.", "No fee applies to this change."),
    ("The store is open today.", "The store is closed today."),
    ("Your payment succeeded.", "Your payment failed."),
    ("Your request was accepted.", "Your request was rejected."),
    ("The item is in stock.", "The item is out of stock."),
    ("Your cancellation was free of charge.", "Your cancellation was not free of charge."),
    ("The courier left the parcel with your neighbour.", "The courier did not leave the parcel with your neighbour."),
    ("Your payment went through.", "Your payment didn't go through."),
])
def test_prefixes_opposites_and_irregular_verbs(expected, actual):
    assert contradiction(expected, actual) is not None


@pytest.mark.parametrize("expected, actual", [
    # Both texts negate the same thing, in other words.
    ("Your refund is not approved.", "The refund has not been approved."),
    ("The room is not available on those dates.", "That room is unavailable for those dates."),
    ("Your card is no longer valid.", "Your card is not valid anymore."),
    ("The store is never open on Sundays.", "The store is closed on Sundays."),
    ("You will not be charged for the replacement.", "The replacement is free of charge."),
    # Double negation cancels out.
    ("It's not impossible to change the date.", "The date can be changed."),
    ("You cannot cancel this reservation without a fee.", "Cancelling this reservation costs a fee."),
    # Phrases that contain a negation word but deny nothing.
    ("We refund not only the ticket but also the seat.", "We refund the ticket and the seat."),
    ("Return it no later than Friday.", "Return it by Friday."),
    ("No, your refund is approved.", "Your refund is approved."),
    # "not ... before/until" restricts a time.
    ("Check-in opens at 3 pm.", "You can't check in before 3 pm."),
    # "no" denies its noun phrase: here the delivery charge, not the delivery.
    ("Delivery is free for this order.", "There is no delivery charge for this order."),
    # The negated fact is one the other text does not mention.
    ("Your room is booked.", "Your room is booked, and no breakfast is included."),
    ("Your order has been cancelled.", "I've cancelled your order. No charge was made to your card."),
])
def test_no_contradiction_where_nothing_is_denied(expected, actual):
    assert contradiction(expected, actual) is None
    assert contradiction(actual, expected) is None


def test_until_contradicts_when_both_texts_say_until():
    assert contradiction("You can cancel free of charge until Friday.",
                         "You cannot cancel free of charge until Friday.") is not None


def test_the_negation_of_one_fact_among_several_is_found_in_its_own_clause():
    found = contradiction("Your room is booked and breakfast is included.",
                          "Your room is booked but breakfast is not included.")
    assert (found.expected_clause, found.actual_clause) == ("and breakfast is included", "but breakfast is not included")


def test_the_negation_of_a_different_fact_is_no_contradiction():
    # Half the words shared (delivered), the other half not (parcel, letter): not the same statement.
    assert contradiction("The parcel was not delivered.", "The letter was delivered.") is None
    assert contradiction("The parcel was not delivered.", "The parcel was delivered.") is not None


def test_clauses_are_aligned_by_their_subject():
    # Each text says one is delayed and the other not: the flight's statements contradict.
    found = contradiction("The flight is not delayed; the train is delayed.",
                          "The flight is delayed; the train is not delayed.")
    assert found is not None
    assert (found.expected_clause, found.actual_clause) == ("The flight is not delayed", "The flight is delayed")


def test_titles_and_initials_do_not_cut_a_sentence():
    assert [c.text for c in clauses("Your appointment with Dr. Patel could not be confirmed.")] == \
        ["Your appointment with Dr Patel could not be confirmed"]


def test_stems_join_the_forms_of_a_word():
    assert {stem(w) for w in ("approve", "approved", "approves", "approving")} == {"approv"}
    assert {stem(w) for w in ("ship", "ships", "shipped", "shipping")} == {"ship"}
    assert {stem(w) for w in ("cancel", "cancelled", "cancels")} == {"cancel"}
    assert {stem(w) for w in ("agree", "agrees", "agreed")} == {"agre"}
    assert stem("accepted") == stem("approved")  # the opposite of declined is one word, whichever is written


def test_a_long_text_is_left_to_the_similarity_stages():
    long_text = "Your refund is approved. " * 300
    assert contradiction(long_text, long_text.replace("is approved", "is not approved")) is None


# ---------------------------------------------------------------- properties

SUBJECTS = ["Your refund", "The booking", "Your order", "The payment", "Your time off", "The transfer",
            "Your claim", "The package", "Your account", "The upgrade"]
STATES = ["approved", "confirmed", "shipped", "delivered", "completed", "processed", "cancelled", "included",
          "covered", "verified", "available", "allowed", "refunded", "paid", "scheduled"]
AUXILIARIES = [("is", "is not"), ("was", "was not"), ("has been", "has not been"), ("will be", "will not be"),
               ("is", "isn't"), ("has been", "hasn't been"), ("was", "was never"), ("will be", "won't be"),
               ("can be", "cannot be"), ("is", "is no longer")]
TAILS = ["", " today", " for you", " as requested", " by our team"]


@st.composite
def statements(draw):
    subject, state, tail = draw(st.sampled_from(SUBJECTS)), draw(st.sampled_from(STATES)), draw(st.sampled_from(TAILS))
    plain, negated = draw(st.sampled_from(AUXILIARIES))
    return f"{subject} {plain} {state}{tail}.", f"{subject} {negated} {state}{tail}."


@settings(max_examples=300, deadline=None)
@given(statements(), st.lists(statements(), max_size=2), st.booleans())
def test_inserting_a_negation_into_a_matching_sentence_never_yields_a_match(statement, others, negate_the_reference):
    plain, negated = statement
    context = " ".join(p for p, _ in others)
    expected, actual = (negated, plain) if negate_the_reference else (plain, negated)
    cascade, _ = offline()  # every similarity is 1.0: only the negation rule can say no
    decision = cascade.compare(f"{context} {expected}".strip(), f"{context} {actual}".strip())
    assert decision.matched is False
    assert "negates" in decision.reason


@settings(max_examples=300, deadline=None)
@given(statements(), st.booleans())
def test_negating_both_texts_the_same_way_never_creates_a_contradiction(statement, negated):
    plain, negative = statement
    text = negative if negated else plain
    other = text.replace("Your ", "The ").replace(" today", " this day")
    assert contradiction(text, other) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(statements(), st.booleans()), min_size=1, max_size=3),
       st.lists(st.tuples(statements(), st.booleans()), min_size=1, max_size=3))
def test_contradiction_is_symmetric_and_no_text_contradicts_itself(first, second):
    a = " ".join(pair[1] if flip else pair[0] for pair, flip in first)
    b = " ".join(pair[1] if flip else pair[0] for pair, flip in second)
    assert (contradiction(a, b) is None) == (contradiction(b, a) is None)
    assert contradiction(a, a) is None


# ---------------------------------------------------------------- issue 26: whom or what a "no" denies


@pytest.mark.parametrize("expected, actual", [
    # The noun phrase after "no" ends where its verb begins: "no man", not "no man cutting onion".
    ("There is no man cutting an onion.", "An onion is being cut by a man."),
    # Its head is what is denied, whatever its size: "no small guinea pig" denies a guinea pig.
    ("There is no small guinea pig on the floor.", "A guinea pig is on the floor."),
    # When the clause says no one at all does something, the action is what is denied, whoever does it.
    ("There is no man in a black jacket doing tricks on a motorbike.",
     "A person in a black jacket is doing tricks on a motorbike."),
    ("Nobody is repairing the broken lift today.", "A technician is repairing the broken lift today."),
    # Near-synonyms read alike (lexicon.py): "the lady" is "the woman".
    ("The lady is not smiling.", "The woman is smiling."),
])
def test_a_denial_is_found_however_the_other_text_names_what_it_denies(expected, actual):
    assert contradiction(expected, actual) is not None
    assert contradiction(actual, expected) is not None


@pytest.mark.parametrize("expected, actual", [
    # "no charge" names no action: its focus must be said, and "free" says the same ("not charged").
    ("Delivery is free for orders over 50 EUR shipped to Germany.",
     "There is no delivery charge for orders over 50 EUR shipped to Germany."),
    ("There is no man at the desk.", "A woman is waiting at the desk."),  # no action shared: nothing denied
])
def test_what_a_denial_does_not_reach(expected, actual):
    assert contradiction(expected, actual) is None
    assert contradiction(actual, expected) is None


def test_a_denied_noun_phrase_records_its_head_and_whether_it_denies_a_doer():
    (clause,) = clauses("There is no small guinea pig gnawing a carrot")
    assert clause.focus == frozenset(map(stem, ("small", "guinea", "pig")))
    assert (clause.head, clause.existential) == ("pig", True)
    (clause,) = clauses("There is no delivery charge for this order")
    assert (clause.head, clause.existential) == (stem("charge"), False)
