"""The labelled pairs behind the offline cascade's figures (tests/data/offline_cascade/: pairs.yaml and
changed_facts.yaml) are well formed, and the offline rules keep what the README claims for them on every
pair, held-out ones included (the rates themselves are measured by tests/bench/bench_offline_cascade.py;
SICK's by tests/bench/bench_sick.py)."""
from __future__ import annotations

from collections import Counter

import pytest

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.facts import check_facts
from runner.score.negation import contradiction
from runner.score.omission import omitted_clause
from runner.score.opposites import changed_fact
from tests.helpers.offline_pairs import CATEGORIES, FOLDS, Outcome, choose_threshold, cross_validated, load_pairs, rates

PAIRS = load_pairs()
# The one paraphrase a rule fails, measured and reported in the README: "NYC" lacks the names of "New York City".
KNOWN_RULE_FALSE_FAILS = {"para-booking-10"}


def test_the_set_is_large_varied_and_consistently_labelled():
    assert len(PAIRS) >= 450
    assert len({p.id for p in PAIRS}) == len(PAIRS)
    by_category = Counter(p.category for p in PAIRS)
    assert set(by_category) == set(CATEGORIES) and min(by_category.values()) >= 10
    assert all(p.match is CATEGORIES[p.category] for p in PAIRS)
    assert {p.kind for p in PAIRS} == {"answer", "argument"}
    assert len({p.domain for p in PAIRS}) >= 6
    assert all(p.expected.strip() and p.actual.strip() and p.expected != p.actual for p in PAIRS)
    held_out = [p for p in PAIRS if p.held_out]
    assert 0.15 * len(PAIRS) < len(held_out) < 0.35 * len(PAIRS)
    assert set(Counter(p.fold for p in PAIRS)) == set(range(FOLDS))


def test_every_negation_pair_is_caught_and_no_matching_pair_is_called_a_contradiction():
    missed = [p.id for p in PAIRS if p.category == "negation" and contradiction(p.expected, p.actual) is None]
    flagged = [p.id for p in PAIRS if p.match and contradiction(p.expected, p.actual) is not None]
    assert (missed, flagged) == ([], [])


def test_the_fact_and_omission_rules_fail_no_matching_pair_but_the_known_one():
    failed = {p.id for p in PAIRS if p.match and (check_facts(p.expected, p.actual).missing
                                                   or omitted_clause(p.expected, p.actual))}
    assert failed == KNOWN_RULE_FALSE_FAILS


def test_no_matching_pair_is_read_as_an_opposite_or_a_swap_of_roles():
    # Passive voice, reordered lists, symmetric verbs, synonyms in the same slot, antonyms under a negation.
    flagged = {p.id: changed_fact(p.expected, p.actual).reason for p in PAIRS
               if p.match and changed_fact(p.expected, p.actual) is not None}
    assert flagged == {}


def rules_say_no(pair) -> bool:
    return bool(check_facts(pair.expected, pair.actual).missing or contradiction(pair.expected, pair.actual)
                or changed_fact(pair.expected, pair.actual) or omitted_clause(pair.expected, pair.actual))


def test_the_rules_catch_every_changed_fact_negation_and_half_answer_but_the_known_misses():
    # What the README says no offline rule sees: another thing or actor the lexicon does not know as an
    # opposite (hotel / flight booking, doctor / nurse, economy / business class), names written in lower
    # case, "delayed" for "on time", and "strong winds" said without "and heavy rain" (one clause, half said).
    kinds = ("negation", "changed_number", "changed_date", "changed_name", "partial_answer", "antonym",
             "swapped_roles", "changed_subject", "changed_object")
    missed = {p.id for p in PAIRS if p.category in kinds and not rules_say_no(p)}
    assert missed == {"ant-orders-02", "name-banking-x01", "name-orders-x01", "part-weather-02",
                      "subj-banking-x01", "subj-bookings-x04", "subj-health-x01", "subj-insurance-x02", "subj-it-x01",
                      "obj-bookings-x01", "obj-bookings-x02", "obj-bookings-x03", "obj-bookings-x04", "obj-health-x01",
                      "obj-hr-x01", "obj-insurance-x01", "obj-it-x01", "obj-it-x02", "obj-orders-x01", "obj-orders-x02",
                      "obj-orders-x03", "obj-orders-x04", "obj-refunds-x01", "obj-telecom-x01"}


def test_every_swap_of_roles_and_antonym_written_for_the_rules_is_caught_held_out_ones_included():
    missed = [p.id for p in PAIRS if p.category in ("swapped_roles", "antonym") and "-x" in p.id
              and not changed_fact(p.expected, p.actual)]
    assert missed == []


def test_no_non_matching_pair_passes_the_rapidfuzz_cascade_at_the_highest_grid_threshold_but_these():
    # Without any model: what the rules leave to similarity, at a threshold (0.95) nothing reaches by chance.
    cascade = Cascade(CascadeSettings(use_embeddings=False, similarity_threshold=0.95))
    passed = {p.id for p in PAIRS if not p.match and cascade.compare(p.expected, p.actual).matched}
    # "strong winds" without "and heavy rain": no rule knows it.
    assert passed == {"part-weather-02"}


# ---------------------------------------------------------------- the measures


def outcome(pair_id: str, matched: bool, score=None, decided_by="embedding") -> Outcome:
    pair = next(p for p in PAIRS if p.id == pair_id)
    return Outcome(pair, matched, decided_by, score)


def test_rates_count_false_passes_over_non_matches_and_false_fails_over_matches():
    outcomes = [outcome("neg-refund-01", True), outcome("neg-refund-02", False),
                outcome("para-refund-01", False), outcome("para-refund-02", True), outcome("para-refund-03", True)]
    r = rates(outcomes)
    assert (r.pairs, r.correct, r.false_passes, r.non_matches, r.false_fails, r.matches) == (5, 3, 1, 2, 1, 3)
    assert (r.accuracy, r.false_pass_rate, r.false_fail_rate) == (0.6, 0.5, pytest.approx(1 / 3))


def test_a_score_is_judged_again_at_another_threshold_and_a_rule_verdict_is_not():
    assert outcome("para-refund-01", True, 0.7).at(0.8) is False
    assert outcome("para-refund-01", False, 0.7).at(0.6) is True
    assert outcome("neg-refund-01", False, None).at(0.1) is False
    assert outcome("para-refund-01", True, 1.0, decided_by="exact").at(0.99) is True


def test_the_threshold_is_the_best_balanced_one_within_the_false_pass_limit():
    matches = [outcome(p.id, False, s) for p, s in zip([p for p in PAIRS if p.match][:4], (0.9, 0.8, 0.7, 0.6), strict=True)]
    non_matches = [outcome(p.id, False, s) for p, s in zip([p for p in PAIRS if not p.match][:4], (0.85, 0.5, 0.4, 0.3), strict=True)]
    both = matches + non_matches
    assert choose_threshold(both, max_false_pass=0.0, grid=[0.5, 0.6, 0.7, 0.86, 0.95]) == 0.86
    assert choose_threshold(both, max_false_pass=0.0, grid=[0.5, 0.86, 0.9]) == 0.9  # a tie: the higher one
    assert choose_threshold(both, max_false_pass=0.25, grid=[0.5, 0.6, 0.7, 0.86, 0.95]) == 0.6
    assert choose_threshold(both, max_false_pass=0.0, grid=[0.5, 0.6]) == 0.6  # none qualifies: fewest false passes
    pooled, per_fold = cross_validated(both, max_false_pass=0.25)
    assert pooled.pairs == len(both) and len(per_fold) == FOLDS
