"""Agentflow's own eval files (as 10xscale-agentflow's to_file writes them) through the real CLI: read with
Agentflow's meaning, scored as Agentflow's AgentEvaluator scores them, its config's problems at line:col.

The expected verdicts and scores in FIXED were obtained once from the library itself (10xscale-agentflow 0.10.1,
its AgentEvaluator on the same files and actuals, through tests/bench/agentflow_library.py); this test runs
without the library. tests/bench/bench_agentflow_agreement.py compares many more, with the library as the oracle.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.agentflow_files import (
    call,
    criterion,
    eval_case,
    eval_config,
    eval_set,
    invocation,
    recording,
    user_texts,
)
from tests.helpers.cli_helpers import run_cli, write, write_json

W = ("get_weather", {"city": "Paris"})
F = ("to_fahrenheit", {"celsius": 20})

CASES = [
    # calls moved between turns: pooled, EXACT sees [W, F] either way
    (eval_case("moved", invocation("Weather in Paris?", [call(*W)], "It is sunny in Paris.", invocation_id="i1"),
               invocation("In Fahrenheit?", [call(*F)], None, invocation_id="i2")),
     [{"tool_calls": [], "final_response": "Let me check.", "node_visits": ["__start__", "MAIN"]},
      {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}},
                      {"name": "to_fahrenheit", "args": {"celsius": 20.0}}],
       "final_response": "Sunny in Paris, 68 F.", "node_visits": ["__start__", "MAIN", "MAIN"]}]),
    # trailing extra calls cost nothing in EXACT; True == 1 under check_args
    (eval_case("extra", invocation("Weather?", [call("get_weather", {"n": 1})], "Sunny.", invocation_id="i1")),
     [{"tool_calls": [{"name": "get_weather", "args": {"n": True}}, {"name": "search", "args": {}}],
       "final_response": "Sunny!", "node_visits": ["__start__", "MAIN"]}]),
    # "1" is not 1: the argument differs under check_args
    (eval_case("text_arg", invocation("Weather?", [call("get_weather", {"n": 1})], "Sunny.", invocation_id="i1")),
     [{"tool_calls": [{"name": "get_weather", "args": {"n": "1"}}], "final_response": "Sunny.",
       "node_visits": ["__start__", "MAIN"]}]),
    # no expected answer: rouge_match 0.5 for any answer; the last turn's answer, not an earlier one
    (eval_case("no_answer", invocation("Hi", [], None, invocation_id="i1"), invocation("Bye", [], None,
                                                                                       invocation_id="i2")),
     [{"tool_calls": [], "final_response": "Hello there", "node_visits": ["__start__", "MAIN"]},
      {"tool_calls": [], "final_response": "", "node_visits": ["__start__", "MAIN"]}]),
    # content blocks: every block's text, one space apart
    (eval_case("blocks", invocation([{"type": "text", "text": "Weather"}, {"type": "text", "text": "in Oslo?"}],
                                    [call("get_weather", {"city": "Oslo"}), call(*F)],
                                    [{"type": "text", "text": "Rain"}, {"type": "thinking", "text": "in Oslo"}],
                                    nodes=("MAIN", "MAIN"), invocation_id="i1")),
     [{"tool_calls": [{"name": "to_fahrenheit", "args": {"celsius": 20}},
                      {"name": "get_weather", "args": {"city": "Oslo"}}],
       "final_response": "Rain in Oslo today", "node_visits": ["__start__", "MAIN", "MAIN"]}]),
]
CONFIG = eval_config(tool_name_match=criterion(0.8), trajectory=criterion(0.5, check_args=True),
                     node_order=criterion(0.6, match_type="ANY_ORDER"), rouge_match=criterion(0.5),
                     contains_keywords=criterion(0.5, keywords=["paris", "Sunny"]),
                     llm_judge=criterion(0.8, enabled=False))
# (case passed, {criterion: score}) from the library's AgentEvaluator on CASES under CONFIG
FIXED = {
    "moved": (True, {"tool_name_match": 1.0, "trajectory": 1.0, "node_order": 1.0, "rouge_match": 0.6,
                     "contains_keywords": 1.0}),
    "extra": (True, {"tool_name_match": 1.0, "trajectory": 1.0, "node_order": 1.0, "rouge_match": 1.0,
                      "contains_keywords": 0.5}),
    "text_arg": (False, {"tool_name_match": 1.0, "trajectory": 0.0, "node_order": 1.0, "rouge_match": 1.0,
                         "contains_keywords": 0.5}),
    "no_answer": (False, {"tool_name_match": 1.0, "trajectory": 1.0, "node_order": 1.0, "rouge_match": 1.0,
                          "contains_keywords": 0.0}),
    "blocks": (False, {"tool_name_match": 1.0, "trajectory": 0.0, "node_order": 1.0, "rouge_match": 0.8571428571428571,
                       "contains_keywords": 0.0}),
}


def project(tmp_path: Path, config: dict, cases=CASES) -> Path:
    folder = tmp_path / "evals"
    write_json(folder / "weather.evalset.json", eval_set("weather", *[case for case, _ in cases]))
    write_json(folder / "eval_config.json", config)
    for case, actual in cases:
        write_json(tmp_path / "replay" / f"{case['eval_id']}.json", recording(user_texts(case), actual))
    write(tmp_path / "evalrun.yaml", "enable_fuzzy_matching: false\nembeddings: {enabled: false}\ncache_dir: cache\n")
    return folder


def run(tmp_path: Path, *extra: str):
    done = run_cli("run", "evals", "--replay", "replay", "--config", "evalrun.yaml", "--output-dir", "out", "--quiet",
                   *extra, cwd=tmp_path)
    report = json.loads((tmp_path / "out" / "report.json").read_text()) if (tmp_path / "out" / "report.json").exists() \
        else None
    return done, report


def test_verdicts_and_scores_are_agentflows_own(tmp_path):
    project(tmp_path, CONFIG)
    done, report = run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    cases = {case["id"]: case for case in report["cases"]}
    for eval_id, (passed, scores) in FIXED.items():
        case = cases[eval_id]
        assert case["status"] == ("passed" if passed else "failed"), (eval_id, case)
        assert {c["name"]: c["score"] for c in case["checks"]} == scores, eval_id  # the same floats
        assert [c["name"] for c in case["checks"]] == list(scores)  # Agentflow's run order; llm_judge is off


def test_explanations_name_the_semantics_that_applied(tmp_path):
    project(tmp_path, eval_config(trajectory=criterion(0.8)), cases=[(
        eval_case("three", invocation("a", [call("A")], None, invocation_id="i1"),
                  invocation("b", [call("B")], None, invocation_id="i2"),
                  invocation("c", [call("C")], "done", invocation_id="i3")),
        [{"tool_calls": [{"name": "A", "args": {}}], "final_response": "x", "node_visits": []},
         {"tool_calls": [{"name": "X", "args": {}}], "final_response": "y", "node_visits": []},
         {"tool_calls": [{"name": "C", "args": {}}, {"name": "D", "args": {}}], "final_response": "done",
          "node_visits": []}])])
    _done, report = run(tmp_path)
    check = report["cases"][0]["checks"][0]
    assert check["status"] == "failed" and check["score"] == 2 / 3
    assert check["explanation"] == (
        "Agentflow trajectory, EXACT, pooled over 3 turns, names only (check_args false): 2 of 3 expected calls at "
        "their position; not matched: B(); 1 call(s) after the expected ones cost nothing (Agentflow's code, although "
        "its docs say EXACT allows no extras) (score 0.667 < threshold 0.8)")


def test_a_config_that_checks_nothing_leaves_the_cases_unscored_never_passed(tmp_path):
    for config in (eval_config(), {"criteria": {}}, {"criteria": {"trajectory": None, "rouge_match": {"enabled": False}}}):
        project(tmp_path, config)
        done, report = run(tmp_path)
        assert done.returncode == 3, done.stdout
        assert {case["status"] for case in report["cases"]} == {"unscored"}
        assert "the eval config (evals/eval_config.json) checks nothing" in report["cases"][0]["unscored_reason"]


def test_node_order_without_node_visits_is_unscored(tmp_path):
    cases = [(case, [{k: v for k, v in turn.items() if k != "node_visits"} for turn in actual])
             for case, actual in CASES[:1]]
    project(tmp_path, eval_config(node_order=criterion(0.5)), cases=cases)
    (tmp_path / "replay" / "moved.json").write_text(json.dumps({"messages": recording(
        user_texts(cases[0][0]), cases[0][1])["messages"]}))
    _done, report = run(tmp_path)
    check = report["cases"][0]["checks"][0]
    assert check["status"] == "unscored" and "only an Agentflow agent (`type: agentflow`) records" in check["explanation"]


@pytest.mark.parametrize("criteria, message", [
    ({"trajectroy": {}}, "unknown criterion 'trajectroy' (did you mean 'trajectory'?) (known: tool_name_match, "
                         "trajectory, node_order, response_match, rouge_match, contains_keywords, llm_judge, "
                         "rubric_based, factual_accuracy, hallucination, safety, simulation_goals)"),
    ({"trajectory": {}, "tool_trajectory_avg_score": {"threshold": 1}},
     "unknown criterion 'tool_trajectory_avg_score' (ADK's and Agentflow 0.6's name; since 0.8 Agentflow calls it "
     "'trajectory')"),
    ({"rouge_match": {"threshold": 1.5}}, "rouge_match.threshold 1.5 is outside 0..1: a score is 0..1, so it would "
                                          "never pass (Agentflow does not check it)"),
    ({"trajectory": {"match_type": "in_order"}}, "trajectory.match_type 'in_order' is not one of EXACT, IN_ORDER, "
                                                 "ANY_ORDER (did you mean 'IN_ORDER'?)"),
    ({"rouge_match": 0.7}, "criterion rouge_match must be an object of options, e.g. {\"threshold\": 0.8}"),
])
def test_config_problems_are_errors_with_their_position(tmp_path, criteria, message):
    project(tmp_path, {"criteria": criteria, "parallel": False})
    done = run_cli("validate", "evals", cwd=tmp_path)
    assert done.returncode == 4, done.stdout
    assert "evals/eval_config.json:" in done.stdout and message in done.stdout, done.stdout


def test_lax_values_are_read_as_agentflow_reads_them_with_a_warning(tmp_path):
    project(tmp_path, {"criteria": {"trajectory": {"threshold": "0.5", "check_args": "yes", "ignore_args": True}}})
    done = run_cli("validate", "evals", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "'0.5' is read as 0.5, as Agentflow reads it; write a number" in done.stdout
    assert "'yes' is read as True, as Agentflow reads it; write true or false" in done.stdout
    assert "criterion trajectory has no option 'ignore_args'; Agentflow ignores it, evalrun too" in done.stdout


def test_a_config_with_adks_names_keeps_adks_meaning(tmp_path):
    project(tmp_path, {"criteria": {"tool_trajectory_avg_score": 1.0}})
    _done, report = run(tmp_path)
    assert {c["type"] for case in report["cases"] for c in case["checks"]} == {"tool_trajectory_avg_score"}


def test_the_schema_checks_an_agentflow_config_against_agentflows_model():
    from runner.suite.schema_check import validator

    check = validator("adk-eval-config")
    assert not list(check.iter_errors(CONFIG))
    assert list(check.iter_errors(eval_config(rouge_match=criterion(1.5))))
    assert not list(check.iter_errors({"criteria": {"tool_trajectory_avg_score": 1.0}}))



def test_convert_both_ways_keeps_the_verdicts_and_names_what_agentflow_cannot_carry(tmp_path):
    project(tmp_path, CONFIG)
    done = run_cli("convert", "evals", "-o", "yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    suite = (tmp_path / "yaml" / "weather.yaml").read_text()
    assert "type: agentflow_trajectory" in suite and "check_args: true" in suite
    # back to Agentflow's files, with an evalrun check and an argument mode it cannot carry
    edited = suite.replace("  checks:\n", "  checks:\n  - {type: contains, value: Paris}\n", 1).replace(
        "      args:\n        city: Paris\n", "      args:\n        city: Paris\n      arg_matching: {city: fuzzy}\n", 1)
    (tmp_path / "yaml" / "weather.yaml").write_text(edited)
    done = run_cli("convert", "yaml/weather.yaml", "--to", "agentflow", "-o", "back", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "case 'moved': check 'contains' is evalrun's own: Agentflow's config cannot carry it" in done.stderr
    assert "case 'moved': turn 1: the argument modes of get_weather are not carried" in done.stderr
    assert "wrote back/weather/weather.evalset.json and its eval_config.json: 5 case(s)" in done.stdout
    written = json.loads((tmp_path / "back" / "weather" / "eval_config.json").read_text())
    assert written == CONFIG | {"criteria": {**CONFIG["criteria"], "llm_judge": None}}  # off stays off
    back = tmp_path / "back" / "weather"
    for case, actual in CASES:
        write_json(tmp_path / "replay" / f"{case['eval_id']}.json", recording(user_texts(case), actual))
    done = run_cli("run", str(back), "--replay", "replay", "--config", "evalrun.yaml", "--output-dir", "out2",
                   "--quiet", cwd=tmp_path)
    report = json.loads((tmp_path / "out2" / "report.json").read_text())
    assert {c["id"]: (c["status"] == "passed", {k["name"]: k["score"] for k in c["checks"]})
            for c in report["cases"]} == FIXED


def test_an_agentflow_config_beside_an_adk_eval_set_says_which_is_which(tmp_path):
    from tests.helpers.adk_files import HOME

    write_json(tmp_path / "evals" / "home.evalset.json", HOME)
    write_json(tmp_path / "evals" / "eval_config.json", eval_config(trajectory=criterion(1.0)))
    done = run_cli("validate", "evals", cwd=tmp_path)
    assert done.returncode == 4
    assert "'trajectory' is an Agentflow criterion, but this eval set is ADK's: an Agentflow eval config applies to " \
           "Agentflow eval sets (invocations with expected_tool_trajectory); use ADK's criteria (known: " \
           "tool_trajectory_avg_score," in done.stdout, done.stdout
