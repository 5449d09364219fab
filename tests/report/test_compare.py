"""runner.report.compare on plain outcomes: how cases pair, what counts as a flip, and hostile ids in the text."""
from __future__ import annotations

import pytest

from runner.report.compare import Outcomes, as_markdown, as_text, compare_outcomes


def outcomes(rows, policy="all"):
    kept = Outcomes(policy)
    for key, status, *rest in rows:
        metrics = rest[0] if rest else {}
        repeat = rest[1] if len(rest) > 1 else None
        kept.add(key, status, f"why {key}" if status != "passed" else "", metrics, repeat)
    return kept


def test_errors_count_as_not_passing_and_skipped_or_unpaired_cases_are_not_compared():
    old = outcomes([("a", "passed"), ("b", "passed"), ("c", "error"), ("d", "passed"), ("gone", "passed")])
    new = outcomes([("a", "error"), ("b", "skipped"), ("c", "passed"), ("d", "passed"), ("fresh", "failed")])
    c = compare_outcomes(old, new)
    assert [(f.case, f.old, f.new, f.reason) for f in c.newly_failing] == [("a", "passed", "error", "why a")]
    assert [(f.case, f.reason) for f in c.newly_passing] == [("c", "why c")]
    assert (c.paired, c.only_in_old, c.only_in_new) == (3, ["gone"], ["fresh"])
    assert c.p_value == 1.0 and c.bootstrap is None


def test_metric_means_are_over_the_cases_scored_in_both_and_the_allowed_drop_is_in_the_metric_unit():
    old = outcomes([("a", "passed", {"tool_call_recall": 1.0}), ("b", "failed", {"tool_call_recall": 0.5}),
                    ("c", "passed", {"tool_call_recall": 1.0})])
    new = outcomes([("a", "passed", {"tool_call_recall": 1.0}), ("b", "failed", {"tool_call_recall": 0.25}),
                    ("c", "passed", {})])
    c = compare_outcomes(old, new)
    (recall,) = c.metrics
    assert (recall.old, recall.new, recall.cases) == (0.75, 0.625, 2)
    assert c.regressions(0.125) == [] and c.regressions(0.1) == [
        "mean tool_call_recall dropped 0.125 (0.750 → 0.625, allowed 0.100)"]


def test_six_cases_failing_and_none_fixed_is_more_than_chance():
    old = outcomes([(f"c{i}", "passed") for i in range(8)])
    new = outcomes([(f"c{i}", "failed" if i < 6 else "passed") for i in range(8)])
    c = compare_outcomes(old, new)
    assert c.p_value == pytest.approx(0.03125)
    assert c.verdict() == ("exact McNemar test on the 6 case(s) that flipped (6 newly failing, 0 newly passing): "
                           "p = 0.0312: the new run is worse, more than chance (p < 0.05)")


def test_repeats_are_settled_by_the_policy_and_give_a_bootstrap_interval():
    old = outcomes([("a", "passed", {}, 0), ("a", "failed", {}, 1), ("a", "passed", {}, 2)], policy="majority")
    new = outcomes([("a", "failed", {}, 0), ("a", "failed", {}, 1), ("a", "passed", {}, 2)], policy="majority")
    c = compare_outcomes(old, new)
    assert [(f.case, f.old, f.new, f.reason) for f in c.newly_failing] == [("a", "passed", "failed", "repeat 0: why a")]
    assert c.bootstrap == pytest.approx((-1 / 3, -1 / 3, -1 / 3))


def test_hostile_case_ids_stay_text():
    hostile = "x|y`<script>\x1b[2K"
    c = compare_outcomes(outcomes([(hostile, "passed")]), outcomes([(hostile, "failed")]))
    text = as_text(c)
    assert "\x1b" not in text and "x|y`<script>\\x1b[2K: passed → failed" in text
    md = as_markdown(c)
    assert "| x\\|y\\`\\<script\\>\\\\x1b\\[2K | passed | failed |" in md
    assert "<script>" not in md
