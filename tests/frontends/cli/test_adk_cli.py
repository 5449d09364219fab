"""ADK and Agentflow eval sets through the real CLI: validated and run as they are, live against the bundled
weather agent (with a judge on the fake OpenAI-compatible server) and replayed; --eval-config."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fakes.llm import token_of, verdict
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.adk_files import HOME, OLD_TURNS, recording
from tests.helpers.cli_helpers import REPO, run_cli, write, write_json
from tests.helpers.shared_data import require_shared

WEATHER_AGENT = REPO / "suites" / "adk_weather" / "weather_agent.py"


def report_of(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def weather_project(tmp_path: Path, judge: str = "") -> None:
    """A project with the bundled weather agent and one more agent (so the eval set's app_name must choose)."""
    (tmp_path / "weather_agents").mkdir()
    shutil.copy(WEATHER_AGENT, tmp_path / "weather_agents" / "weather_agent.py")
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        cache_dir: cache
        {judge}
        agents:
          other_agent: {{type: replay}}
          weather_agent: {{type: python, entrypoint: "weather_agents.weather_agent:respond"}}
        """)


def test_the_agentflow_eval_set_validates_as_it_is():
    done = run_cli("validate", str(require_shared("agentflow")), cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    # valid; with no evalrun.yaml here, no judge would decide its judged criterion: said before a run
    assert [line.split(": warning: ")[1].split(":")[0] for line in done.stdout.splitlines()] == [
        "case 'weather_lookup_simple'", "case 'weather_lookup_multi_city'"]
    assert all("check 'final_response_match_v2' needs a judge model" in line for line in done.stdout.splitlines())
    assert done.stderr.splitlines()[-1] == "0 error(s), 2 warning(s)"


def test_the_agentflow_eval_set_runs_live_with_the_weather_agent_and_a_judge(tmp_path):
    agentflow = require_shared("agentflow")
    with FakeOpenAI() as fake:
        fake.default = lambda request: verdict(token_of(request), True, "same facts", 1.0)
        weather_project(tmp_path, f"judge: {{model: openai/fake-judge, api_base: {fake.base_url}, max_retries: 0}}")
        done = run_cli("run", str(agentflow), "-c", "evalrun.yaml", "--output-dir", "out", cwd=tmp_path)
        models = [r["model"] for r in fake.requests]
    assert done.returncode == 0, done.stdout + done.stderr
    # eval_config.json's judge_model on evalrun.yaml's judge settings (its api_base); its num_samples asks once
    # per turn, as every judged check does at the judge's temperature 0 (N answers would be one answer repeated)
    assert models == ["gpt-4o-mini"] * 2
    report = report_of(tmp_path / "out")
    assert [(c["id"], c["status"]) for c in report["cases"]] == [("weather_lookup_simple", "passed"),
                                                                 ("weather_lookup_multi_city", "passed")]
    multi = report["cases"][1]
    assert [(c["type"], c["score"]) for c in multi["checks"]] == [
        ("tool_trajectory_avg_score", 1.0), ("response_match_score", 1.0), ("final_response_match_v2", 1.0)]
    assert multi["transcript"][0] == {"role": "user", "content": "Compare the weather in Tokyo and London"}


def test_without_a_judge_the_judged_criterion_leaves_the_case_unscored(tmp_path):
    weather_project(tmp_path)
    done = run_cli("run", str(require_shared("agentflow")), "-c", "evalrun.yaml", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert ("  unscored: check 'final_response_match_v2': unscored: final_response_match_v2 needs a judge model: the "
            "eval config names 'gpt-4o-mini'; declare `judge:` in evalrun.yaml (with enable_fuzzy_matching on), whose "
            "api_base and key will serve that model") in done.stdout.splitlines()
    assert {c["status"] for c in report_of(tmp_path / "out")["cases"]} == {"unscored"}


def test_the_bundled_adk_example_passes_without_any_key(tmp_path):
    done = run_cli("run", "suites/adk_weather", "--output-dir", str(tmp_path / "out"), cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = report_of(tmp_path / "out")["cases"]
    assert [(c["id"], c["status"]) for c in cases] == [("paris_then_london", "passed"), ("compare_in_celsius", "passed")]
    assert cases[1]["transcript"][-1] == {"role": "assistant",
                                          "content": "Tokyo is sunny at 24°C while New York is sunny at 22°C."}


def test_adk_files_replayed_turn_by_turn_with_explanations(tmp_path):
    write_json(tmp_path / "eval" / "home" / "simple_multi_turn_conversation.test.json", HOME)
    write_json(tmp_path / "eval" / "dice" / "simple.test.json", OLD_TURNS)
    write_json(tmp_path / "eval" / "dice" / "test_config.json", {"criteria": {"tool_trajectory_avg_score": 1.0}})
    write_json(tmp_path / "replay" / "simple_multi_turn_conversation.json", recording(
        ("Turn off device_2 in the Bedroom.", [("set_device_info", {"location": "Bedroom", "device_id": "device_2",
                                                                     "status": "OFF"})], "I have set the device_2 status to off."),
        ("Turn on device_2 in the Bedroom.", [("set_device_info", {"location": "bedroom", "status": "ON",
                                                                    "device_id": "device_2"})], "Done: device_2 is on.")))
    write_json(tmp_path / "replay" / "simple.json", recording(
        ("Hi, roll a die with 16 sides", [("roll_die", {"sides": 16})], "13"),
        ("Is it prime?", [("check_prime", {"nums": [13]})], "Yes")))
    done = run_cli("run", "eval", "--replay", "replay", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "PASS  simple [replayed (--replay)]  completion 1.00; checks 1/1" in lines
    assert ("  - check 'tool_trajectory_avg_score': mean 0.5 over 2 turn(s) (scores by turn 1: 1, 2: 0); turn 2 "
            "(c82d54d0): call 1: "
            "expected set_device_info(location='Bedroom', status='ON', device_id='device_2'), the agent called "
            "set_device_info(location='bedroom', status='ON', device_id='device_2') at message 6: `location` (exact, "
            "decided by exact): expected 'Bedroom', got 'bedroom' (EXACT) (score 0.5 < threshold 1)") in lines
    assert ("  - check 'response_match_score': mean 0.714 over 2 turn(s) (scores by turn 1: 1, 2: 0.429); turn 2 "
            "(c82d54d0): ROUGE-1 F1 0.429 (precision 0.600, recall 0.333, 3 shared word(s)) (score 0.714 < threshold "
            "0.8)") in lines


def test_eval_config_names_the_config_for_run_and_validate(tmp_path):
    write_json(tmp_path / "eval" / "home.test.json", HOME)
    write_json(tmp_path / "loose.json", {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5,
                                                                                    "match_type": "ANY_ORDER"}}})
    write_json(tmp_path / "replay" / "simple_multi_turn_conversation.json", recording(
        ("Turn off device_2 in the Bedroom.", [("log", {}), ("set_device_info", {
            "location": "Bedroom", "device_id": "device_2", "status": "OFF"})], "ok"),
        ("Turn on device_2 in the Bedroom.", [], "ok")))
    plain = run_cli("run", "eval", "--replay", "replay", "--output-dir", "a", cwd=tmp_path)
    loose = run_cli("run", "eval", "--replay", "replay", "--output-dir", "b", "--eval-config", "loose.json", cwd=tmp_path)
    assert (plain.returncode, loose.returncode) == (1, 0)
    [check] = report_of(tmp_path / "b")["cases"][0]["checks"]
    assert (check["type"], check["score"], check["threshold"]) == ("tool_trajectory_avg_score", 0.5, 0.5)
    missing = run_cli("run", "eval", "--eval-config", "nope.json", cwd=tmp_path)
    assert (missing.returncode, missing.stderr.splitlines()[-1]) == (4, "evalrun: --eval-config nope.json: no such file")
    write_json(tmp_path / "bad.json", {"criteria": {"nonsense": 1}})
    bad = run_cli("validate", "eval", "--eval-config", "bad.json", cwd=tmp_path)
    assert bad.returncode == 4 and bad.stdout.startswith("bad.json:3:3: error: unknown criterion 'nonsense' (known: ")
    assert run_cli("validate", "eval", "--eval-config", "loose.json", cwd=tmp_path).returncode == 0


def test_the_schema_command_prints_the_adk_schemas(tmp_path):
    for kind in ("adk-evalset", "adk-eval-config"):
        done = run_cli("schema", kind, cwd=tmp_path)
        assert done.stdout == (REPO / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8")
