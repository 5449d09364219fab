"""Google ADK's and Agentflow's eval files, read as they are (runner/suite/formats): which shape, which cases,
which checks from which config, and every problem with its line and column."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.suite.load import load_file, load_suites
from tests.helpers.adk_files import HOME, OLD_TURNS, content, eval_case, eval_set, invocation
from tests.helpers.shared_data import require_shared


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def put(path: str, data) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return target


def texts(diagnostics) -> list[str]:
    return [str(d) for d in diagnostics]


def turn_data(case) -> list[dict]:
    return [t.model_dump(exclude_none=True, exclude_defaults=True) for t in case.turns]


# ---------------------------------------------------------------- the four shapes

def test_an_adk_eval_set_becomes_cases_with_turns(workdir):
    put("home/simple.test.json", HOME)
    cases, diagnostics, is_suite = load_file(Path("home/simple.test.json"))
    assert (diagnostics, is_suite) == ([], True)
    [case] = cases
    # ADK wrote the file path as the eval_id: the case is named like its file, as a YAML case would be
    assert (case.id, str(case.source)) == ("simple_multi_turn_conversation", "home/simple.test.json:6:5")
    assert turn_data(case) == [
        {"id": "9f51a1ac", "user": "Turn off device_2 in the Bedroom.",
         "calls": [{"tool_name": "set_device_info", "args": {"location": "Bedroom", "device_id": "device_2",
                                                             "status": "OFF"}}],
         "response": "I have set the device_2 status to off."},
        {"id": "c82d54d0", "user": "Turn on device_2 in the Bedroom.",
         "calls": [{"tool_name": "set_device_info", "args": {"location": "Bedroom", "status": "ON",
                                                             "device_id": "device_2"}}],
         "response": "I have set the device_2 status to on."}]
    # the user's turns are the scripted user's messages; ADK's defaults are the checks (no test_config.json)
    assert (case.starting_sentence, case.user_prompts) == ("Turn off device_2 in the Bedroom.",
                                                           ["Turn on device_2 in the Bedroom."])
    assert case.checks == [{"type": "tool_trajectory_avg_score", "threshold": 1.0},
                           {"type": "response_match_score", "threshold": 0.8}]


def test_a_missing_final_response_is_an_empty_answer_and_no_tool_uses_expects_no_call(workdir):
    put("d/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Can you roll a die with 6 sides", [], None))))
    [case], diagnostics, _ = load_file(Path("d/roll.test.json"))
    assert diagnostics == []
    assert (case.turns[0].calls, case.turns[0].response) == ([], "")  # ADK's ROUGE reads it as "", scoring 0


def test_the_old_list_format_is_one_case_named_like_its_file(workdir):
    put("eval/data/simple.test.json", OLD_TURNS)
    [case], diagnostics, _ = load_file(Path("eval/data/simple.test.json"))
    assert diagnostics == []
    assert (case.id, str(case.source)) == ("simple", "eval/data/simple.test.json:1:1")
    assert turn_data(case) == [
        {"user": "Hi, roll a die with 16 sides", "calls": [{"tool_name": "roll_die", "args": {"sides": 16}}],
         "response": "I rolled a 16 sided die and got 13."},
        {"user": "Is it prime?", "calls": [{"tool_name": "check_prime", "args": {"nums": [13]}}], "response": "",
         "intermediate_responses": [{"author": "prime_agent", "text": "Checking."}]}]


def test_the_old_session_list_gives_one_case_per_session(workdir):
    sessions = [{"name": "shopping", "data": OLD_TURNS[:1], "initial_session": {
                    "app_name": "shop", "user_id": "u1", "state": {"cart": []}}},
                {"name": "second", "data": OLD_TURNS[1:], "initial_state": {"session": {}}}]
    put("s/eval_data1.evalset.json", sessions)
    cases, diagnostics, _ = load_file(Path("s/eval_data1.evalset.json"))
    assert [c.id for c in cases] == ["shopping", "second"]
    assert cases[0].session_input.model_dump() == {"app_name": "shop", "user_id": "u1", "session_id": None,
                                                   "state": {"cart": []}}
    assert cases[0].runtime_context == {"cart": []}  # the initial state is the agent's runtime context
    assert texts(diagnostics) == [
        "s/eval_data1.evalset.json:49:5: warning: ADK reads a session's state from `initial_session` {app_name, "
        "user_id, state}, not `initial_state`: this one is not used (by ADK either)"]


def test_invocation_events_give_the_calls_of_every_event_in_order(workdir):
    events = {"invocation_events": [
        {"author": "root", "content": {"role": "model", "parts": [
            {"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "weather"}}}]}},
        {"author": "weather", "content": {"role": "model", "parts": [{"text": "Looking it up."}, {
            "function_call": {"name": "get_weather", "args": {"city": "Paris"}}}]}}]}
    data = eval_set(eval_case("e1", {"user_content": content("user", "Paris?"), "intermediate_data": events,
                                     "final_response": {"role": "model", "parts": [{"text": "Sunny."}, {"text": "Warm."}]}}))
    put("e/events.evalset.json", data)
    [case], diagnostics, _ = load_file(Path("e/events.evalset.json"))
    assert diagnostics == []
    assert turn_data(case) == [{"user": "Paris?", "calls": [
        {"tool_name": "transfer_to_agent", "args": {"agent_name": "weather"}},
        {"tool_name": "get_weather", "args": {"city": "Paris"}}], "response": "Sunny.\nWarm.",
        "intermediate_responses": [{"author": "weather", "text": "Looking it up."}]}]


def test_the_agentflow_eval_set_and_its_eval_config_read_as_they_are():
    folder = require_shared("agentflow")
    loaded = load_suites([folder])
    assert [d for d in loaded.diagnostics if d.severity == "error"] == []
    assert [c.id for c in loaded.cases] == ["weather_lookup_simple", "weather_lookup_multi_city"]
    simple, multi = loaded.cases
    assert turn_data(multi) == [{"id": "inv_002", "user": "Compare the weather in Tokyo and London", "calls": [
        {"tool_name": "get_weather", "args": {"location": "Tokyo"}},
        {"tool_name": "get_weather", "args": {"location": "London"}}],
        "response": "Tokyo is sunny at 75°F while London is cloudy at 55°F."}]
    assert simple.session_input.model_dump(exclude_none=True) == {"app_name": "weather_agent", "user_id": "test_user",
                                                                  "state": {}}
    assert simple.description == "Basic functionality tests for the weather agent"
    # eval_config.json beside it: ADK's criterion names, Agentflow's flat judge_model and num_samples
    assert simple.checks == [
        {"type": "tool_trajectory_avg_score", "threshold": 1.0, "match_type": "IN_ORDER"},
        {"type": "response_match_score", "threshold": 0.7},
        {"type": "final_response_match_v2", "threshold": 0.8, "judge_model": "gpt-4o-mini", "samples": 3}]


def test_a_conversation_scenario_is_a_simulated_user_with_a_plan(workdir):
    scenario = {"eval_id": "book", "conversation_scenario": {"starting_prompt": "I want a flight.",
                                                            "conversation_plan": "Ask for Paris; take the cheapest."}}
    put("sc/scenario.test.json", eval_set(scenario))
    put("sc/test_config.json", {"criteria": {"hallucinations_v1": {"threshold": 0.8}},
                                "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 10}})
    [case], diagnostics, _ = load_file(Path("sc/scenario.test.json"))
    assert diagnostics == []
    assert (case.starting_sentence, case.story, case.max_user_turns, case.turns) == (
        "I want a flight.", "Ask for Paris; take the cheapest.", 10, None)
    assert case.checks == [{"type": "hallucinations_v1", "threshold": 0.8}]
    put("sc/test_config.json", {"criteria": {}, "user_simulator_config": {"max_allowed_invocations": -1}})
    assert load_file(Path("sc/scenario.test.json"))[0][0].max_user_turns is None  # -1: no limit
    put("sc/test_config.json", {"criteria": {}})
    assert load_file(Path("sc/scenario.test.json"))[0][0].max_user_turns == 20  # ADK's default


def test_final_session_state_and_rubrics_are_kept(workdir):
    rubric = {"rubric_id": "short", "rubric_content": {"text_property": "The answer is one sentence."},
              "type": "FINAL_RESPONSE_QUALITY"}
    turn = {**invocation("i1", "Hi", [], "Hello."), "rubrics": [rubric]}
    put("r/r.evalset.json", eval_set(eval_case("r1", turn, final_session_state={"greeted": True},
                                               rubrics=[{**rubric, "rubric_id": "polite"}])))
    [case], diagnostics, _ = load_file(Path("r/r.evalset.json"))
    assert diagnostics == []
    assert case.final_session_state == {"greeted": True}
    assert [r.model_dump(exclude_none=True) for r in case.rubrics] == [
        {"id": "polite", "text": "The answer is one sentence.", "type": "FINAL_RESPONSE_QUALITY"}]
    assert case.turns[0].rubrics[0].id == "short"


# ---------------------------------------------------------------- recognised by shape, broken files are errors

def test_eval_files_in_a_folder_are_recognised_and_their_configs_are_not_passed_over(workdir):
    put("adk/a/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [("roll_die", {"sides": 6})], "4"))))
    put("adk/a/test_config.json", {"criteria": {"tool_trajectory_avg_score": 0.5}})
    put("adk/b/simple.test.json", OLD_TURNS)
    put("adk/c/simple.test.json", OLD_TURNS)  # the same file name: the ids get their folder, as YAML ones do
    loaded = load_suites([Path("adk")])
    assert loaded.diagnostics == []  # nothing passed over: test_config.json is the eval sets' config
    assert sorted(c.id for c in loaded.cases) == ["b/simple", "c/simple", "roll"]
    roll = next(c for c in loaded.cases if c.id == "roll")
    assert roll.checks == [{"type": "tool_trajectory_avg_score", "threshold": 0.5}]


def test_a_broken_eval_file_is_an_error_with_its_position_never_passed_over(workdir):
    put("f/syntax.test.json", '{"eval_set_id": "x",\n "eval_cases": [}\n')
    put("f/shape.evalset.json", {"cases": []})
    bad_invocation = invocation("i1", "Hi", [], "Hello")
    bad_invocation["final_respons"] = None
    bad_invocation["intermediate_data"]["tool_uses"][:0] = [{"tool_name": "t", "tool_input": {}}]
    put("f/keys.evalset.json", eval_set(eval_case("k", bad_invocation, notes="kept"),
                                        {"eval_id": "both", "conversation": [], "conversation_scenario": {
                                            "starting_prompt": "a", "conversation_plan": "b"}}))
    loaded = load_suites([Path("f")])
    assert loaded.cases == []
    assert texts(loaded.diagnostics) == [
        # inside an invocation ADK refuses unknown keys: errors; on an eval case it keeps them: a warning
        "f/keys.evalset.json:45:15: error: eval_cases[0].conversation[0].intermediate_data.tool_uses[0] is missing "
        "the required key 'name'",
        "f/keys.evalset.json:46:17: error: unknown key 'tool_name' in "
        "eval_cases[0].conversation[0].intermediate_data.tool_uses[0] (did you mean 'name'?)",
        "f/keys.evalset.json:47:17: error: unknown key 'tool_input' in "
        "eval_cases[0].conversation[0].intermediate_data.tool_uses[0]",
        "f/keys.evalset.json:53:11: error: unknown key 'final_respons' in eval_cases[0].conversation[0] (did you mean "
        "'final_response'?)",
        "f/keys.evalset.json:58:7: warning: 'notes' is not a key of an eval case; ADK keeps it unread, evalrun too",
        "f/keys.evalset.json:60:5: error: eval case 'both' needs exactly one of `conversation` and "
        "`conversation_scenario`; it has both",
        "f/shape.evalset.json:1:1: error: shape.evalset.json is not an eval set: ADK and Agentflow eval sets are an "
        "object with `eval_set_id` and `eval_cases`, or ADK's older list of turns ({query, expected_tool_use, "
        "reference}) or of sessions ({name, data})",
        "f/syntax.test.json:2:17: error: invalid JSON: Expecting value",
    ]


def test_an_agentflow_invocation_may_not_mix_in_adk_keys_and_the_user_must_say_something(workdir):
    mixed = {"user_content": {"role": "user", "content": ""}, "expected_final_response": {"role": "assistant",
             "content": "x"}, "final_response": content("model", "y")}
    put("m/mixed.evalset.json", eval_set(eval_case("m", mixed)))
    _, diagnostics, _ = load_file(Path("m/mixed.evalset.json"))
    assert texts(diagnostics) == [
        "m/mixed.evalset.json:9:9: error: this invocation mixes ADK's keys (final_response, intermediate_data) with "
        "Agentflow's (expected_tool_trajectory, expected_final_response): use one or the other",
        "m/mixed.evalset.json:10:27: error: the user's message has no text: evalrun plays the user's text, turn by turn",
    ]


# ---------------------------------------------------------------- eval configs

def test_unknown_and_unsupported_criteria_are_errors_that_list_the_known_ones(workdir):
    put("c/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [], "4"))))
    put("c/test_config.json", """{
  "criteria": {
    "tool_trajectory_avg_scor": 1.0,
    "response_evaluation_score": 3,
    "tool_trajectory_avg_score": {"match_type": "IN_ORDER"},
    "response_match_score": {"threshold": 0.5, "match_type": "EXACT"},
    "tool_call_count_v1": 2
  },
  "custom_metrics": {"mine": {"code_config": {"name": "pkg.metric"}}}
}
""")
    cases, diagnostics, _ = load_file(Path("c/roll.test.json"))
    known = ("tool_trajectory_avg_score, response_match_score, final_response_match_v2, "
             "rubric_based_final_response_quality_v1, rubric_based_tool_use_quality_v1, hallucinations_v1, safety_v1, "
             "per_turn_user_simulator_quality_v1, tool_call_count_v1, inference_call_count_v1, token_usage_v1, "
             "invocation_duration_v1")
    assert cases == []
    assert texts(diagnostics) == [
        f"c/test_config.json:3:5: error: unknown criterion 'tool_trajectory_avg_scor' (did you mean "
        f"'tool_trajectory_avg_score'?) (known: {known})",
        f"c/test_config.json:4:5: error: ADK runs 'response_evaluation_score' on Google's Vertex AI service; evalrun "
        f"has no equivalent (known: {known})",
        "c/test_config.json:5:34: error: criteria.tool_trajectory_avg_score is missing the required key 'threshold'",
        "c/test_config.json:6:48: warning: criterion response_match_score does not read 'match_type'; ADK keeps the "
        "key and ignores it, and so does evalrun",
        "c/test_config.json:7:5: warning: tool_call_count_v1 is informational: evalrun reports it and never gates on "
        "it, so its threshold is not used (ADK refuses a threshold for it)",
        "c/test_config.json:9:21: error: custom_metrics (Python metric functions) are not run by evalrun; convert the "
        "eval set (`evalrun convert`) and write a `python` check instead",
    ]


def test_match_types_are_read_as_adk_reads_them_and_a_wrong_one_is_an_error(workdir):
    put("c/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [], "4"))))
    put("c/test_config.json", {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": " any-order",
                                                                          "ignore_args": True}}})
    [case], _, _ = load_file(Path("c/roll.test.json"))
    assert case.checks == [{"type": "tool_trajectory_avg_score", "threshold": 1.0, "match_type": "ANY_ORDER",
                            "ignore_args": True}]
    put("c/test_config.json", {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "FUZZY"}}})
    cases, diagnostics, _ = load_file(Path("c/roll.test.json"))
    assert (cases, texts(diagnostics)) == ([], [
        "c/test_config.json:5:21: error: match_type 'FUZZY' is not one of EXACT, IN_ORDER, ANY_ORDER"])


def test_judge_options_nested_as_adk_or_flat_as_agentflow(workdir):
    put("c/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [], "4"))))
    put("c/test_config.json", {"criteria": {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"judge_model": "gpt-4o", "num_samples": 5}},
        "hallucinations_v1": {"threshold": 0.9, "judge_model": "gpt-4o-mini", "num_samples": 16}}})
    cases, diagnostics, _ = load_file(Path("c/roll.test.json"))
    assert cases == []
    assert texts(diagnostics) == [
        "c/test_config.json:10:26: error: criterion hallucinations_v1: samples: Input should be less than or equal to 15"]
    put("c/test_config.json", {"criteria": {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"judge_model": "gpt-4o", "num_samples": 5}}}})
    [case], _, _ = load_file(Path("c/roll.test.json"))
    assert case.checks == [{"type": "final_response_match_v2", "threshold": 0.5, "judge_model": "gpt-4o", "samples": 5}]


def test_an_eval_config_named_explicitly_wins_and_two_beside_a_file_are_ambiguous(workdir):
    put("c/roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [], "4"))))
    put("c/test_config.json", {"criteria": {"response_match_score": 0.1}})
    put("c/eval_config.json", {"criteria": {"response_match_score": 0.2}})
    cases, diagnostics, _ = load_file(Path("c/roll.test.json"))
    assert (cases, texts(diagnostics)) == ([], [
        "c/roll.test.json:1:1: error: two eval configs apply to this eval set: c/test_config.json and "
        "c/eval_config.json; remove one, or name the one to use with --eval-config"])
    put("other.json", {"criteria": {"response_match_score": 0.3}})
    [case], diagnostics, _ = load_file(Path("c/roll.test.json"), eval_config=Path("other.json"))
    assert (case.checks, diagnostics) == ([{"type": "response_match_score", "threshold": 0.3}], [])


def test_an_eval_config_named_on_the_command_line_is_checked_and_holds_no_cases(workdir):
    put("test_config.json", {"criteria": {"response_match_score": "high"}})
    cases, diagnostics, is_suite = load_file(Path("test_config.json"))
    assert (cases, is_suite) == ([], False)
    assert texts(diagnostics) == [
        "test_config.json:3:29: error: criteria.response_match_score must be a number or a mapping, got the text "
        "'high'"]


def test_an_old_format_turn_without_its_query_is_reported_where_it_is(workdir):
    put("o/dice.test.json", [OLD_TURNS[0], {"reference": "no question"}])
    cases, diagnostics, _ = load_file(Path("o/dice.test.json"))
    assert (cases, texts(diagnostics)) == ([], ["o/dice.test.json:14:3: error: [1] is missing the required key 'query'"])


def test_only_json_files_are_taken_by_their_adk_shape(workdir):
    # a YAML file shaped like an eval set is evalrun's own: its keys are errors, not an eval set
    put("y/suite.yaml", "eval_set_id: x\neval_cases: []\n")
    _, diagnostics, _ = load_file(Path("y/suite.yaml"))
    assert texts(diagnostics)[0] == "y/suite.yaml:1:1: error: unknown key 'eval_set_id' in the top level"
