"""`evalrun convert`: the YAML of an ADK or Agentflow eval set loads into the same cases as the original, so
both give the same verdicts on the same conversations (tests/bench/adk_agreement.py also checks it on ADK's own
files against ADK's evaluators)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from runner.authoring.convert import dump_yaml, suite_of
from runner.suite.load import load_file, load_suites
from tests.helpers.adk_files import HOME, OLD_TURNS, eval_case, eval_set, invocation, recording
from tests.helpers.cli_helpers import run_cli, write_json
from tests.helpers.shared_data import require_shared


def same_cases(original: list, converted: list) -> None:
    dump = lambda cases: [c.model_dump(exclude={"source"}) for c in cases]  # noqa: E731
    assert dump(converted) == dump(original)


def eval_files(root: Path) -> None:
    write_json(root / "home" / "simple_multi_turn_conversation.test.json", HOME)
    write_json(root / "dice" / "simple.test.json", OLD_TURNS)
    write_json(root / "dice" / "test_config.json", {"criteria": {"tool_trajectory_avg_score": {
        "threshold": 0.5, "match_type": "IN_ORDER"}, "response_match_score": 0.2}})
    write_json(root / "more" / "simple.test.json", OLD_TURNS[:1])
    write_json(root / "sessions" / "shop.evalset.json", [
        {"name": "shop", "data": OLD_TURNS, "initial_session": {"app_name": "shop", "user_id": "u", "state": {"k": 1}}}])
    write_json(root / "scenario" / "plan.test.json", eval_set(
        {"eval_id": "plan", "conversation_scenario": {"starting_prompt": "Hi", "conversation_plan": "Ask twice."}}))


def test_convert_writes_yaml_that_loads_into_the_same_cases(tmp_path, monkeypatch):
    eval_files(tmp_path / "adk")
    shutil.copytree(require_shared("agentflow"), tmp_path / "adk" / "agentflow")
    done = run_cli("convert", "adk", "-o", "yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "wrote yaml/agentflow/weather_agent.yaml: 2 case(s) from adk/agentflow/weather_agent.evalset.json with "
        "adk/agentflow/eval_config.json",
        "wrote yaml/dice/simple.yaml: 1 case(s) from adk/dice/simple.test.json with adk/dice/test_config.json",
        "wrote yaml/home/simple_multi_turn_conversation.yaml: 1 case(s) from "
        "adk/home/simple_multi_turn_conversation.test.json with ADK's default criteria (no eval config)",
        "wrote yaml/more/simple.yaml: 1 case(s) from adk/more/simple.test.json with ADK's default criteria (no eval "
        "config)",
        "wrote yaml/scenario/plan.yaml: 1 case(s) from adk/scenario/plan.test.json with ADK's default criteria (no "
        "eval config)",
        "wrote yaml/sessions/shop.yaml: 1 case(s) from adk/sessions/shop.evalset.json with ADK's default criteria "
        "(no eval config)"]
    monkeypatch.chdir(tmp_path)  # restores the working folder after, whatever it was
    original, converted = load_suites([Path("adk")]), load_suites([Path("yaml")])
    assert original.diagnostics == converted.diagnostics == []
    # ids made from file names are qualified by folder in both (dice/simple, more/simple)
    assert [c.id for c in converted.cases] == [c.id for c in original.cases]
    same_cases(original.cases, converted.cases)
    text = (tmp_path / "yaml" / "dice" / "simple.yaml").read_text()
    assert text.splitlines()[0] == ("# Converted by `evalrun convert` from adk/dice/simple.test.json (ADK old-format test "
                                    "file) with adk/dice/test_config.json.")
    assert "\nturns:\n- user: Hi, roll a die with 16 sides\n  calls:\n  - tool_name: roll_die\n    args:\n      sides: 16\n" \
        in text
    assert text.endswith("checks:\n- type: tool_trajectory_avg_score\n  threshold: 0.5\n  match_type: IN_ORDER\n"
                         "- type: response_match_score\n  threshold: 0.2\n")


def test_the_yaml_gives_the_originals_verdicts_on_the_same_recordings(tmp_path):
    eval_files(tmp_path / "adk")
    assert run_cli("convert", "adk", "-o", "yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "evalrun.yaml").write_text("enable_fuzzy_matching: false\nembeddings: {enabled: false}\n")
    home = [("Turn off device_2 in the Bedroom.", [("set_device_info", {"location": "Bedroom", "device_id": "device_2",
                                                                         "status": "off"})], "device_2 is off."),
            ("Turn on device_2 in the Bedroom.", [("set_device_info", {"location": "Bedroom", "status": "ON",
                                                                        "device_id": "device_2"})],
             "I have set the device_2 status to on.")]
    dice = [("Hi, roll a die with 16 sides", [("roll_die", {"sides": 16})], "I rolled 13."),
            ("Is it prime?", [("check_prime", {"nums": [13]}), ("log", {})], "Yes.")]
    for folder in ("replay/home", "replay/dice", "replay/more", "replay"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    write_json(tmp_path / "replay" / "simple_multi_turn_conversation.json", recording(*home))
    write_json(tmp_path / "replay" / "dice" / "simple.json", recording(*dice))
    write_json(tmp_path / "replay" / "more" / "simple.json", recording(dice[0]))
    write_json(tmp_path / "replay" / "shop.json", recording(*dice))
    write_json(tmp_path / "replay" / "plan.json", recording(("Hi", [], "Hello"), ("Again", [], "Hello")))
    reports = {}
    for source in ("adk", "yaml"):
        done = run_cli("run", source, "--replay", "replay", "--output-dir", f"out-{source}", cwd=tmp_path)
        assert done.returncode == 3, done.stdout + done.stderr  # the scenario case has nothing to compare: unscored
        report = json.loads((tmp_path / f"out-{source}" / "report.json").read_text())
        reports[source] = {c["id"]: (c["status"], [(k["type"], k["status"], k["score"]) for k in c["checks"]])
                           for c in report["cases"]}
    assert reports["yaml"] == reports["adk"]
    assert reports["adk"]["simple_multi_turn_conversation"] == ("failed", [
        ("tool_trajectory_avg_score", "failed", 0.5), ("response_match_score", "failed", 0.7307692307692308)])
    assert reports["adk"]["dice/simple"][0] == "passed"  # IN_ORDER 0.5, ROUGE 0.2 from its test_config.json


def test_convert_never_overwrites_and_reports_what_it_cannot_read(tmp_path):
    write_json(tmp_path / "a" / "roll.test.json", eval_set(eval_case("roll", invocation("i1", "Roll", [], "4"))))
    write_json(tmp_path / "a" / "bad.evalset.json", {"eval_set_id": "x", "eval_cases": [{"conversation": []}]})
    (tmp_path / "a" / "suite.yaml").write_text("forbid_extra_calls: true\n")
    assert run_cli("convert", "a/roll.test.json", cwd=tmp_path).returncode == 0
    assert (tmp_path / "a" / "roll.yaml").is_file()  # beside the original by default
    done = run_cli("convert", "a/roll.test.json", "a/bad.evalset.json", "a/suite.yaml", "nowhere", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        "a/bad.evalset.json:4:3: error: eval_cases[0] is missing the required key 'eval_id'",
        "a/roll.yaml:1:1: error: exists already; evalrun convert never overwrites a file",
        "a/suite.yaml:1:1: error: not an ADK or Agentflow eval set; evalrun convert reads those (and leaves its own "
        "YAML as it is)",
        "nowhere:1:1: error: no such file or folder"]
    assert run_cli("convert", "a", "--eval-config", "missing.json", cwd=tmp_path).returncode == 4


# ---------------------------------------------------------------- any eval set survives the round trip

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
VALUE = st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | TEXT |
                     st.sampled_from(["yes", "no", "2025-01-05", "0123", "1e3", "~", "null", "<IGNORE>", "a: b"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6)
CALL = st.tuples(st.text(min_size=1, max_size=12), st.dictionaries(TEXT, VALUE, max_size=3))
INVOCATION = st.tuples(TEXT.filter(lambda t: t.strip() != ""), st.lists(CALL, max_size=3), st.none() | TEXT)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(INVOCATION, min_size=1, max_size=3), min_size=1, max_size=3))
def test_any_eval_set_converts_to_the_same_cases(tmp_path, conversations):
    cases = [eval_case(f"case-{i}", *[invocation(f"i{j}", user, calls, answer) for j, (user, calls, answer) in
                                      enumerate(turns)]) for i, turns in enumerate(conversations)]
    source = write_json(tmp_path / "set.evalset.json", eval_set(*cases))
    original, diagnostics, _ = load_file(source)
    assert [d for d in diagnostics if d.severity == "error"] == []
    target = tmp_path / "set.yaml"
    target.write_text(dump_yaml(suite_of(original, {c.id for c in original}, stem="set")), encoding="utf-8")
    converted, diagnostics, _ = load_file(target)
    assert diagnostics == []
    same_cases(original, converted)


@pytest.mark.skipif(not os.environ.get("EVALRUN_ADK_FILES"), reason="set EVALRUN_ADK_FILES to folders of ADK's "
                    "eval files (os.pathsep-separated) to convert them all; tests/bench/adk_agreement.py does it too")
def test_adks_own_files_convert_to_the_same_cases(tmp_path):
    for i, folder in enumerate(os.environ["EVALRUN_ADK_FILES"].split(os.pathsep)):
        done = run_cli("convert", folder, "-o", str(tmp_path / str(i)), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        original, converted = load_suites([Path(folder)]), load_suites([tmp_path / str(i)])
        assert [c.id for c in converted.cases] == [c.id for c in original.cases]
        same_cases(original.cases, converted.cases)
