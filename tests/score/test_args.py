"""Argument matching of one call against one tool goal (runner/score/args.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from runner.score.args import arguments_match, match_arguments, rule_from_spec, verdicts_of_a_match
from runner.score.cascade import Cascade, CascadeSettings
from runner.suite.models import ArgRule, ToolCallGoal

CASCADE = Cascade(CascadeSettings(use_embeddings=False))  # rapidfuzz is the last, deterministic stage


def goal(args, arg_matching=None, extra_args=None):
    return ToolCallGoal(type="tool_call", name="g", tool_name="tool", args=args,
                        arg_matching=arg_matching or {}, extra_args=extra_args)


def verdicts(args, actual, arg_matching=None, extra_args=None, default_extra_args="allow"):
    return match_arguments(goal(args, arg_matching, extra_args), actual, CASCADE, default_extra_args)


def by_path(found):
    return {verdict.path: verdict for verdict in found}


def all_matched(found):
    return all(verdict.matched for verdict in found)


# ---------------------------------------------------------------- strict (default)


def test_strict_match_and_mismatch_verdicts():
    found = verdicts({"username": "nwaters", "limit": 10}, {"username": "nken", "limit": "10.0"})
    assert [v.path for v in found] == ["username", "limit"]  # mismatches first
    wrong, right = found
    assert (wrong.mode, wrong.matched, wrong.decided_by, wrong.score) == ("strict", False, "exact", None)
    assert wrong.reason == "expected 'nwaters', got 'nken'"
    assert (wrong.expected, wrong.actual, wrong.present) == ("nwaters", "nken", True)
    assert (right.matched, right.decided_by, right.score) == (True, "number", None)


def test_mismatches_first_then_matches_each_in_expected_order():
    found = verdicts({"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 0, "b": 2, "c": 0, "d": 4})
    assert [(v.path, v.matched) for v in found] == [("a", False), ("c", False), ("b", True), ("d", True)]


def test_missing_argument():
    (verdict,) = verdicts({"username": "nwaters"}, {})
    assert (verdict.matched, verdict.present, verdict.decided_by, verdict.reason) == (
        False, False, "absent", "missing argument")


def test_strict_nested_objects_and_lists():
    args = {"address": {"city": "New York", "zip": "10001"}, "tags": ["a", "b"]}
    found = verdicts(args, {"address": {"city": " new york", "zip": 10001, "extra": 1}, "tags": ["B", "A"]})
    assert all_matched(found)
    assert [v.path for v in found] == ["address", "tags"]  # one verdict per top-level key without deeper rules


def test_calls_without_arguments_or_with_non_object_arguments():
    assert by_path(verdicts({"a": 1}, None))["a"].reason == "missing argument"
    found = verdicts({}, ["not", "an", "object"])
    assert [(v.path, v.matched, v.decided_by) for v in found] == [("(arguments)", False, "type")]


# ---------------------------------------------------------------- extra_args


def test_extra_args_allowed_by_default():
    assert verdicts({"a": 1}, {"a": 1, "b": 2}) != [] and all_matched(verdicts({"a": 1}, {"a": 1, "b": 2}))


def test_extra_args_forbid_top_level():
    found = verdicts({"a": 1}, {"a": 1, "b": 2}, extra_args="forbid")
    extra = by_path(found)["b"]
    assert (extra.matched, extra.mode, extra.present, extra.expected, extra.actual) == (False, "strict", True, None, 2)
    assert (extra.decided_by, extra.reason) == ("structure", "unexpected argument")
    assert found[0].path == "b"


def test_extra_args_forbid_nested_names_the_key():
    (verdict,) = verdicts({"address": {"zip": "1"}}, {"address": {"zip": "1", "city": "x"}}, extra_args="forbid")
    assert (verdict.matched, verdict.decided_by, verdict.reason) == (False, "structure", "unexpected key 'city'")


def test_extra_args_default_comes_from_the_case():
    assert not all_matched(verdicts({"a": 1}, {"a": 1, "b": 2}, default_extra_args="forbid"))
    assert all_matched(verdicts({"a": 1}, {"a": 1, "b": 2}, extra_args="allow", default_extra_args="forbid"))


def test_forbid_allows_an_extra_argument_whose_rule_is_ignore():
    found = verdicts({"a": 1}, {"a": 1, "trace_id": "x"}, {"trace_id": "ignore"}, extra_args="forbid")
    assert all_matched(found)
    assert by_path(found)["trace_id"].decided_by == "ignore"


# ---------------------------------------------------------------- exact vs strict


def test_exact_mode_is_type_and_case_sensitive():
    found = by_path(verdicts({"a": "Abc", "b": 1, "c": True, "d": 2},
                             {"a": "abc", "b": "1", "c": 1, "d": 2.0},
                             {"a": "exact", "b": "exact", "c": "exact", "d": "exact"}))
    assert (found["a"].matched, found["a"].decided_by, found["a"].reason) == (False, "exact", "expected 'Abc', got 'abc'")
    assert not found["b"].matched and not found["c"].matched
    assert (found["d"].matched, found["d"].decided_by, found["d"].mode) == (True, "number", "exact")


def test_same_values_pass_strict():
    assert all_matched(verdicts({"a": "Abc", "b": 1, "c": True}, {"a": "abc", "b": "1", "c": "true"}))


# ---------------------------------------------------------------- optional


def test_optional_absent_passes():
    (verdict,) = verdicts({"note": "hi"}, {}, {"note": "optional"})
    assert (verdict.matched, verdict.present, verdict.mode, verdict.decided_by) == (True, False, "optional", "absent")


def test_optional_present_and_wrong_fails_compared_strict():
    (verdict,) = verdicts({"note": "hi"}, {"note": "bye"}, {"note": "optional"})
    assert (verdict.matched, verdict.decided_by, verdict.reason) == (False, "exact", "expected 'hi', got 'bye'")
    (verdict,) = verdicts({"note": "hi"}, {"note": " HI "}, {"note": "optional"})
    assert verdict.matched  # strict, not raw


def test_optional_flag_combines_with_object_rules():
    rule = {"regex": r"EMP-\d{4}", "optional": True}
    (absent,) = verdicts({"id": "EMP-0001"}, {}, {"id": rule})
    assert (absent.matched, absent.mode) == (True, "regex")
    (wrong,) = verdicts({"id": "EMP-0001"}, {"id": "EMP-1"}, {"id": rule})
    assert not wrong.matched


# ---------------------------------------------------------------- ignore


def test_ignore_mode():
    (verdict,) = verdicts({"note": "x"}, {"note": "anything"}, {"note": "ignore"})
    assert (verdict.matched, verdict.decided_by, verdict.mode) == (True, "ignore", "ignore")
    (verdict,) = verdicts({"note": "x"}, {}, {"note": "ignore"})
    assert verdict.matched and not verdict.present


def test_ignore_all_arguments():
    assert verdicts({"IGNORE": None}, {"anything": 1}) == []
    assert verdicts({"IGNORE": None}, {}, extra_args="forbid") == []


def test_ignore_value_sentinel():
    (verdict,) = verdicts({"note": "<IGNORE>"}, {})
    assert (verdict.matched, verdict.decided_by, verdict.mode, verdict.present) == (True, "ignore", "ignore", False)
    (verdict,) = verdicts({"address": {"zip": "<IGNORE>", "city": "X"}}, {"address": {"city": "x", "zip": 5}})
    assert verdict.matched
    (verdict,) = verdicts({"address": {"zip": "<IGNORE>", "city": "X"}}, {"address": {"city": "x"}})
    assert verdict.matched  # absent is fine too


# ---------------------------------------------------------------- one_of, regex, tolerance


def test_one_of():
    spec = {"city": {"one_of": ["NYC", "New York"]}}
    (verdict,) = verdicts({"city": "NYC"}, {"city": "new york"}, spec)
    assert (verdict.matched, verdict.decided_by, verdict.mode) == (True, "one_of", "one_of")
    assert verdict.reason == "'new york' is one of [\"NYC\", \"New York\"]"
    (verdict,) = verdicts({"city": "NYC"}, {"city": "Boston"}, spec)
    assert (verdict.matched, verdict.reason) == (False, "expected one of [\"NYC\", \"New York\"], got 'Boston'")


def test_regex_full_match():
    spec = {"id": {"regex": r"EMP-\d{4}"}}
    (verdict,) = verdicts({"id": "EMP-0001"}, {"id": "EMP-1234"}, spec)
    assert (verdict.matched, verdict.decided_by, verdict.mode) == (True, "regex", "regex")
    (verdict,) = verdicts({"id": "EMP-0001"}, {"id": "EMP-12345"}, spec)  # re.search would accept this
    assert (verdict.matched, verdict.reason) == (False, "'EMP-12345' does not match /EMP-\\d{4}/")


def test_regex_on_numbers_uses_their_text():
    (verdict,) = verdicts({"zip": "10001"}, {"zip": 10001}, {"zip": {"regex": r"\d{5}"}})
    assert verdict.matched
    (verdict,) = verdicts({"n": 1}, {"n": 1.5}, {"n": {"regex": r"\d+"}})
    assert not verdict.matched


def test_invalid_regex_is_a_mismatch_not_a_crash():
    (verdict,) = verdicts({"a": "x"}, {"a": "x"}, {"a": {"regex": "("}})
    assert not verdict.matched and verdict.reason.startswith("invalid regular expression '('")


def test_tolerance():
    spec = {"amount": {"tolerance": 0.5}}
    (verdict,) = verdicts({"amount": 10}, {"amount": "10.4"}, spec)
    assert (verdict.matched, verdict.decided_by, verdict.mode) == (True, "number", "tolerance")
    assert verdict.reason == "'10.4' is within ±0.5 of 10"
    (verdict,) = verdicts({"amount": 10}, {"amount": 10.6}, spec)
    assert (verdict.matched, verdict.reason) == (False, "10.6 is outside ±0.5 of 10")


def test_tolerance_on_text_compares_strict():
    (verdict,) = verdicts({"amount": "ten"}, {"amount": "TEN"}, {"amount": {"tolerance": 1}})
    assert (verdict.matched, verdict.decided_by) == (True, "exact")


# ---------------------------------------------------------------- fuzzy


def test_fuzzy_uses_the_cascade():
    (verdict,) = verdicts({"city": "New York"}, {"city": "new york city"}, {"city": "fuzzy"})
    assert (verdict.matched, verdict.decided_by, verdict.mode) == (True, "rapidfuzz", "fuzzy")
    assert verdict.score == pytest.approx(0.9)


def test_fuzzy_threshold_from_the_rule():
    (verdict,) = verdicts({"city": "New York"}, {"city": "new york city"}, {"city": {"mode": "fuzzy", "threshold": 0.95}})
    assert not verdict.matched and verdict.reason == "decided offline: rapidfuzz 0.90 < threshold 0.95"


def test_fuzzy_tolerance_from_the_rule():
    (verdict,) = verdicts({"n": 100}, {"n": 103}, {"n": {"mode": "fuzzy", "tolerance": 5}})
    assert (verdict.matched, verdict.decided_by) == (True, "number")
    (verdict,) = verdicts({"n": 100}, {"n": 103}, {"n": "fuzzy"})  # default relative tolerance 1%
    assert (verdict.matched, verdict.decided_by) == (False, "number")


def test_fuzzy_dates():
    (verdict,) = verdicts({"start": "2025-01-05"}, {"start": "January 5, 2025"}, {"start": "fuzzy"})
    assert (verdict.matched, verdict.decided_by) == (True, "date")


# ---------------------------------------------------------------- dot paths


def test_child_rule_splits_the_parent_into_verdicts():
    args = {"address": {"zip": "10001", "city": "New York"}, "name": "x"}
    found = verdicts(args, {"address": {"zip": "99999", "city": "new york"}, "name": "X"},
                     {"address.zip": {"regex": r"\d{5}"}})
    assert [(v.path, v.mode, v.matched) for v in found] == [
        ("address.zip", "regex", True), ("address.city", "strict", True), ("name", "strict", True)]


def test_parent_fuzzy_covers_children_and_child_strict_overrides():
    args = {"address": {"street": "5th Avenue", "zip": "10001"}}
    rules = {"address": "fuzzy", "address.zip": "strict"}
    found = by_path(verdicts(args, {"address": {"street": "5th avenue ", "zip": "10002"}}, rules))
    assert (found["address.street"].mode, found["address.street"].matched) == ("fuzzy", True)
    assert (found["address.zip"].mode, found["address.zip"].matched, found["address.zip"].decided_by) == (
        "strict", False, "number")
    found = by_path(verdicts(args, {"address": {"street": "Fifth Avenue NYC", "zip": "10001"}}, rules))
    assert found["address.street"].decided_by == "rapidfuzz"
    assert found["address.zip"].matched


def test_fuzzy_object_without_child_rules_compares_each_child_fuzzy():
    found = verdicts({"address": {"city": "New York", "zip": 10001}},
                     {"address": {"city": "new york city", "zip": "10001"}}, {"address": "fuzzy"})
    assert [(v.path, v.decided_by, v.matched) for v in found] == [
        ("address.city", "rapidfuzz", True), ("address.zip", "exact", True)]


def test_missing_child_under_a_split_parent():
    found = verdicts({"address": {"zip": "1", "city": "x"}}, {"address": {"zip": "1"}}, {"address.zip": "exact"})
    assert [(v.path, v.present, v.reason) for v in found if not v.matched] == [("address.city", False, "missing argument")]


def test_list_items_by_index():
    found = verdicts({"items": ["apple", "pear"]}, {"items": ["APPLE", "pearl"]}, {"items.1": "fuzzy"})
    assert [(v.path, v.mode, v.matched) for v in found] == [("items.0", "strict", True), ("items.1", "fuzzy", True)]
    (verdict,) = verdicts({"items": ["apple", "pear"]}, {"items": ["apple"]}, {"items.1": "fuzzy"})
    assert (verdict.path, verdict.decided_by, verdict.reason) == ("items", "structure", "expected 2 items, got 1")


def test_fuzzy_list_equal_in_any_order_is_one_verdict():
    (verdict,) = verdicts({"tags": ["a", "b"]}, {"tags": ["B", "A"]}, {"tags": "fuzzy"})
    assert (verdict.matched, verdict.decided_by, verdict.score) == (True, "exact", 1.0)


def test_longest_prefix_wins():
    rules = {"a": "ignore", "a.b": "fuzzy", "a.b.c": "exact"}
    found = by_path(verdicts({"a": {"b": {"c": "X", "d": "New York"}, "e": 1}},
                             {"a": {"b": {"c": "x", "d": "new york city"}, "e": 2}}, rules))
    assert (found["a.b.c"].mode, found["a.b.c"].matched) == ("exact", False)
    assert (found["a.b.d"].mode, found["a.b.d"].matched) == ("fuzzy", True)
    assert (found["a.e"].mode, found["a.e"].matched) == ("ignore", True)


# ---------------------------------------------------------------- rules


@pytest.mark.parametrize("spec, mode", [
    ("fuzzy", "fuzzy"), ("optional", "optional"), (ArgRule(optional=True), "optional"), (ArgRule(), "strict"),
    (ArgRule(mode="exact", optional=True), "exact"), (ArgRule(tolerance=1), "tolerance"),
    (ArgRule(mode="fuzzy", tolerance=1), "fuzzy"), ({"one_of": [1]}, "one_of"), (None, "strict"),
])
def test_rule_labels(spec, mode):
    assert rule_from_spec(spec).mode == mode


def test_optional_flag_is_kept():
    assert rule_from_spec(ArgRule(mode="exact", optional=True)).optional
    assert rule_from_spec("optional").optional
    assert not rule_from_spec("fuzzy").optional


# ---------------------------------------------------------------- property

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
GOAL = goal({"a": "x", "b": {"c": 1, "d": [1, 2]}, "e": [{"f": "y"}], "g": 5, "h": "2025-01-05", "i": "<IGNORE>"},
            {"b.c": {"tolerance": 1}, "b.d": "fuzzy", "e": "fuzzy", "g": {"regex": r"\d"}, "h": "fuzzy",
             "a": {"one_of": ["x", "y"], "optional": True}}, extra_args="forbid")


@settings(max_examples=300, deadline=None)
@given(json_values | st.dictionaries(st.sampled_from(list("abcdefghij")), json_values, max_size=6))
def test_match_arguments_never_raises(actual):
    found = match_arguments(GOAL, actual, CASCADE)
    assert all(isinstance(verdict.matched, bool) for verdict in found)


@settings(max_examples=400, deadline=None)
@given(expected=st.dictionaries(st.sampled_from(list("abcd")), json_values | st.just("<IGNORE>"), max_size=4),
       actual=json_values | st.dictionaries(st.sampled_from(list("abcde")), json_values, max_size=5),
       extra_args=st.sampled_from(["allow", "forbid"]))
def test_the_quick_check_agrees_with_the_verdicts(expected, actual, extra_args):
    # arguments_match short-cuts goals without rules to one strict comparison; it must say exactly
    # what the full verdicts say, and likewise for goals with rules (the lazy walk).
    plain = goal(expected, extra_args=extra_args)
    assert arguments_match(plain, actual, CASCADE) == all(v.matched for v in match_arguments(plain, actual, CASCADE))
    ruled = goal(expected, dict.fromkeys(list(expected)[:1], "exact"), extra_args=extra_args)
    assert arguments_match(ruled, actual, CASCADE) == all(v.matched for v in match_arguments(ruled, actual, CASCADE))


@settings(max_examples=400, deadline=None)
@given(expected=st.dictionaries(st.sampled_from(list("abcd")), json_values | st.just("<IGNORE>"), max_size=4),
       actual=st.dictionaries(st.sampled_from(list("abcde")), json_values, max_size=5),
       extra_args=st.sampled_from(["allow", "forbid"]))
def test_verdicts_of_a_known_match_are_the_full_verdicts(expected, actual, extra_args):
    plain = goal(expected, extra_args=extra_args)
    if arguments_match(plain, actual, CASCADE):
        assert verdicts_of_a_match(plain, actual) == match_arguments(plain, actual, CASCADE)


def test_verdicts_of_a_known_match_on_a_concrete_call():
    plain = goal({"n": "10", "who": "Ann", "skip": "<IGNORE>"})
    actual = {"n": 10.0, "who": " ann", "extra": 1}
    assert arguments_match(plain, actual, CASCADE)
    assert verdicts_of_a_match(plain, actual) == match_arguments(plain, actual, CASCADE)
    assert [(v.path, v.decided_by) for v in verdicts_of_a_match(plain, actual)] == [
        ("n", "number"), ("who", "exact"), ("skip", "ignore")]


@pytest.mark.parametrize("rule, expected, actual, matched", [
    ({"tolerance": 0.01}, [10.0, 20.0], [10.001, 20.0], True),
    ({"tolerance": 0.01}, [10.0, 20.0], [20.0, 10.005], True),  # lists stay multisets
    ({"tolerance": 0.01}, [10.0, 20.0], [10.5, 20.0], False),
    ({"tolerance": 0.01}, {"lat": 48.85, "lon": 2.35}, {"lat": 48.851, "lon": 2.349}, True),
    ({"regex": r"[A-Z]\d"}, ["C3", "D4"], ["C3", "D4"], True),
    ({"regex": r"[A-Z]\d"}, ["C3", "D4"], ["C3", "44"], False),
])
def test_a_parent_rule_covers_each_child(rule, expected, actual, matched):
    found = verdicts({"v": expected}, {"v": actual}, {"v": rule})
    assert all(v.matched for v in found) is matched


def test_fuzzy_lists_are_paired_one_to_one_like_strict_lists():
    found = verdicts({"cities": ["New York", "Boston"]}, {"cities": ["boston", "New York!"]}, {"cities": "fuzzy"})
    assert all(v.matched for v in found)
    assert [(v.expected, v.actual) for v in found] == [("New York", "New York!"), ("Boston", "boston")]


def test_unpaired_fuzzy_items_are_explained_against_the_leftovers():
    found = verdicts({"cities": ["New York", "Boston"]}, {"cities": ["Chicago", "new york"]}, {"cities": "fuzzy"})
    assert [(v.expected, v.actual, v.matched) for v in sorted(found, key=lambda v: v.path)] == [
        ("New York", "new york", True), ("Boston", "Chicago", False)]
