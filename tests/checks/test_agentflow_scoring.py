"""Agentflow's deterministic scores, float for float. Every expected number below was obtained once from the library
itself (10xscale-agentflow 0.10.1's criteria, through /work/notes/agentflow/oracle.py and its oracle_examples);
the tests run without the library."""
from __future__ import annotations

import pytest

from runner.checks.agentflow.scoring import (
    keywords_score,
    node_order_score,
    rouge_score,
    rouge_tokens,
    tool_name_score,
    trajectory_score,
)

A, B, C, X = ("A", {}), ("B", {}), ("C", {}), ("X", {})


@pytest.mark.parametrize("mode, actual, expected, score", [
    ("EXACT", [A, B, C], [A, B], 1.0),          # calls after the expected ones cost nothing (the code, not the docs)
    ("EXACT", [A], [A, B], 0.5),
    ("EXACT", [X, A, B], [A, B], 0.0),          # one inserted call shifts every position
    ("EXACT", [B, A], [A, B], 0.0),
    ("EXACT", [A], [], 0.0),                     # none expected: EXACT wants none made
    ("EXACT", [], [], 1.0),
    ("IN_ORDER", [A, A, B], [A, B, A], 2 / 3),   # greedy
    ("IN_ORDER", [X], [], 1.0),
    ("ANY_ORDER", [B, A], [A, B], 1.0),
    ("ANY_ORDER", [X], [], 1.0),
])
def test_trajectory_modes_score_as_agentflow(mode, actual, expected, score):
    assert trajectory_score(actual, expected, mode, check_args=False).score == score


@pytest.mark.parametrize("actual_args, expected_args, same", [
    ({"n": 1}, {"n": 1.0}, True), ({"n": True}, {"n": 1}, True), ({"n": "1"}, {"n": 1}, False),
    ({"n": 1, "extra": 2}, {"n": 1}, False), ({"anything": 1}, {}, True),  # {} expected: any arguments
])
def test_check_args_is_plain_dict_equality_and_empty_expected_args_match_any(actual_args, expected_args, same):
    result = trajectory_score([("A", actual_args)], [("A", expected_args)], "EXACT", check_args=True)
    assert result.score == (1.0 if same else 0.0)
    assert trajectory_score([("A", actual_args)], [("A", expected_args)], "EXACT", check_args=False).score == 1.0


def test_any_order_takes_the_first_unused_match_not_the_best_pairing():
    actual = [("A", {"x": 1}), ("A", {"x": 2})]
    expected = [("A", {}), ("A", {"x": 1})]
    assert trajectory_score(actual, expected, "ANY_ORDER", check_args=True).score == 0.5


def test_node_order_counts_start_and_scores_empty_expectations_one():
    assert node_order_score(["__start__", "MAIN", "MAIN"], ["MAIN", "MAIN"], "EXACT").score == 0.5
    assert node_order_score(["__start__"], [], "EXACT").score == 1.0
    assert node_order_score(["__start__", "MAIN", "MAIN"], ["MAIN", "MAIN"], "IN_ORDER").score == 1.0


@pytest.mark.parametrize("actual, expected, score", [
    (["B", "A", "C"], ["A"], 1.0), (["A"], ["A", "A"], 0.5), ([], [], 1.0), (["A"], [], 0.5),
])
def test_tool_name_match(actual, expected, score):
    assert tool_name_score(actual, expected) == score


@pytest.mark.parametrize("actual, expected, score", [
    ("sunny weather!", "The weather is sunny", 2 / 3),
    ("sunny sunny sunny weather", "The weather is sunny", 2 / 3),   # sets: repeats do not count
    ("running", "run", 0.0),                                         # no stemming
    ("snake_case café", "snake_case café", 1.0),                     # \w keeps _ and accents inside words
    ("anything", "", 0.5), ("", "", 1.0), ("", "Paris", 0.0),
])
def test_rouge_match(actual, expected, score):
    assert rouge_score(actual, expected) == score


def test_rouge_tokens_and_keywords():
    assert rouge_tokens("It's 20°C in São_Paulo!") == ["it", "s", "20", "c", "in", "são_paulo"]
    assert keywords_score("Sunny in PARIS", ["paris", "sunny", "rain"]) == 2 / 3
    assert keywords_score("x", []) == 1.0
    assert keywords_score("x", [""]) == 1.0
