"""Strict and exact equality (runner/score/normalize.py)."""
from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import given, settings, strategies as st

from runner.score.normalize import (
    as_number,
    exact_decision,
    exact_equal,
    show,
    strict_decision,
    strict_difference,
    strict_equal,
)

# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize("text, number", [
    ("10", 10), (" 10 ", 10), ("10.0", 10.0), ("+3", 3), ("-2.5", -2.5), (".5", 0.5), ("1e3", 1000.0),
    ("1E-2", 0.01), ("5.", 5.0),
])
def test_numeric_strings_parse(text, number):
    assert as_number(text) == number


@pytest.mark.parametrize("text", ["1,000", "ten", "", "1e999", "nan", "inf", "0x10", "1 000", "--1"])
def test_non_numeric_strings_do_not_parse(text):
    assert as_number(text) is None


def test_bools_are_not_numbers():
    assert as_number(True) is None


def test_big_integers_stay_exact():
    assert not strict_equal("12345678901234567890", 12345678901234567891)
    assert strict_equal("12345678901234567890", 12345678901234567890)


@pytest.mark.parametrize("a, b", [(10, 10.0), (10, "10"), ("10", 10.0), ("10.0", "10"), (" 10 ", 10), ("1e1", 10)])
def test_numbers_compare_by_value(a, b):
    assert strict_equal(a, b)
    decision = strict_decision(a, b)
    assert decision.matched and decision.decided_by == "number"


def test_number_mismatch_is_decided_by_number():
    decision = strict_decision(10, "11")
    assert not decision.matched
    assert decision.decided_by == "number"
    assert decision.reason == "expected 10, got '11'"


def test_thousands_separators_are_text():
    assert not strict_equal(1000, "1,000")


# ---------------------------------------------------------------- strings, bools, None


def test_strings_trimmed_and_case_insensitive():
    assert strict_equal("  NWaters ", "nwaters")
    assert strict_equal("Straße", "STRASSE")  # casefold, not lower
    decision = strict_decision("nwaters", "nken")
    assert not decision.matched
    assert decision.decided_by == "exact"
    assert decision.reason == "expected 'nwaters', got 'nken'"


def test_inner_whitespace_counts():
    assert not strict_equal("New York", "NewYork")


def test_bools_equal_bools_and_their_words_only():
    assert strict_equal(True, True)
    assert strict_equal(True, " TRUE ")
    assert strict_equal("false", False)
    assert not strict_equal(True, 1)
    assert not strict_equal(1, True)
    assert not strict_equal(False, 0)
    assert not strict_equal(True, "yes")
    assert not strict_equal(True, False)


def test_none_equals_only_none():
    assert strict_equal(None, None)
    assert not strict_equal(None, "")
    assert not strict_equal(None, "null")
    assert not strict_equal(0, None)


def test_yaml_dates_compare_as_iso_text():
    assert strict_equal(datetime.date(2025, 1, 5), "2025-01-05")
    assert exact_equal(datetime.date(2025, 1, 5), "2025-01-05")


# ---------------------------------------------------------------- lists


def test_lists_are_multisets():
    assert strict_equal([1, 2, 3], [3, 1, 2])
    assert strict_equal(["a", "B"], ["b", "A"])
    assert not strict_equal([1, 2], [1, 2, 2])


def test_multiset_duplicates_count():
    found = strict_difference([1, 1, 2], [1, 2, 2])
    assert found is not None
    assert found.reason == "items cannot be paired one to one: expected [1, 1, 2], got [1, 2, 2]"


def test_list_length_reason():
    assert strict_difference([1], [1, 2]).reason == "expected 1 items, got 2: expected [1], got [1, 2]"


def test_lonely_item_reason():
    assert strict_difference(["a", "b"], ["a", "c"]).reason == "no actual item matches expected item 'b'"


def test_list_of_objects_with_extra_keys_pairs_one_to_one():
    # Greedy pairing would give {"a": 1} the first actual item and leave {"a": 1, "b": 2} without a partner.
    expected = [{"a": 1}, {"a": 1, "b": 2}]
    actual = [{"a": 1, "b": 2}, {"a": 1, "c": 3}]
    assert strict_equal(expected, actual)
    assert not strict_equal(expected, [{"a": 1, "c": 3}, {"a": 1, "c": 4}])


def test_lists_of_objects_under_forbid():
    assert not strict_equal([{"a": 1}], [{"a": 1, "b": 2}], "forbid")
    assert strict_equal([{"a": 1}], [{"a": 1}], "forbid")


def test_long_lists_do_not_hit_recursion_limits():
    values = list(range(3000))
    assert strict_equal(values, list(reversed(values)))


# ---------------------------------------------------------------- objects


def test_objects_need_expected_keys_and_allow_extra():
    assert strict_equal({"a": {"b": "X"}}, {"a": {"b": "x", "c": 1}, "d": 2})
    found = strict_difference({"a": {"b": 1}}, {"a": {}})
    assert found.reason == "at a: missing key 'b'"
    found = strict_difference({"a": {"b": 1}}, {"a": {"b": 2}})
    assert found.reason == "at a.b: expected 1, got 2"


def test_forbid_extra_keys_at_every_depth():
    assert not strict_equal({"a": 1}, {"a": 1, "b": 2}, "forbid")
    decision = strict_decision({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, "forbid")
    assert not decision.matched
    assert decision.decided_by == "structure"
    assert decision.reason == "at a: unexpected key 'c'"


def test_type_mismatch():
    assert strict_difference({"a": 1}, [1]).reason == 'expected {"a": 1}, got [1]'
    assert not strict_equal("a", ["a"])


def test_ignore_value_at_any_depth():
    assert strict_equal({"a": "<IGNORE>", "b": 1}, {"b": 1})
    assert strict_equal({"a": {"x": "<IGNORE>"}}, {"a": {"x": [1, 2]}})
    assert exact_equal({"a": "<IGNORE>", "b": 1}, {"b": 1})


# ---------------------------------------------------------------- exact


def test_exact_is_type_and_case_sensitive():
    assert exact_equal(1, 1.0)
    assert not exact_equal("1", 1)
    assert not exact_equal(True, 1)
    assert not exact_equal("Abc", "abc")
    assert not exact_equal(" abc", "abc")
    assert not exact_equal([1, 2], [2, 1])
    assert not exact_equal({"a": 1}, {"a": 1, "b": 2})  # JSON equality: same keys
    assert exact_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})


def test_exact_decisions():
    assert exact_decision(1, 1.0).decided_by == "number"
    decision = exact_decision("Abc", "abc")
    assert (decision.matched, decision.decided_by, decision.reason) == (False, "exact", "expected 'Abc', got 'abc'")
    assert exact_decision([1, 2], [1, 3]).reason == "at 1: expected 2, got 3"


# ---------------------------------------------------------------- properties

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)
dict_free_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_strict_equal_is_reflexive(value):
    assert strict_equal(value, value)
    assert strict_equal(value, value, "forbid")
    assert exact_equal(value, value)


@settings(max_examples=300, deadline=None)
@given(dict_free_values, dict_free_values)
def test_strict_equal_is_symmetric_without_objects(a, b):
    assert strict_equal(a, b) == strict_equal(b, a)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values, st.sampled_from(["allow", "forbid"]))
def test_decisions_agree_with_equality_and_explain_every_mismatch(a, b, extra_args):
    strict = strict_decision(a, b, extra_args)
    assert strict.matched == strict_equal(a, b, extra_args)
    assert strict.reason == "equal" if strict.matched else strict.reason.startswith(("expected", "missing", "no actual",
                                                                                      "items", "unexpected", "at "))
    exact = exact_decision(a, b)
    assert exact.matched == exact_equal(a, b)
    if exact.matched:  # exact equality is the stricter of the two
        assert strict_equal(a, b, "forbid")


@settings(max_examples=300, deadline=None)
@given(st.lists(dict_free_values, max_size=4), st.lists(dict_free_values, max_size=4))
def test_counting_agrees_with_pairing(expected, actual):
    # Lists without objects are decided by counting; it must agree with trying every pairing.
    from itertools import permutations

    by_pairing = len(expected) == len(actual) and any(
        all(strict_equal(e, a) for e, a in zip(expected, order, strict=True)) for order in permutations(actual))
    assert strict_equal(expected, actual) == by_pairing


@pytest.mark.parametrize("expected, actual, equal", [
    ("02134", 2134, False), ("007", "7", False), ("007", "007", True), ("0.5", 0.5, True), ("0", 0, True),
    ("-0.25", -0.25, True), ("10", 10.0, True),
])
def test_text_with_a_leading_zero_is_not_a_number(expected, actual, equal):
    assert strict_equal(expected, actual) is equal


@pytest.mark.parametrize("value, limit, shown", [
    ("Your balance is 1500.75 dollars and the total is 15000", 30, "'Your balance is 1500.75…"),
    ("Transfer 150000 to savings", 14, "'Transfer…"),
    ("It costs 1,500.25 in all", 14, "'It costs…"),  # never "'Transfer 1500…": a cut number reads as another
    ({"amount": 150000, "to": "savings account"}, 26, '{"amount": 150000, "to":…'),
    ("x" * 100, 20, "'" + "x" * 18 + "…"),  # a single word longer than the limit is cut where it must be
    ("short", 80, "'short'"),
])
def test_show_cuts_at_a_word_or_number_boundary(value, limit, shown):
    assert show(value, limit) == shown
    assert len(shown) <= limit


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["1500", "1,500.25", "word", "a", "x_y", "-", ",", "."]), max_size=30),
       st.integers(5, 40))
def test_show_never_ends_inside_a_word_or_number(words, limit):
    text = " ".join(words)
    shown, whole = show(text, limit), repr(text)
    assert len(shown) <= limit
    if shown == whole:
        return
    kept = shown[:-1].rstrip()
    assert shown.endswith("…") and whole.startswith(kept)
    tokens = list(re.finditer(r"\w+(?:[.,_-]\w+)*", whole))
    split = [t.group(0) for t in tokens if t.start() < len(kept) < t.end()]
    if split:  # only a single token longer than the limit may be cut: nothing complete came before it
        assert not any(t.end() <= len(kept) for t in tokens)


def test_a_longer_list_is_not_the_expected_one_with_objects_or_without():
    """Every expected item found is not enough: an extra item in the actual list is a difference, whether the
    items are plain values (counted) or objects (paired one to one)."""
    for expected, actual in (([1, 2], [1, 2, 3]), ([{"id": 1}], [{"id": 1}, {"id": 2}])):
        assert not strict_equal(expected, actual)
        difference = strict_difference(expected, actual)
        assert difference is not None and f"expected {len(expected)} items, got {len(actual)}" in str(difference)
