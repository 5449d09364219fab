"""The `trajectory` check on concrete conversations: each match mode, repeated tools, empty lists,
extra calls, arguments, and brute force as the oracle for the optimal pairing."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from runner.checks.run import run_checks
from runner.checks.trajectory_match import ordered_pairs, trajectory_score, unordered_pairs
from runner.score.cascade import Cascade, CascadeSettings
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory
from tests.helpers.checks_trajectory import conversation

OFFLINE = Cascade(CascadeSettings(use_embeddings=False))


def check(spec, *calls, goals=None, order=None, **case_fields):
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "goal_details": goals or [],
                                "goals": order or {}, "checks": [spec], **case_fields})
    [result] = run_checks(case, conversation(*calls), OFFLINE)
    return result


def expect(*names):
    return [{"tool_name": n} for n in names]


@pytest.mark.parametrize("mode, calls, score, status", [
    # in_order: other calls may come between; order matters
    ("in_order", ["a", "x", "b"], 1.0, "passed"),
    ("in_order", ["b", "a"], 0.5, "failed"),
    ("in_order", ["a"], 0.5, "failed"),
    # exact: these calls, this order, nothing else
    ("exact", ["a", "b"], 1.0, "passed"),
    ("exact", ["a", "x", "b"], 2 / 3, "failed"),
    ("exact", ["b", "a"], 0.5, "failed"),
    # any_order / superset: all expected, any order, extras allowed
    ("any_order", ["b", "x", "a"], 1.0, "passed"),
    ("superset", ["b", "a"], 1.0, "passed"),
    ("any_order", ["b"], 0.5, "failed"),
    # unordered: the same calls in any order, no other
    ("unordered", ["b", "a"], 1.0, "passed"),
    ("unordered", ["b", "a", "x"], 2 / 3, "failed"),
    # subset: every call is an expected one; some may be missing
    ("subset", ["b"], 1.0, "passed"),
    ("subset", ["b", "x"], 0.5, "failed"),
    ("subset", [], 1.0, "passed"),
])
def test_modes(mode, calls, score, status):
    result = check({"type": "trajectory", "match": mode, "expected": expect("a", "b")}, *calls)
    assert (result.score, result.status) == (pytest.approx(score), status)


@pytest.mark.parametrize("mode, with_no_calls, with_a_call", [
    # no calls in order (or in any order) are made by every conversation: that compares nothing, never a pass
    ("in_order", "unscored", "unscored"), ("any_order", "unscored", "unscored"), ("superset", "unscored", "unscored"),
    # in exact terms no expected calls mean "the agent makes none"
    ("exact", "passed", "failed"), ("unordered", "passed", "failed"), ("subset", "passed", "failed"),
])
def test_empty_expected(mode, with_no_calls, with_a_call):
    spec = {"type": "trajectory", "match": mode, "expected": []}
    assert (check(spec).status, check(spec, "a").status) == (with_no_calls, with_a_call)
    if with_a_call == "unscored":
        assert check(spec, "a").explanation == (
            f"unscored: trajectory compares nothing: no expected calls are matched by every conversation in mode "
            f"{mode}; list the calls, or write `match: exact` for \"the agent makes no call\"")


def test_a_call_expected_twice_must_be_made_twice():
    spec = {"type": "trajectory", "match": "any_order", "expected": expect("a", "a")}
    once = check(spec, "a", "b")
    assert (once.status, once.score) == ("failed", 0.5)
    assert once.evidence["first_divergence"] == "expected call 2 of 2, a, was not made: its matching call(s) " \
        "(a at message 2) were used by other expected calls or out of order"
    assert check(spec, "a", "a").status == "passed"


def test_subset_uses_each_expected_call_once():
    result = check({"type": "trajectory", "match": "subset", "expected": expect("a")}, "a", "a")
    assert (result.status, result.score) == ("failed", 0.5)
    assert result.evidence["first_divergence"] == ("the call a at message 4 is not one of the expected calls "
                                                   "(or repeats one already used)")


def test_pairing_is_optimal_not_greedy():
    # A greedy walk gives the first call, a(x=1), to the expected `a` (any arguments) and then has no
    # a(x=1) left for the second expected call; the optimal pairing matches both.
    expected = [{"tool_name": "a"}, {"tool_name": "a", "args": {"x": 1}}]
    calls = [("a", {"x": 1}), ("a", {"x": 2})]
    for mode in ("any_order", "unordered", "subset"):
        assert check({"type": "trajectory", "match": mode, "expected": expected}, *calls).status == "passed", mode
    # in order: expected a(x=1) comes second, but the only a(x=1) is the first call: one of two pairs
    result = check({"type": "trajectory", "match": "in_order", "expected": expected}, *calls)
    assert result.score == 0.5


def test_arguments_use_the_goal_matchers():
    expected = [{"tool_name": "book", "args": {"city": "new york", "day": "2025-01-05"},
                 "arg_matching": {"day": "fuzzy"}}]
    ok = check({"type": "trajectory", "expected": expected}, ("book", {"city": "New York ", "day": "January 5, 2025"}))
    assert ok.status == "passed"
    wrong = check({"type": "trajectory", "expected": expected}, ("book", {"city": "Boston", "day": "2025-01-05"}))
    assert wrong.status == "failed"
    assert wrong.evidence["first_divergence"].startswith(
        "expected call 1 of 1, book(city='new york', day='2025-01-05'), was not made: closest: book at message 2: `city`")


def test_default_expected_is_the_tool_goals_in_graph_order():
    goals = [{"type": "tool_call", "name": "second", "tool_name": "b", "args": {}},
             {"type": "tool_call", "name": "first", "tool_name": "a", "args": {"k": 1}},
             {"type": "text", "name": "say", "keywords": ["done"]}]
    order = {"first": ["second"]}
    passed = check({"type": "trajectory"}, ("a", {"k": 1}), "b", goals=goals, order=order)
    assert passed.status == "passed"
    assert passed.evidence["expected"] == ["a(k=1)", "b()"]
    assert check({"type": "trajectory"}, "b", ("a", {"k": 1}), goals=goals, order=order).score == 0.5


def test_threshold_gives_partial_credit():
    result = check({"type": "trajectory", "match": "in_order", "expected": expect("a", "b", "c", "d"),
                    "threshold": 0.75}, "a", "b", "d")
    assert (result.status, result.score, result.threshold) == ("passed", 0.75, 0.75)


def test_first_divergence_in_exact_mode():
    spec = {"type": "trajectory", "match": "exact", "expected": expect("a", "b")}
    assert check(spec, "a", "c").evidence["first_divergence"] == "call 2: expected b, the agent called c at message 4"
    assert check(spec, "a").evidence["first_divergence"] == "call 2: expected b, but the agent made no more calls"
    assert check(spec, "a", "b", "c").evidence["first_divergence"] == (
        "call 3: the agent made an extra call, c at message 6; no more calls were expected")
    assert check(spec, "a", "b").evidence["first_divergence"] is None


def test_failed_calls_ignore_drops_error_calls():
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "1", "content": "Error: boom"}]
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "failed_calls": "ignore",
                                "checks": [{"type": "trajectory", "match": "exact", "expected": []}]})
    [result] = run_checks(case, build_trajectory(messages), OFFLINE)
    assert result.status == "passed"


# ------------------------------------------------------------------ brute force as the oracle

def _brute(table, ordered):
    """The most pairs any one-to-one pairing (order-preserving if `ordered`) can make."""
    n, m = len(table), len(table[0]) if table else 0
    for k in range(min(n, m), 0, -1):
        for rows in itertools.combinations(range(n), k):
            columns = itertools.combinations(range(m), k) if ordered else itertools.permutations(range(m), k)
            if any(all(table[r][c] for r, c in zip(rows, cols, strict=True)) for cols in columns):
                return k
    return 0


tables = st.integers(0, 5).flatmap(lambda n: st.integers(0, 5).flatmap(
    lambda m: st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n).map(
        lambda t: (t, m))))


@settings(max_examples=300, deadline=None)
@given(tables)
def test_pairings_are_maximum(table_and_width):
    table, width = table_and_width
    for pairs, ordered in ((ordered_pairs(table), True), (unordered_pairs(table, width), False)):
        assert len(pairs) == _brute(table, ordered)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)  # one to one
        assert all(table[i][j] for i, j in pairs)
        if ordered:
            assert pairs == sorted(pairs) and [j for _, j in pairs] == sorted(j for _, j in pairs)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=4), st.lists(st.sampled_from("abcd"), max_size=5),
       st.sampled_from(["exact", "in_order", "any_order", "unordered", "subset"]))
def test_check_scores_match_the_oracle(expected, calls, mode):
    result = check({"type": "trajectory", "match": mode, "expected": expect(*expected)}, *calls)
    if not expected and mode in ("in_order", "any_order"):  # every conversation makes no calls in order
        assert (result.status, result.score) == ("unscored", None)
        return
    table = [[e == c for c in calls] for e in expected]
    best = _brute(table, ordered=mode in ("exact", "in_order"))
    assert result.score == pytest.approx(trajectory_score(mode, len(expected), len(calls), best))
    if mode == "exact":  # passes exactly when the calls are the expected ones, in order
        assert (result.status == "passed") == (list(calls) == list(expected))
    if mode == "unordered":
        assert (result.status == "passed") == (sorted(calls) == sorted(expected))
