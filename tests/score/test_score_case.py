"""Goal-graph scoring on concrete trajectories: every verdict, call role and metric asserted exactly."""
from __future__ import annotations

import pytest

from runner.score.case import score_trajectory
from runner.transcripts.read import build_trajectory
from tests.helpers.score_case import OFFLINE, Convo, make_case, say, tool, user  # noqa: F401 - shared with other test modules


def goal(scored, name):
    return next(g for g in scored.goals if g.name == name)


def test_all_goals_in_order_pass_with_exact_metrics():
    case = make_case(goals={"a": ["b"], "b": ["s"]},
                     goal_details=[tool("a", username="nwaters"), tool("b", id="1"),
                                   {"type": "text", "name": "s", "keywords": ["january 5"]}])
    scored = Convo().call("a", username="NWaters ").call("b", id=1).say("Off on January 5.").score(case)
    assert scored.passed
    m = scored.metrics
    assert (m.journey_completion, m.tool_call_precision, m.tool_call_recall, m.tool_parameter_f1, m.text_match) == (
        1.0, 1.0, 1.0, 1.0, 1.0)
    assert [g.message for g in scored.goals] == [2, 4, 6]  # numbered from 1, as the explanations say
    assert goal(scored, "a").explanation == "achieved at message 2: called a with matching arguments"
    assert [c.role for c in scored.calls] == ["goal", "goal"]


def test_repeated_tool_is_assigned_optimally_not_greedily():
    # Goal x needs lookup(user=bob); goal y accepts any lookup. Greedy gives the first call to y and
    # loses x; the optimal assignment achieves both.
    case = make_case(goal_details=[
        {"type": "tool_call", "name": "y", "tool_name": "lookup", "args": {"IGNORE": None}},
        tool("lookup", "x", user="bob"),
    ])
    scored = Convo().call("lookup", user="bob").call("lookup", user="amy").score(case)
    assert scored.passed
    assert goal(scored, "x").call_index == 0 and goal(scored, "y").call_index == 1


def test_order_violation_names_the_predecessor():
    case = make_case(goals={"get_id": ["get_schedule"]},
                     goal_details=[tool("get_id", user="n"), tool("get_schedule", id="1")])
    scored = Convo().call("get_schedule", id="1").call("get_id", user="n").score(case)
    assert not scored.passed
    g = goal(scored, "get_schedule")
    assert g.status == "order_violated"
    assert g.explanation == ("order violated: must come after 'get_id' (message 4), "
                             "but its matching call was at message 2")
    assert scored.metrics.journey_completion == 0.5
    assert scored.failures == [f"goal 'get_schedule': {g.explanation}"]


def test_order_is_satisfied_by_a_later_repeat():
    case = make_case(goals={"get_id": ["get_schedule"]},
                     goal_details=[tool("get_id", user="n"), tool("get_schedule", id="1")])
    scored = Convo().call("get_schedule", id="1").call("get_id", user="n").call("get_schedule", id="1").score(case)
    assert scored.passed
    assert goal(scored, "get_schedule").call_index == 2
    assert [c.role for c in scored.calls] == ["extra", "goal", "goal"]
    assert scored.metrics.tool_call_precision == pytest.approx(2 / 3)


def test_text_goals_take_part_in_the_order_both_ways():
    # get_schedule -> summarize -> send_email: a text goal between two tool goals (watsonx appends
    # text goals at the end, so a text -> tool edge could never pass there).
    case = make_case(goals={"get_schedule": ["summarize"], "summarize": ["send_email"]},
                     goal_details=[tool("get_schedule", id="1"), {"type": "text", "name": "summarize", "keywords": ["jan 5"]},
                                   tool("send_email", to="boss")])
    scored = Convo().call("get_schedule", id="1").say("You are off on Jan 5.").call("send_email", to="boss").score(case)
    assert scored.passed
    assert [g.message for g in scored.goals] == [2, 4, 5]


def test_text_goal_said_only_before_its_predecessor_is_an_order_violation():
    case = make_case(goals={"get_schedule": ["summarize"]},
                     goal_details=[tool("get_schedule", id="1"), {"type": "text", "name": "summarize", "keywords": ["jan 5"]}])
    convo = Convo().say("You are off on Jan 5.").call("get_schedule", id="1")
    scored = convo.score(case)
    assert goal(scored, "summarize").status == "order_violated"
    assert "must come after 'get_schedule' (message 3)" in goal(scored, "summarize").explanation


def test_wrong_arguments_explain_argument_mode_and_stage():
    case = make_case(goal_details=[tool("get_id", user="nwaters")])
    scored = Convo().call("get_id", user="nken").score(case)
    g = goal(scored, "get_id")
    assert g.status == "wrong_args"
    assert g.explanation == ("called get_id 1 time(s), never with matching arguments; closest at message 2: "
                             "`user` (strict, decided by exact): expected 'nwaters', got 'nken'")
    v = g.attempts[0].arguments[0]
    assert (v.path, v.mode, v.expected, v.actual, v.matched, v.decided_by) == ("user", "strict", "nwaters", "nken", False, "exact")
    assert scored.calls[0].role == "wrong_arguments"
    assert scored.metrics.counts.wrong_argument_calls == 1
    assert scored.metrics.tool_parameter_f1 == 0.0


def test_not_called():
    scored = Convo().call("other").score(make_case(goal_details=[tool("get_id", user="n")]))
    assert goal(scored, "get_id").status == "not_called"
    assert goal(scored, "get_id").explanation == "not called: the agent never called get_id"
    assert scored.metrics.tool_call_precision == 0.0 and scored.metrics.tool_call_recall == 0.0
    assert scored.metrics.tool_parameter_f1 is None


def test_extra_calls_lower_precision_only():
    case = make_case(goal_details=[tool("get_id", user="n")])
    scored = Convo().call("search", q="x").call("get_id", user="n").score(case)
    assert scored.passed
    assert scored.metrics.tool_call_precision == 0.5
    assert [c.role for c in scored.calls] == ["extra", "goal"]
    assert scored.metrics.counts.extra_calls == 1


def test_forbid_extra_calls_true_fails_on_any_unused_call():
    case = make_case(forbid_extra_calls=True, goal_details=[tool("get_id", user="n")])
    scored = Convo().call("get_id", user="n").call("search", q="x").score(case)
    assert not scored.passed
    assert scored.calls[1].role == "forbidden"
    assert scored.failures == ['forbidden call: search({"q": "x"}) at message 4 achieves no goal']


def test_forbid_extra_calls_globs_only_fail_matching_tools():
    case = make_case(forbid_extra_calls=["cancel_*"], goal_details=[])
    assert Convo().call("get_reservation", id="A").score(case).passed
    scored = Convo().call("get_reservation", id="A").call("cancel_reservation", id="A").score(case)
    assert not scored.passed
    assert [c.role for c in scored.calls] == ["extra", "forbidden"]
    assert scored.metrics.counts.forbidden_calls == 1


def test_refusal_case_with_no_goals_and_no_calls_passes():
    case = make_case(forbid_extra_calls=True, goal_details=[])
    scored = Convo().say("I cannot do that.").score(case)
    assert scored.passed
    assert scored.metrics.journey_completion == 1.0
    assert scored.metrics.tool_call_precision is None and scored.metrics.tool_call_recall is None


def test_a_repeated_matching_call_is_extra_and_forbidden_when_forbidden():
    case = make_case(forbid_extra_calls=["cancel_*"], goal_details=[tool("cancel_reservation", id="A")])
    scored = Convo().call("cancel_reservation", id="A").call("cancel_reservation", id="A").score(case)
    assert [c.role for c in scored.calls] == ["goal", "forbidden"]
    assert not scored.passed
    allowed = make_case(goal_details=[tool("cancel_reservation", id="A")])
    scored = Convo().call("cancel_reservation", id="A").call("cancel_reservation", id="A").score(allowed)
    assert scored.passed and scored.calls[1].role == "extra"
    assert scored.calls[1].note == "cancel_reservation at message 4 repeats 'cancel_reservation', already achieved"


@pytest.mark.parametrize("policy, passed, roles", [
    ("count", False, ["forbidden", "goal"]),
    ("ignore", True, ["ignored_failed", "goal"]),
])
def test_failed_calls_policy(policy, passed, roles):
    case = make_case(failed_calls=policy, forbid_extra_calls=True, goal_details=[tool("cancel", id="A", reason="x")])
    convo = Convo().call("cancel", "Error: missing reason", id="A").call("cancel", id="A", reason="x")
    scored = convo.score(case)
    assert scored.passed is passed
    assert [c.role for c in scored.calls] == roles
    if policy == "ignore":
        assert scored.metrics.tool_call_precision == 1.0
        assert scored.metrics.counts.ignored_failed_calls == 1


def test_failed_call_cannot_achieve_a_goal_when_ignored():
    case = make_case(failed_calls="ignore", goal_details=[tool("cancel", id="A")])
    scored = Convo().call("cancel", '{"error": "not allowed"}', id="A").score(case)
    assert goal(scored, "cancel").status == "not_called"
    case_count = make_case(failed_calls="count", goal_details=[tool("cancel", id="A")])
    assert Convo().call("cancel", '{"error": "not allowed"}', id="A").score(case_count).passed


def test_unreadable_arguments_are_kept_marked_and_match_nothing():
    case = make_case(goal_details=[tool("get_id", user="n")])
    scored = Convo().call("get_id", raw='{"user": "n"').score(case)
    g = goal(scored, "get_id")
    assert g.status == "wrong_args"
    assert g.attempts[0].arguments[0].path == "(arguments)"
    assert "not valid JSON" in g.attempts[0].arguments[0].reason
    assert scored.calls[0].role == "invalid_arguments"


def test_nested_arguments_with_dot_path_modes():
    case = make_case(goal_details=[{
        "type": "tool_call", "name": "ship", "tool_name": "ship",
        "args": {"address": {"city": "Paris", "zip": "75001", "note": "ring twice"}, "items": [{"sku": "A"}, {"sku": "B"}]},
        "arg_matching": {"address": "exact", "address.zip": {"regex": r"^\d{5}$"}, "address.note": "ignore"}}])
    good = {"address": {"city": "Paris", "zip": "75002", "note": "knock"}, "items": [{"sku": "b", "qty": 1}, {"sku": "a"}]}
    assert Convo().call("ship", **good).score(case).passed
    bad = {**good, "address": {**good["address"], "city": "paris"}}  # exact: case matters
    scored = Convo().call("ship", **bad).score(case)
    wrong = [v for v in goal(scored, "ship").attempts[0].arguments if not v.matched]
    assert [(v.path, v.mode) for v in wrong] == [("address.city", "exact")]


def test_extra_args_forbid_reports_the_added_argument():
    case = make_case(extra_args="forbid", goal_details=[tool("get_id", user="n")])
    scored = Convo().call("get_id", user="n", debug=True).score(case)
    wrong = [v for v in goal(scored, "get_id").attempts[0].arguments if not v.matched]
    assert [(v.path, v.decided_by, v.reason) for v in wrong] == [("debug", "structure", "unexpected argument")]
    assert Convo().call("get_id", user="n", debug=True).score(make_case(goal_details=[tool("get_id", user="n")])).passed


def test_parameter_f1_counts_wrong_and_added_arguments():
    case = make_case(goal_details=[tool("f", a=1, b=2)])
    scored = Convo().call("f", a=1, b=3, c=4).score(case)
    # TP a; FN b; FP b (wrong value) + c (added): F1 = 2 / (2 + 2 + 1)
    assert scored.metrics.tool_parameter_f1 == pytest.approx(2 / 5)


def test_keyword_scope_final():
    case = make_case(goal_details=[{"type": "text", "name": "t", "keywords": ["done"], "scope": "final"}])
    assert not Convo().say("done").say("anything else?").score(case).passed
    assert Convo().say("working").say("All done.").score(case).passed


def test_text_response_decided_by_rapidfuzz_without_models():
    case = make_case(goal_details=[{"type": "text", "name": "t", "response": "Your order A-1042 has shipped"}])
    scored = Convo().say("your order a-1042 has shipped!").score(case)
    d = goal(scored, "t").text_decision
    assert scored.passed and d.decided_by == "rapidfuzz" and d.score >= 0.8
    scored = Convo().say("banana bread recipe").score(case)
    assert not scored.passed
    assert goal(scored, "t").text_decision.decided_by == "rapidfuzz"


def test_two_identical_goals_need_two_calls():
    case = make_case(goal_details=[tool("ping", "p1"), tool("ping", "p2")])
    scored = Convo().call("ping").score(case)
    assert not scored.passed
    assert goal(scored, "p2").status == "not_called"
    assert goal(scored, "p2").explanation.startswith("its matching call(s) already achieve 'p1'")


@pytest.mark.parametrize("reason, passed, failure", [
    ("user_stop", True, None),
    ("max_steps", False, "ending: the conversation ended by 'max_steps', not by one of: user_stop, agent_stop"),
    (None, False, "ending: the recording does not say how the conversation ended (termination: user_stop, agent_stop)"),
])
def test_termination_rule(reason, passed, failure):
    case = make_case(termination=["user_stop", "agent_stop"], goal_details=[tool("get_id", user="n")])
    convo = Convo().call("get_id", user="n")
    scored = score_trajectory(case, build_trajectory(convo.messages, termination_reason=reason), OFFLINE)
    assert scored.passed is passed
    assert scored.metrics.journey_completion == 1.0  # every goal was achieved; only the ending failed
    assert scored.failures == ([failure] if failure else [])


def test_no_termination_rule_ignores_the_ending():
    case = make_case(goal_details=[tool("get_id", user="n")])
    scored = score_trajectory(case, build_trajectory(Convo().call("get_id", user="n").messages,
                                                     termination_reason="max_steps"), OFFLINE)
    assert scored.passed


def test_a_call_matching_a_goal_out_of_order_is_not_called_a_repeat():
    case = make_case(goals={"a": ["b"]}, goal_details=[tool("a"), tool("b")])
    scored = Convo().call("b").call("a").score(case)
    assert scored.calls[0].note == "b at message 2 matches 'b' but comes out of the required order"


def test_a_text_goal_boxed_in_by_order_is_an_order_violation_not_a_shared_call():
    # a -> t -> {b, c}: t is said before a and again after b and c; no single edge explains why t
    # cannot be placed, and messages are never "taken" by another goal.
    case = make_case(goals={"a": ["t"], "t": ["b", "c"]},
                     goal_details=[tool("a"), {"type": "text", "name": "t", "keywords": ["ok"]}, tool("b"), tool("c")])
    scored = Convo().say("ok").call("a").call("b").call("c").say("ok").score(case)
    g = goal(scored, "t")
    assert g.status == "order_violated"
    assert g.explanation == ("order violated: it must come after 'a' (message 3) and before 'b' (message 5), "
                             "'c' (message 7), and none of its matches (message 2, message 9) fits")


def test_a_goal_whose_calls_all_failed_says_so():
    case = make_case(failed_calls="ignore", goal_details=[tool("cancel", id="A")])
    scored = Convo().call("cancel", "Error: locked", id="A").score(case)
    assert goal(scored, "cancel").explanation == ("not called successfully: the agent called cancel 1 time(s) and "
                                                  "every call returned an error (failed_calls: ignore)")


def test_unreadable_arguments_score_zero_parameter_f1():
    scored = Convo().call("t", raw="{not json").score(make_case(goal_details=[tool("t", a=1)]))
    assert scored.metrics.tool_parameter_f1 == 0.0
