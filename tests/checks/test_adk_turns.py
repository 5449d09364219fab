"""ADK's criteria turn by turn (runner/checks/adk.py): the conversation cut into invocations at each user
message, paired by position with the case's turns, scored per turn, averaged, passed at the threshold (>=).
Reference values marked "ADK 2.13" come from calling ADK's own TrajectoryEvaluator and ROUGE evaluator on the
same invocations (/work/notes/adk.md §2.8); tests/bench/adk_agreement.py compares on ADK's own files."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from runner.checks.response_match import adk_rouge_tokens
from runner.checks.run import run_checks
from runner.suite.models import Case
from runner.transcripts.invocations import split_invocations
from runner.transcripts.read import build_trajectory
from tests.helpers.adk_files import recording

PARIS = ("weather in Paris?", [("get_weather", {"city": "Paris"})], "It is sunny in Paris.")
LONDON = ("and London?", [("get_weather", {"city": "London"}), ("get_time", {"city": "London"})], "London is rainy.")
ACTUAL = recording(("weather in Paris?", [("get_weather", {"city": "Paris"})], "Paris: sunny, 21C."),
                   ("and London?", [("get_time", {"city": "London"}), ("get_weather", {"city": "London"}),
                                    ("log", {})], "Rain in London."))


def turn(user, calls, answer, **extra):
    return {"user": user, "calls": [{"tool_name": n, "args": a} for n, a in calls], "response": answer, **extra}


def make_case(checks, turns=(PARIS, LONDON), **fields):
    return Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "checks": checks,
                                "turns": [turn(*t) if isinstance(t, tuple) else t for t in turns], **fields})


def results(checks, messages=ACTUAL, **fields):
    return run_checks(make_case(checks, **fields), build_trajectory(messages))


def one(check, messages=ACTUAL, **fields):
    [result] = results([check], messages, **fields)
    return result


def per_turn(result) -> list:
    return [t["score"] for t in result.evidence["turns"]]


# ---------------------------------------------------------------- ADK 2.13's own values on the same invocations

@pytest.mark.parametrize("match_type, scores, mean, status", [
    ("EXACT", [1.0, 0.0], 0.5, "passed"),  # ADK 2.13: EXACT overall 0.5 PASSED [1.0, 0.0]
    ("IN_ORDER", [1.0, 0.0], 0.5, "passed"),  # ADK 2.13: the greedy scan takes get_weather, then finds no get_time
    ("ANY_ORDER", [1.0, 1.0], 1.0, "passed"),  # ADK 2.13: ANY_ORDER overall 1.0 [1.0, 1.0]
])
def test_trajectory_per_turn_as_adk(match_type, scores, mean, status):
    result = one({"type": "tool_trajectory_avg_score", "threshold": 0.5, "match_type": match_type})
    assert (per_turn(result), result.score, result.status) == (scores, mean, status)


def test_rouge_per_turn_as_adk():
    result = one({"type": "response_match_score", "threshold": 0.5})
    assert per_turn(result) == [0.5, pytest.approx(1 / 3, abs=1e-15)]
    assert (result.score, result.status) == (0.41666666666666663, "failed")  # ADK 2.13: 0.4167 FAILED [0.5, 0.3333]
    assert result.explanation == (
        "mean 0.417 over 2 turn(s) (scores by turn 1: 0.5, 2: 0.333); turn 1: ROUGE-1 F1 0.500 (precision 0.667, "
        "recall 0.400, 2 shared word(s)); turn 2: ROUGE-1 F1 0.333 (precision 0.333, recall 0.333, 1 shared word(s)) "
        "(score 0.417 < threshold 0.5)")


def test_the_explanation_says_which_turn_which_call_expected_against_actual():
    exact = one({"type": "tool_trajectory_avg_score"})
    assert exact.explanation == (
        "mean 0.5 over 2 turn(s) (scores by turn 1: 1, 2: 0); turn 2: call 1: expected get_weather(city='London'), "
        "the agent called get_time(city='London') at message 6 (EXACT) (score 0.5 < threshold 1)")
    in_order = one({"type": "tool_trajectory_avg_score", "match_type": "IN_ORDER"})
    assert in_order.evidence["turns"][1]["explanation"] == (
        "expected call 2 of 2, get_time(city='London'), was not made after get_weather(city='London') at message 8 "
        "(IN_ORDER): it was called earlier, get_time(city='London') at message 6, out of the expected order")
    wrong = recording(("weather in Paris?", [("get_weather", {"city": "paris"})], "ok"),
                      ("and London?", [("get_weather", {"city": "London"}), ("get_time", {"city": "London"})], "ok"))
    result = one({"type": "tool_trajectory_avg_score", "match_type": "ANY_ORDER"}, wrong)
    assert result.evidence["turns"][0]["explanation"] == (
        "expected call 1 of 1, get_weather(city='Paris'), was not made (ANY_ORDER): closest: get_weather(city='paris') "
        "at message 2: `city` (exact, decided by exact): expected 'Paris', got 'paris'")


# ---------------------------------------------------------------- arguments compare as ADK's dict ==

@pytest.mark.parametrize("actual, same", [
    ({"sides": 6}, True), ({"sides": 6.0}, True),  # 6 == 6.0 in Python, as in ADK
    ({"sides": "6"}, False), ({"sides": 6, "colour": "red"}, False), ({}, False), ({"Sides": 6}, False),
])
def test_arguments_are_equal_as_python_dicts_are(actual, same):
    case_turns = [("roll", [("roll_die", {"sides": 6})], "done")]
    result = one({"type": "tool_trajectory_avg_score"}, recording(("roll", [("roll_die", actual)], "done")),
                 turns=case_turns)
    assert result.score == (1.0 if same else 0.0)


def test_arg_matching_relaxes_one_argument_and_the_others_stay_exact():
    relaxed = {"user": "weather in Paris?", "calls": [{"tool_name": "get_weather", "args": {"city": "Paris", "day": "Mon"},
                                                       "arg_matching": {"city": {"one_of": ["Paris", "paris"]}}}],
               "response": "x"}
    said = lambda city, day: recording(("weather in Paris?", [("get_weather", {"city": city, "day": day})], "x"))  # noqa: E731
    check = {"type": "tool_trajectory_avg_score"}
    assert one(check, said("paris", "Mon"), turns=[relaxed]).score == 1.0
    assert one(check, said("paris", "mon"), turns=[relaxed]).score == 0.0  # `day` is still exact
    allow = {**relaxed, "calls": [{**relaxed["calls"][0], "extra_args": "allow"}]}
    extra = recording(("weather in Paris?", [("get_weather", {"city": "Paris", "day": "Mon", "unit": "C"})], "x"))
    assert (one(check, extra, turns=[relaxed]).score, one(check, extra, turns=[allow]).score) == (0.0, 1.0)


def test_ignore_args_compares_tool_names_only():
    result = one({"type": "tool_trajectory_avg_score", "match_type": "ANY_ORDER", "ignore_args": True},
                 recording(PARIS[:2] + ("x",), ("and London?", [("get_time", {}), ("get_weather", {"city": "Rome"})], "y")))
    assert result.score == 1.0


# ---------------------------------------------------------------- turns, pairing, thresholds

def test_the_mean_reaching_the_threshold_passes():
    assert one({"type": "tool_trajectory_avg_score", "threshold": 0.5}).status == "passed"  # 0.5 >= 0.5
    assert one({"type": "tool_trajectory_avg_score", "threshold": 0.51}).status == "failed"


def test_a_turn_the_conversation_never_reached_scores_zero_and_an_extra_turn_is_unscored():
    short = ACTUAL[:4]  # the agent stopped after turn 1
    result = one({"type": "tool_trajectory_avg_score"}, short)
    assert (per_turn(result), result.score) == ([1.0, 0.0], 0.5)
    assert result.evidence["turns"][1]["explanation"] == \
        "the conversation ended before this turn (no such user message was recorded)"
    longer = ACTUAL + [{"role": "user", "content": "and Rome?"}, {"role": "assistant", "content": "Sunny."}]
    result = one({"type": "tool_trajectory_avg_score"}, longer)
    assert (result.status, result.explanation) == ("unscored", "unscored: the conversation has 3 user turns but the case "
                                                   "expects 2: turns are compared by position, so the recording must "
                                                   "hold exactly the case's turns")


def test_the_answer_of_a_turn_is_its_last_message_without_a_call():
    messages = [{"role": "user", "content": "Paris?"},
                {"role": "assistant", "content": "It is sunny in Paris.", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "log", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    [invocation] = split_invocations(build_trajectory(messages))
    assert (invocation.final_text, invocation.answer, [c.name for c in invocation.tool_calls]) == (None, "", ["log"])
    result = one({"type": "response_match_score"}, messages, turns=[("Paris?", [("log", {})], "It is sunny in Paris.")])
    assert (result.score, result.evidence["turns"][0]["explanation"]) == (0.0, "the agent gave no final answer")


def test_a_turn_without_calls_or_response_is_left_out_of_that_mean():
    turns = [{"user": "weather in Paris?", "response": "It is sunny in Paris."}, turn(*LONDON)]
    result = one({"type": "tool_trajectory_avg_score", "match_type": "ANY_ORDER"}, turns=turns)
    assert (per_turn(result), result.score, result.status) == ([None, 1.0], 1.0, "passed")  # not 1 of 2 turns
    assert result.explanation == ("mean 1 over 1 turn(s) (scores by turn 1: -, 2: 1); turn 1: no `calls` in this turn "
                                  "(score 1 >= threshold 1)")


def test_turns_without_checks_get_adks_defaults_for_what_they_state():
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "turns": [turn(*PARIS), turn(*LONDON)]})
    assert case.checks == [{"type": "tool_trajectory_avg_score", "threshold": 1.0},
                           {"type": "response_match_score", "threshold": 0.8}]
    only_answers = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "turns": [{"user": "hi", "response": "hello"}]})
    assert only_answers.checks == [{"type": "response_match_score", "threshold": 0.8}]


def test_a_case_without_turns_is_one_turn_over_its_goals_or_expected_calls():
    goals = [{"type": "tool_call", "name": "w", "tool_name": "get_weather", "args": {"city": "Paris"}},
             {"type": "text", "name": "say", "response": "Rain in London."}]
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "goal_details": goals, "checks": [
        {"type": "tool_trajectory_avg_score", "match_type": "IN_ORDER"}, {"type": "response_match_score"},
        {"type": "tool_trajectory_avg_score", "name": "exact", "expected": [{"tool_name": "get_weather", "args": {"city": "Paris"}}]}]})
    in_order, rouge, exact = run_checks(case, build_trajectory(ACTUAL))
    assert (in_order.status, in_order.score) == ("passed", 1.0)
    assert (rouge.status, rouge.score) == ("passed", 1.0)  # the last answer of the conversation
    assert (exact.status, exact.explanation) == ("failed", "call 2: the agent made an extra call, get_time(city='London') "
                                                 "at message 6; no more calls were expected (EXACT) (score 0 < threshold 1)")
    nothing = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "checks": [{"type": "tool_trajectory_avg_score"}]})
    [result] = run_checks(nothing, build_trajectory(ACTUAL))
    assert (result.status, result.explanation) == ("unscored", "unscored: the conversation: nothing to compare: the case "
                                                   "has no turns, no `expected:` and no tool goals")


def test_match_type_belongs_to_the_adk_name_and_match_to_evalrun_s():
    from runner.checks.run import check_problem

    assert check_problem({"type": "tool_trajectory_avg_score", "match": "exact"}) == (
        "tool_trajectory_avg_score takes ADK's `match_type` (EXACT, IN_ORDER, ANY_ORDER), not `match`")
    assert "`match_type` and `ignore_args` are options of tool_trajectory_avg_score" in check_problem(
        {"type": "trajectory", "match_type": "EXACT"})


# ---------------------------------------------------------------- per-turn checks, judged criteria, efficiency

def test_a_turns_own_checks_read_that_turn_alone():
    turns = [turn(*PARIS, checks=[{"type": "contains", "value": "Paris"}]),
             turn(*LONDON, checks=[{"type": "contains", "value": "Paris", "name": "says Paris"},
                                   {"type": "trajectory", "match": "any_order"}])]
    found = results([{"type": "response_match_score", "threshold": 0.1}], turns=turns)
    assert [(r.name, r.status) for r in found] == [("response_match_score", "passed"), ("turn 1: contains", "passed"),
                                                   ("turn 2: says Paris", "failed"), ("turn 2: trajectory", "passed")]
    assert found[3].explanation.startswith("2 of 2 expected call(s) matched among 3 call(s) (any_order)")


def test_a_turns_check_fails_when_the_conversation_never_got_there():
    turns = [turn(*PARIS), turn(*LONDON, checks=[{"type": "contains", "value": "London"}])]
    [_, check] = results([{"type": "response_match_score", "threshold": 0.1}], ACTUAL[:4], turns=turns)
    assert (check.name, check.status, check.explanation) == (
        "turn 2: contains", "failed", "the conversation ended before this turn (no such user message was recorded)")


def test_a_judged_criterion_without_a_judge_is_unscored_never_passed():
    result = one({"type": "final_response_match_v2", "threshold": 0.5, "judge_model": "gpt-4o-mini"})
    assert result.status == "unscored"
    assert result.explanation == (
        "unscored: final_response_match_v2 needs a judge model: the eval config names 'gpt-4o-mini'; declare `judge:` "
        "in evalrun.yaml (with enable_fuzzy_matching on), whose api_base and key will serve that model")
    # evalrun's own name for the same family: unscored too, without a judge (nothing passes unchecked)
    assert one({"type": "semantic_match", "reference": "x"}).status == "unscored"


def test_final_response_match_v2_is_the_share_of_turns_most_samples_call_a_match():
    from tests.fakes.openai_server import FakeOpenAI
    from tests.helpers.checks_graded import data_of
    from tests.helpers.checks_judged import judge_cascade, token_of

    answers = iter([True, False, True, False, False, True])  # turn 1: 2 of 3 yes; turn 2: 1 of 3
    with FakeOpenAI() as fake:
        fake.default = lambda request: json.dumps({"reason": "r", "match": next(answers), "score": 1.0,
                                                   "verdict_id": token_of(request)})
        case = make_case([{"type": "final_response_match_v2", "samples": 3}])
        # samples are independent only above temperature 0 (at 0 one request stands for all)
        [result] = run_checks(case, build_trajectory(ACTUAL), judge_cascade(fake, temperature=0.7))
        sent = [data_of(request) for request in fake.requests]
    assert (per_turn(result), result.score, result.threshold, result.status) == ([1.0, 0.0], 0.5, 1.0, "failed")
    assert sent[0] == {"expected": "It is sunny in Paris.", "actual": "Paris: sunny, 21C."}
    assert sent[3] == {"expected": "London is rainy.", "actual": "Rain in London."}


def test_efficiency_metrics_are_reported_and_never_gate():
    [count] = results([{"type": "tool_call_count_v1"}])
    assert (count.status, count.gate, count.score, count.explanation, count.evidence["value"]) == (
        "passed", False, None, "informational: 2 tool call(s) per turn (by turn: 1, 3)", 2.0)
    from runner.checks.run import check_problem

    assert "gate" in check_problem({"type": "tool_call_count_v1", "gate": True})


# ---------------------------------------------------------------- ADK's tokenizer and matching, against oracles

@pytest.mark.parametrize("text, tokens", [  # printed by ADK 2.13's _UnicodeAwareTokenizer(use_stemmer=True)
    ("The weather in New York is currently sunny with a temperature of 72°F.",
     ["the", "weather", "in", "new", "york", "is", "current", "sunni", "with", "a", "temperatur", "of", "72", "f"]),
    ("café naïve 東京タワー ½ ＡＢＣ x²", ["café", "naïve", "東", "京", "タ", "ワ", "ー", "1", "2", "abc", "x2"]),
    ("สวัสดีครับ", ["ส", "วั", "ส", "ดี", "ค", "รั", "บ"]),
    ("Größe der Straße, ﬁne-tuned", ["größe", "der", "straße", "fine", "tune"]),
    ("São Paulo: 30°C — Ελλάδα 한국어", ["são", "paulo", "30", "c", "ελλάδα", "한", "국", "어"]),
])
def test_rouge_tokens_are_adks(text, tokens):
    assert adk_rouge_tokens(text) == tokens


def _adk_match(mode: str, actual: list, expected: list) -> bool:
    """ADK 2.13's three matchers, as trajectory_evaluator.py writes them (the oracle)."""
    if mode == "EXACT":
        return len(actual) == len(expected) and all(a == e for a, e in zip(actual, expected, strict=True))
    if not expected:
        return True
    if not actual:
        return False
    if mode == "IN_ORDER":
        it = iter(expected)
        current = next(it)
        for a in actual:
            if a == current:
                current = next(it, None)
                if current is None:
                    return True
        return False
    pool = list(actual)
    for e in expected:
        if e not in pool:
            return False
        pool.remove(e)
    return True


CALLS = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from([{}, {"x": 1}, {"x": 1.0}, {"x": "1"}])),
                 max_size=4)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(CALLS, CALLS), min_size=1, max_size=3), st.sampled_from(["EXACT", "IN_ORDER", "ANY_ORDER"]))
def test_turn_scores_and_mean_match_adks_algorithms(turn_calls, mode):
    turns = [{"user": f"u{i}", "calls": [{"tool_name": n, "args": a} for n, a in expected], "response": ""}
             for i, (expected, _) in enumerate(turn_calls)]
    messages = recording(*[(f"u{i}", actual, None) for i, (_, actual) in enumerate(turn_calls)])
    result = one({"type": "tool_trajectory_avg_score", "match_type": mode}, messages, turns=turns)
    if mode != "EXACT" and not any(expected for expected, _ in turn_calls):  # ADK passes whatever the agent did
        assert (result.status, result.score) == ("unscored", None)  # compares nothing: never a pass
        return
    expected_scores = [1.0 if _adk_match(mode, actual, expected) else 0.0 for expected, actual in turn_calls]
    assert per_turn(result) == expected_scores
    assert result.score == sum(expected_scores) / len(expected_scores)


def test_rubric_criteria_grade_each_turn_with_the_case_and_turn_rubrics_of_their_type():
    from tests.fakes.openai_server import FakeOpenAI
    from tests.helpers.checks_graded import data_of
    from tests.helpers.checks_judged import judge_cascade, token_of

    def grade(request):
        items = data_of(request)["rubric"]
        score = 5 if "Paris" in data_of(request)["final_answer"] else 1
        return json.dumps({"reason": "r", "items": [{"name": i["name"], "reason": "", "score": score} for i in items],
                           "verdict_id": token_of(request)})

    rubric = {"id": "names_city", "text": "The answer names the city.", "type": "FINAL_RESPONSE_QUALITY"}
    tool_rubric = {"id": "one_call", "text": "One call per city.", "type": "TOOL_USE_QUALITY"}
    turns = [turn(*PARIS, rubrics=[{"id": "short", "text": "One sentence."}]), turn(*LONDON)]
    with FakeOpenAI() as fake:
        fake.default = grade
        case = make_case([{"type": "rubric_based_final_response_quality_v1"}], turns=turns, rubrics=[rubric, tool_rubric])
        [result] = run_checks(case, build_trajectory(ACTUAL), judge_cascade(fake))
        sent = [[i["name"] for i in data_of(r)["rubric"]] for r in fake.requests]
    assert sent == [["names_city", "short"], ["names_city"]]  # TOOL_USE_QUALITY is the other criterion's
    assert (per_turn(result), result.score, result.status) == ([1.0, 0.0], 0.5, "passed")  # threshold 0.5 (3/5)


def test_the_simulated_user_criterion_checks_the_first_message_and_asks_the_judge_for_the_others():
    from tests.fakes.openai_server import FakeOpenAI
    from tests.helpers.checks_judged import judge_cascade, token_of

    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "starting_sentence": "weather in Paris?",
                                "story": "Ask about Paris, then London.",
                                "checks": [{"type": "per_turn_user_simulator_quality_v1", "threshold": 0.5}]})
    with FakeOpenAI() as fake:
        fake.default = lambda r: json.dumps({"reason": "off plan", "match": False, "score": 0.0,
                                             "verdict_id": token_of(r)})
        [result] = run_checks(case, build_trajectory(ACTUAL), judge_cascade(fake))
        statement = fake.requests[0]["messages"][0]["content"]
    assert (result.score, result.status, result.evidence["scores"]) == (0.5, "passed", [1.0, 0.0])
    assert "The user's message number 2 follows this conversation plan" in statement
    assert "Ask about Paris, then London." in statement
    [without] = run_checks(case, build_trajectory(ACTUAL))
    assert without.status == "unscored" and without.explanation.startswith(
        "unscored: per_turn_user_simulator_quality_v1 needs a judge model: no judge model is configured")


def test_a_tie_among_samples_makes_the_turn_invalid():
    from tests.fakes.openai_server import FakeOpenAI
    from tests.helpers.checks_judged import judge_cascade, token_of

    answers = iter([True, False])
    with FakeOpenAI() as fake:
        fake.default = lambda r: json.dumps({"reason": "r", "match": next(answers), "score": 0.5,
                                             "verdict_id": token_of(r)})
        case = make_case([{"type": "final_response_match_v2", "samples": 2, "threshold": 0.5}], turns=[PARIS])
        [result] = run_checks(case, build_trajectory(ACTUAL[:4]), judge_cascade(fake, temperature=0.7))
    assert (per_turn(result), result.status) == ([0.0], "failed")
