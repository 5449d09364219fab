"""Every boundary the README promises, tested at the boundary, just inside and just outside.

Values are chosen so that the arithmetic is exact in binary floating point (0.5, 0.25, 1.25, ...):
a test of "≤ tolerance" that only ever meets 0.009999999999999787 cannot tell `≤` from `<`.
"""
from __future__ import annotations

import json

import pytest
from rapidfuzz import fuzz, utils

from runner.score.args import match_arguments
from runner.score.cascade import Cascade, CascadeSettings
from runner.score.case import score_trajectory
from runner.score.explain import describe_mismatches
from runner.suite.models import Case, ToolCallGoal
from runner.transcripts.read import build_trajectory

OFFLINE = Cascade(CascadeSettings(use_embeddings=False))


class FixedEmbedder:
    """An embedding stage whose similarity is whatever the test says."""

    def __init__(self, score: float):
        self.score = score

    def encode_many(self, texts):
        return None

    def similarity(self, a, b):
        return self.score


def verdicts(args, actual, arg_matching, cascade=OFFLINE, extra_args=None):
    goal = ToolCallGoal(type="tool_call", name="g", tool_name="t", args=args, arg_matching=arg_matching,
                        extra_args=extra_args)
    return match_arguments(goal, actual, cascade)


def matched(args, actual, arg_matching, **kwargs) -> bool:
    return all(v.matched for v in verdicts(args, actual, arg_matching, **kwargs))


# ---------------------------------------------------------------- tolerance: |expected - actual| ≤ tolerance

@pytest.mark.parametrize("actual, inside", [
    (10.5, True),         # at the boundary: the README says "within", so equal counts
    (9.5, True),
    (10.25, True),        # just inside
    (10.5 + 2 ** -20, False),  # just outside
    (9.5 - 2 ** -20, False),
])
def test_tolerance_includes_its_boundary(actual, inside):
    assert matched({"amount": 10}, {"amount": actual}, {"amount": {"tolerance": 0.5}}) is inside


@pytest.mark.parametrize("actual, inside", [(12.5, True), (7.5, True), (12.5 + 2 ** -18, False)])
def test_fuzzy_with_a_tolerance_includes_its_boundary(actual, inside):
    found = verdicts({"amount": 10.0}, {"amount": actual}, {"amount": {"mode": "fuzzy", "tolerance": 2.5}})
    assert [(v.matched, v.decided_by) for v in found] == [(inside, "number")]


# ---------------------------------------------------------------- relative tolerance: scaled by the expected value

@pytest.mark.parametrize("expected, actual, inside", [
    (2.5, 3.75, True),          # at the boundary: |2.5 - 3.75| = 1.25 = 50% of 2.5
    (2.5, 1.25, True),
    (2.5, 3.5, True),           # just inside
    (2.5, 3.75 + 2 ** -20, False),  # just outside
    (5.5, 2.5, False),          # 3.0 > 50% of 5.5 (2.75), though it is within 50% of... nothing: scaled by 5.5
    (2.5, 4.5, False),          # 2.0 is within 50% of the actual 4.5 (2.25) but not of the expected 2.5 (1.25)
])
def test_relative_tolerance_is_scaled_by_the_expected_value(expected, actual, inside):
    cascade = Cascade(CascadeSettings(use_embeddings=False, number_rel_tolerance=0.5))
    decision = cascade.compare(expected, actual)
    assert (decision.matched, decision.decided_by) == (inside, "number")


def test_relative_tolerance_by_the_expected_value_rejects_what_the_actual_would_allow():
    cascade = Cascade(CascadeSettings(use_embeddings=False, number_rel_tolerance=0.1))
    assert not cascade.compare(100.5, 111.0).matched  # 10.5 > 10.05 (10% of 100.5); 11.1 would be 10% of 111
    assert cascade.compare(111.0, 100.5).matched is True  # 10.5 ≤ 11.1 (10% of 111)


# ---------------------------------------------------------------- similarity: score ≥ threshold

@pytest.mark.parametrize("score, passed", [(0.75, True), (0.75 + 2 ** -20, True), (0.75 - 2 ** -20, False)])
def test_embedding_similarity_passes_at_the_threshold(score, passed):
    cascade = Cascade(CascadeSettings(similarity_threshold=0.75), embedder=FixedEmbedder(score))
    decision = cascade.compare("the booking is confirmed", "your reservation went through")
    assert (decision.matched, decision.decided_by, decision.score) == (passed, "embedding", score)


def test_rapidfuzz_similarity_passes_at_the_threshold():
    expected, actual = "your booking is confirmed", "your booking was confirmed"
    score = fuzz.WRatio(expected, actual, processor=utils.default_process) / 100
    at = OFFLINE.compare(expected, actual, threshold=score)
    above = OFFLINE.compare(expected, actual, threshold=min(1.0, score + 2 ** -20))
    assert (at.matched, at.decided_by, at.score) == (True, "rapidfuzz", score)
    assert (above.matched, above.decided_by) == (False, "rapidfuzz")


def test_a_rule_threshold_passes_at_the_threshold():
    cascade = Cascade(CascadeSettings(), embedder=FixedEmbedder(0.9))
    assert matched({"note": "a"}, {"note": "b"}, {"note": {"mode": "fuzzy", "threshold": 0.9}}, cascade=cascade)
    assert not matched({"note": "a"}, {"note": "b"}, {"note": {"mode": "fuzzy", "threshold": 0.90001}},
                       cascade=cascade)


# ---------------------------------------------------------------- exact objects keep their keys, child rules or not

def test_an_exact_object_with_child_rules_still_forbids_extra_keys():
    rules = {"address": "exact", "address.zip": {"regex": r"\d{5}"}}
    found = verdicts({"address": {"city": "Paris", "zip": "75001"}},
                     {"address": {"city": "Paris", "zip": "75002", "floor": 3}}, rules)
    assert [(v.path, v.matched, v.decided_by, v.reason) for v in found if not v.matched] == [
        ("address.floor", False, "structure", "unexpected argument")]
    assert matched({"address": {"city": "Paris", "zip": "75001"}}, {"address": {"city": "Paris", "zip": "75002"}},
                   rules)


def test_an_exact_object_without_child_rules_forbids_extra_keys_too():
    assert not matched({"address": {"city": "Paris"}}, {"address": {"city": "Paris", "floor": 3}},
                       {"address": "exact"})


def test_a_strict_object_with_child_rules_allows_extra_keys_unless_forbidden():
    rules = {"address.zip": {"regex": r"\d{5}"}}
    args, actual = {"address": {"zip": "75001"}}, {"address": {"zip": "75002", "floor": 3}}
    assert matched(args, actual, rules)
    assert not matched(args, actual, rules, extra_args="forbid")


# ---------------------------------------------------------------- lists under per-item rules keep their length

@pytest.mark.parametrize("actual", [[10.0, 99], [10.0, 10.0], [], [99, 10.0]])
def test_a_list_of_another_length_never_matches_under_per_item_rules(actual):
    for rule in ({"tolerance": 0.5}, {"mode": "fuzzy"}, {"regex": r"\d+(\.\d+)?"}):
        found = verdicts({"values": [10.0]}, {"values": actual}, {"values": rule})
        assert [(v.matched, v.decided_by) for v in found] == [(False, "structure")], rule
        assert found[0].reason == f"expected 1 items, got {len(actual)}"


def test_a_list_with_item_rules_keeps_its_length_too():
    found = verdicts({"values": [10.0, 5]}, {"values": [10.0, 5, 7]}, {"values.0": {"tolerance": 0.5}})
    assert [(v.path, v.matched, v.decided_by) for v in found] == [("values", False, "structure")]


def test_a_list_of_the_same_length_is_compared_item_by_item():
    assert matched({"values": [10.0, 5]}, {"values": [10.25, 5]}, {"values": {"tolerance": 0.5}})
    assert not matched({"values": [10.0, 5]}, {"values": [10.75, 5]}, {"values": {"tolerance": 0.5}})


# ---------------------------------------------------------------- type and ignore_chars

@pytest.mark.parametrize("kind, good, bad", [
    ("integer", 10, [10.0, "10", True]),
    ("number", 10.0, [10, "10.0", False]),
    ("string", "10", [10, 10.0, True]),
    ("boolean", True, ["true", "yes", 1]),
])
def test_type_is_checked_strictly(kind, good, bad):
    assert matched({"x": good}, {"x": good}, {"x": {"type": kind}})
    for value in bad:
        (verdict,) = verdicts({"x": good}, {"x": value}, {"x": {"type": kind}})
        assert (verdict.matched, verdict.decided_by) == (False, "type"), value


def test_type_applies_to_every_item_of_a_list():
    (verdict,) = verdicts({"xs": [1.0, 3.0]}, {"xs": [1.0, 3]}, {"xs": {"type": "number"}})
    assert (verdict.matched, verdict.decided_by) == (False, "type")
    assert verdict.reason == "item 1: expected a number with a decimal point (type: number), got an integer 3"
    assert matched({"xs": [1.0, 3.0]}, {"xs": [3.0, 1.0]}, {"xs": {"type": "number"}})  # still a multiset


def test_type_combines_with_a_tolerance_on_each_item():
    rule = {"xs": {"tolerance": 0.5, "type": "number"}}
    assert matched({"xs": [1.0]}, {"xs": [1.5]}, rule)
    assert not matched({"xs": [1.0]}, {"xs": [1]}, rule)


def test_ignore_chars_drops_characters_before_comparing():
    rule = {"f": {"ignore_chars": " ,./-_*^"}}
    assert matched({"f": "x**3"}, {"f": "X^3"}, rule)
    assert matched({"f": "Washington, D.C."}, {"f": "washington dc"}, rule)
    assert not matched({"f": "x**3"}, {"f": "x^4"}, rule)
    assert matched({"f": "x**3"}, {"f": "x ^ 3"}, {"f": {"ignore_chars": " *^", "one_of": ["x3", "x**2"]}})
    assert not matched({"f": "x**3"}, {"f": "X^3"}, {"f": {"ignore_chars": "*^", "mode": "exact"}})  # exact keeps case
    assert matched({"fs": ["a-b", "c d"]}, {"fs": ["cd", "AB"]}, {"fs": {"ignore_chars": "- "}})


# ---------------------------------------------------------------- explanations name the right call

def _score(case: dict, messages: list) -> object:
    return score_trajectory(Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, **case}),
                            build_trajectory(messages), OFFLINE)


def _calls(*calls) -> list:
    """One assistant message per call, each answered: call k is at message 2k (message 1 is the user's)."""
    messages = [{"role": "user", "content": "hi"}]
    for i, (name, args, *error) in enumerate(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "Error: failed" if error else "ok"})
    return messages


def test_an_order_violation_names_the_latest_matching_call():
    case = {"goals": {"a": ["b"]}, "goal_details": [
        {"type": "tool_call", "name": "a", "tool_name": "ta", "args": {}},
        {"type": "tool_call", "name": "b", "tool_name": "tb", "args": {"x": 1}}]}
    scored = _score(case, _calls(("tb", {"x": 1}), ("tb", {"x": 2}), ("tb", {"x": 1}), ("ta", {})))
    b = next(g for g in scored.goals if g.name == "b")
    assert b.explanation == "order violated: must come after 'a' (message 8), but its matching call was at message 6"


def test_a_wrong_arguments_explanation_names_the_closest_call():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"x": 1, "y": 2, "z": 3}}]}
    scored = _score(case, _calls(("t", {"x": 0, "y": 0, "z": 3}), ("t", {"x": 1, "y": 0, "z": 3}),
                                 ("t", {"x": 0, "y": 0, "z": 0})))
    (g,) = scored.goals
    assert g.explanation == ("called t 3 time(s), never with matching arguments; closest at message 4: "
                             "`y` (strict, decided by number): expected 2, got 0")
    assert [a.message for a in g.attempts] == [2, 4, 6]


def test_a_repeat_names_the_goal_it_repeats_and_its_own_message():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"x": 1}}]}
    scored = _score(case, _calls(("u", {}), ("t", {"x": 1}), ("t", {"x": 1})))
    assert [(c.message, c.role, c.note) for c in scored.calls] == [
        (2, "extra", "u at message 2 is not part of any goal"),
        (4, "goal", "t at message 4 achieves 'g'"),
        (6, "extra", "t at message 6 repeats 'g', already achieved")]


# ---------------------------------------------------------------- failed calls say so

def test_a_forbidden_failed_call_says_it_failed_and_what_would_pass_over_it():
    case = {"forbid_extra_calls": True, "goal_details": [
        {"type": "tool_call", "name": "g", "tool_name": "check", "args": {}}]}
    scored = _score(case, _calls(("check", {}), ("transfer_money", {"amount": 5}, "error")))
    assert scored.failures == [
        "forbidden call: transfer_money({\"amount\": 5}) at message 4 failed with an error and achieves no goal; "
        "failed_calls: ignore would pass over it"]


def test_an_extra_failed_call_and_a_goal_achieved_by_a_failed_call_say_so():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"x": 1}}]}
    scored = _score(case, _calls(("t", {"x": 1}, "error"), ("t", {"x": 2}, "error")))
    assert [c.note for c in scored.calls] == [
        "t at message 2 achieves 'g' (its result was an error; with failed_calls: ignore it would achieve nothing)",
        "t at message 4 matches no goal's arguments; it failed with an error and achieves no goal "
        "(failed_calls: ignore would pass over it)"]


def test_the_closest_attempt_says_when_it_failed():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"x": 1}}]}
    (g,) = _score(case, _calls(("t", {"x": 2}, "error"))).goals
    assert g.explanation.startswith("called t 1 time(s), never with matching arguments; closest at message 2 "
                                    "(that call failed with an error): ")


# ---------------------------------------------------------------- near misses

def test_a_goal_tool_never_called_but_a_close_name_was():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "get_timeoff_schedule_hr_agent",
                              "args": {}}]}
    (g,) = _score(case, _calls(("get_assignment_id", {}), ("get_timeoff_schedule_hr_usecase", {}))).goals
    assert g.explanation == ("not called: the agent never called get_timeoff_schedule_hr_agent; it called "
                             "get_timeoff_schedule_hr_usecase at message 4, a close name: did you mean "
                             "tool_name: get_timeoff_schedule_hr_usecase?")


def test_no_did_you_mean_for_unrelated_tools():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "cancel_reservation", "args": {}}]}
    (g,) = _score(case, _calls(("get_user_details", {}))).goals
    assert g.explanation == "not called: the agent never called cancel_reservation"


def test_a_missing_argument_sent_under_a_close_name():
    found = verdicts({"username": "nwaters"}, {"user_name": "NWaters", "other": "nwaters"}, {})
    assert describe_mismatches(found) == (
        "`username` (strict, decided by absent): expected 'nwaters', missing — the call sends the same value as "
        "`user_name`: did you mean `user_name`?")
    plain = verdicts({"username": "nwaters"}, {"user_name": "nken"}, {})
    assert describe_mismatches(plain) == "`username` (strict, decided by absent): expected 'nwaters', missing"


@pytest.mark.parametrize("expected, actual, hint", [
    ("yes", True, "the suite's 'yes' is text (evalrun reads only true and false as booleans); write `true` for the "
                  "boolean"),
    ("no", False, "the suite's 'no' is text (evalrun reads only true and false as booleans); write `false` for the "
                  "boolean"),
    (True, "yes", "the call sent the text 'yes', not a boolean; to accept that text, write it quoted in the suite; "
                  "`true` (unquoted) is the boolean"),
])
def test_yes_and_no_against_a_boolean_say_how_to_write_one(expected, actual, hint):
    found = verdicts({"confirm": expected}, {"confirm": actual}, {})
    assert describe_mismatches(found).endswith(" — " + hint)


# ---------------------------------------------------------------- unscored goals and absent precision

def test_a_goal_evalrun_cannot_score_is_unscored_never_achieved():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {}},
                             {"type": "interaction", "name": "greets"}]}
    scored = _score(case, _calls(("t", {})))
    _g, greets = scored.goals
    assert (greets.status, greets.achieved, greets.explanation) == (
        "unscored", False, "unscored: evalrun cannot score goals of type 'interaction' yet")
    assert (scored.passed, scored.status, scored.failures) == (False, "unscored", [])
    assert scored.unscored == ["goal 'greets': unscored: evalrun cannot score goals of type 'interaction' yet"]
    assert (scored.metrics.journey_success, scored.metrics.journey_completion, scored.metrics.counts.missed_goals) == (
        False, 1.0, 0)


def test_a_failure_beside_an_unscored_goal_is_a_failure():
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {}},
                             {"type": "assert_llm", "name": "polite"}]}
    scored = _score(case, _calls(("u", {})))
    assert scored.status == "failed"
    assert scored.metrics.journey_completion == 0.0


def test_without_tool_goals_precision_is_absent_not_zero():
    case = {"goal_details": [{"type": "text", "name": "s", "keywords": ["done"]}]}
    messages = _calls(("lookup", {})) + [{"role": "assistant", "content": "done"}]
    metrics = _score(case, messages).metrics
    assert (metrics.tool_call_precision, metrics.tool_call_recall, metrics.text_match) == (None, None, 1.0)
    with_tool = {"goal_details": case["goal_details"] + [{"type": "tool_call", "name": "t", "tool_name": "x", "args": {}}]}
    assert _score(with_tool, messages).metrics.tool_call_precision == 0.0


def test_a_regex_that_backtracks_forever_is_stopped_and_explained():
    (verdict,) = verdicts({"code": "x"}, {"code": "a" * 40 + "!"}, {"code": {"regex": "(a|a)+b"}})
    assert (verdict.matched, verdict.decided_by) == (False, "regex")
    assert verdict.reason.startswith("the regular expression /(a|a)+b/ took longer than 1 s on 'aaaa")


# ---------------------------------------------------------------- found by mutation testing (mutmut over runner/score/)

@pytest.mark.parametrize("value, described", [
    (True, "a boolean true"), (3, "an integer 3"), (3.5, "a number with a decimal point 3.5"), ("3", "text '3'"),
    (None, "null null"), ({"a": 1}, "an object {\"a\": 1}"), ([1], "a list [1]"),
])
def test_a_type_mismatch_names_what_was_sent(value, described):
    expected_type = "string" if not isinstance(value, str) else "integer"
    (verdict,) = verdicts({"x": "1"}, {"x": value}, {"x": {"type": expected_type}})
    if isinstance(value, list):
        assert verdict.reason == "item 0: expected text (type: string), got an integer 1"
    else:
        assert verdict.reason.endswith(f", got {described}")


def test_a_tolerance_between_a_number_and_text_compares_strict_without_crashing():
    (verdict,) = verdicts({"n": 10}, {"n": "ten"}, {"n": {"tolerance": 0.5}})
    assert (verdict.matched, verdict.decided_by, verdict.reason) == (False, "exact", "expected 10, got 'ten'")
    assert matched({"n": "ten"}, {"n": " TEN"}, {"n": {"tolerance": 0.5}})


def test_numbers_too_large_for_a_float_are_compared_exactly():
    big = 10 ** 400
    assert matched({"n": big}, {"n": big}, {"n": {"tolerance": 0.5}})
    assert not matched({"n": big}, {"n": big + 1}, {"n": {"tolerance": 0.5}})
    fuzzy = {"n": {"mode": "fuzzy", "tolerance": 0.5}}
    assert [(v.matched, v.decided_by) for v in verdicts({"n": big}, {"n": big + 1}, fuzzy)] == [(False, "number")]
    assert [(v.matched, v.decided_by) for v in verdicts({"n": big}, {"n": big}, fuzzy)] == [(True, "exact")]


def test_a_whole_number_written_with_a_decimal_point_is_still_whole_in_fuzzy_mode():
    decision = OFFLINE.compare(2025, 2044.0)  # 19 apart is within 1% of 2025, but years are not approximate
    assert (decision.matched, decision.decided_by) == (False, "number")
    assert decision.reason == ("2044.0 is not 2025 (whole numbers match only when equal, unless a tolerance is "
                               "given)")


def test_ignore_chars_never_touches_the_ignore_sentinel_and_reaches_list_items():
    assert matched({"x": "<IGNORE>"}, {"x": "anything"}, {"x": {"ignore_chars": "<>"}})
    assert not matched({"fs": ["a-b"]}, {"fs": ["xy"]}, {"fs": {"ignore_chars": "-"}})
    assert matched({"o": {"k": "a-b"}}, {"o": {"k": "AB"}}, {"o": {"ignore_chars": "-", "mode": "strict"}})
    assert not matched({"o": {"k": "a-b"}}, {"o": {"k": "xy"}}, {"o": {"ignore_chars": "-", "mode": "strict"}})


def test_an_unscored_predecessor_is_not_reported_as_missed():
    case = {"goals": {"greets": ["g"]}, "goal_details": [{"type": "interaction", "name": "greets"},
                                                         {"type": "tool_call", "name": "g", "tool_name": "t", "args": {}}]}
    _greets, g = _score(case, _calls(("t", {}))).goals
    assert g.explanation == "achieved at message 2: called t with matching arguments"


# ---------------------------------------------------------------- every explanation, word for word

def _texts(*texts) -> list:
    return [{"role": "user", "content": "hi"}] + [{"role": "assistant", "content": t} for t in texts]


def test_not_said_without_any_text():
    case = {"goal_details": [{"type": "text", "name": "s", "keywords": ["done"]}]}
    (g,) = _score(case, _calls(("t", {}))).goals
    assert (g.status, g.missing_keywords, g.explanation) == ("not_said", ["done"], "not said: the agent sent no text")
    final = {"goal_details": [{"type": "text", "name": "s", "keywords": ["done"], "scope": "final"}]}
    (g,) = _score(final, _calls(("t", {}))).goals
    assert g.explanation == "not said: the agent sent no text at the end"


def test_not_said_names_the_closest_message_and_its_missing_keywords():
    case = {"goal_details": [{"type": "text", "name": "s", "keywords": ["alpha", "beta", "gamma"]}]}
    (g,) = _score(case, _texts("alpha only", "alpha and beta", "nothing")).goals
    assert g.missing_keywords == ["gamma"]
    assert g.explanation == ("not said: nothing in the assistant's messages contains all keywords; the closest "
                             "(message 3) misses 'gamma'")
    final = {"goal_details": [{"type": "text", "name": "s", "keywords": ["alpha", "beta"], "scope": "final"}]}
    (g,) = _score(final, _texts("alpha and beta", "beta")).goals
    assert g.explanation == ("not said: nothing in the final assistant message contains all keywords; the closest "
                             "(message 3) misses 'alpha'")


def test_not_said_names_the_closest_answer_its_stage_and_score():
    case = {"goal_details": [{"type": "text", "name": "s", "response": "Your flight is booked."}]}
    cascade = Cascade(CascadeSettings(similarity_threshold=0.75), embedder=FixedEmbedder(0.5))
    scored = score_trajectory(Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, **case}),
                              build_trajectory(_texts("Hello.", "Something else.")), cascade)
    (g,) = scored.goals
    assert g.text_decision.decided_by == "embedding"
    assert g.explanation == ("not said: nothing in the assistant's messages matches the reference answer; the closest "
                             "is message 2, decided offline: embeddings 0.50 < threshold 0.75")


def test_an_order_violation_before_a_successor():
    case = {"goals": {"a": ["b"]}, "goal_details": [
        {"type": "tool_call", "name": "a", "tool_name": "ta", "args": {}},
        {"type": "tool_call", "name": "b", "tool_name": "tb", "args": {}}]}
    scored = _score(case, _calls(("tb", {}), ("ta", {})))
    a, b = scored.goals
    assert (a.status, a.explanation) == ("achieved", "achieved at message 4: called ta with matching arguments")
    assert (b.status, b.order_violations) == ("order_violated", [
        "must come after 'a' (message 4), but its matching call was at message 2"])
    assert scored.failures == ["goal 'b': order violated: must come after 'a' (message 4), but its matching call was "
                               "at message 2"]


def test_an_achieved_goal_notes_a_predecessor_that_was_not_achieved():
    case = {"goals": {"a": ["b"]}, "goal_details": [
        {"type": "tool_call", "name": "a", "tool_name": "ta", "args": {}},
        {"type": "tool_call", "name": "b", "tool_name": "tb", "args": {}}]}
    a, b = _score(case, _calls(("tb", {}))).goals
    assert b.explanation == ("achieved at message 2: called tb with matching arguments; but 'a' (which must come "
                             "first) was not achieved")
    assert (b.message, b.call_index, a.message, a.call_index) == (2, 0, None, None)


def test_a_goal_whose_only_match_is_taken_needs_a_call_of_its_own():
    case = {"goal_details": [{"type": "tool_call", "name": "p1", "tool_name": "t", "args": {}},
                             {"type": "tool_call", "name": "p2", "tool_name": "t", "args": {}}]}
    _p1, p2 = _score(case, _calls(("t", {}))).goals
    assert p2.explanation == ("its matching call(s) already achieve 'p1'; each call achieves one goal, so this goal "
                              "needs a call of its own")
    assert (p2.status, p2.achieved) == ("not_called", False)


def test_a_text_achieved_goal_carries_its_decision_and_message():
    case = {"goal_details": [{"type": "text", "name": "s", "keywords": ["booked"]}]}
    (g,) = _score(case, _texts("nope", "It is booked.")).goals
    assert (g.status, g.message, g.call_index, g.explanation) == ("achieved", 3, None, "achieved at message 3: said")


@pytest.mark.parametrize("actual, f1", [
    ({"a": 1, "b": 2}, 1.0),                 # all match
    ({"a": 1, "b": 0}, 2 * 1 / (2 * 1 + 1 + 1)),  # one wrong: TP 1, FP 1, FN 1
    ({"a": 1}, 2 * 1 / (2 * 1 + 0 + 1)),     # one missing: TP 1, FN 1
    ({"a": 1, "b": 2, "c": 3}, 2 * 2 / (2 * 2 + 1)),  # one added: FP 1
    ({"a": 0, "b": 0, "c": 0, "d": 0}, 0.0),
])
def test_parameter_f1_exact_values(actual, f1):
    case = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"a": 1, "b": 2}}]}
    assert _score(case, _calls(("t", actual))).metrics.tool_parameter_f1 == pytest.approx(f1)


def test_parameter_f1_leaves_out_what_is_not_compared_and_averages_goals():
    case = {"goal_details": [
        {"type": "tool_call", "name": "g", "tool_name": "t", "args": {"a": 1, "b": "<IGNORE>", "c": 3},
         "arg_matching": {"c": "optional"}},
        {"type": "tool_call", "name": "h", "tool_name": "u", "args": {"x": 1}},
        {"type": "tool_call", "name": "never", "tool_name": "v", "args": {"x": 1}}]}
    scored = _score(case, _calls(("t", {"a": 1, "b": 9}), ("u", {"x": 2})))
    # g: TP 1 (a), b ignored, c optional and absent -> 1.0; h: TP 0, FN 1, FP 1 -> 0.0; never called: left out
    assert scored.metrics.tool_parameter_f1 == pytest.approx(0.5)
    ignore_all = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"IGNORE": None}}]}
    assert _score(ignore_all, _calls(("t", {"a": 1}))).metrics.tool_parameter_f1 == 1.0


def test_forbidden_extra_arguments_count_once_in_parameter_f1():
    case = {"extra_args": "forbid",
            "goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": {"a": 1}}]}
    assert _score(case, _calls(("t", {"a": 1, "z": 0}))).metrics.tool_parameter_f1 == pytest.approx(2 / 3)


def test_describe_verdict_word_for_word():
    rules = {"note": {"mode": "fuzzy", "threshold": 0.9}, "code": {"regex": r"\d+"}}
    cascade = Cascade(CascadeSettings(), embedder=FixedEmbedder(0.5))
    found = verdicts({"note": "a", "code": "1", "n": 1}, {"note": "b", "code": "x", "z": 2}, rules, cascade=cascade,
                     extra_args="forbid")
    assert describe_mismatches(found) == (
        "`note` (fuzzy): expected 'a', got 'b' — decided offline: embeddings 0.50 < threshold "
        "0.90; `code` (regex, decided by regex): expected '1', got 'x' — 'x' does not match /\\d+/; "
        "`n` (strict, decided by absent): expected 1, missing; "
        "`z` (strict, decided by structure): unexpected argument, got 2")
    assert describe_mismatches(verdicts({"n": 1}, {"n": 1}, {})) == "all arguments match"


# ---------------------------------------------------------------- more mutation survivors, killed

from runner.score.dates import parse_date  # noqa: E402
from runner.score.normalize import exact_equal, strict_difference, strict_equal  # noqa: E402


@pytest.mark.parametrize("expected, actual", [
    (["true", "no"], [True, "NO"]), (["10", 2.5], [10.0, "2.5"]), (["a", "b", "a"], ["A", "a", "B"]),
    ([None, "x"], ["X", None]), ([[1, "2"]], [["2", 1.0]]),
])
def test_lists_compared_by_counting_treat_texts_booleans_and_numbers_as_strict_does(expected, actual):
    assert strict_equal(expected, actual) and strict_equal(actual, expected)
    assert strict_difference(expected, actual + ["extra"]).reason.startswith(
        f"expected {len(expected)} items, got {len(expected) + 1}")


@pytest.mark.parametrize("expected, actual, reason", [
    (["a", "b"], ["a", "c"], "no actual item matches expected item 'b'"),
    (["a", "a"], ["a", "b"], "items cannot be paired one to one: expected [\"a\", \"a\"], got [\"a\", \"b\"]"),
    ([{"k": 1}], [{"k": 2}], "no actual item matches expected item {\"k\": 1}"),
])
def test_list_differences_are_explained(expected, actual, reason):
    assert strict_difference(expected, actual).reason == reason
    assert strict_difference({"xs": expected}, {"xs": actual}).reason == "at xs: " + reason


@pytest.mark.parametrize("text, day", [
    ("2025-01-05T10:30:59Z", "2025-01-05"), ("2025-01-05 23:59", "2025-01-05"),
    ("2025-01-05T24:00", None), ("2025-01-05T10:60", None), ("2025-01-05T10:30:61", None),
])
def test_a_date_with_an_impossible_time_is_not_a_date(text, day):
    found = parse_date(text)
    assert (found.isoformat() if found else None) == day


@pytest.mark.parametrize("actual, pattern, ok", [
    (True, "true", True), (False, "True", False), (12, r"\d+", True), (1.5, r"1\.5", True),
    ({"a": "é"}, '{"a": "é"}', True), ([1, 2], r"\[1, 2\]", True),
])
def test_a_regex_sees_json_text_for_everything_but_strings(actual, pattern, ok):
    assert matched({"x": "?"}, {"x": actual}, {"x": {"regex": pattern}}) is ok


def test_exact_tells_booleans_from_numbers():
    assert not exact_equal(True, 1) and not exact_equal(1, True) and exact_equal(1, 1.0)


def test_the_cascade_remembers_each_question_by_both_sides():
    cascade = Cascade(CascadeSettings(use_embeddings=False))
    assert cascade.compare("apple pie", "apple pie!").matched
    assert not cascade.compare("zebra crossing", "apple pie!").matched
    assert not cascade.compare("apple pie", "zebra crossing").matched
    first = cascade.compare("apple pie", "apple pie!")
    first.notes.append("changed by a caller")
    assert cascade.compare("apple pie", "apple pie!").notes == []  # callers get copies
