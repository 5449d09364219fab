"""`evalrun PATH` end to end: the real CLI in a subprocess on files in a temp dir."""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

import jsonschema
import pytest

from tests.fakes.llm import token_of
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, tool_call_messages, write, write_json
from tests.helpers.cli_run import NO_EMBEDDINGS, lookup_suite, report_of


def test_passing_run_exits_0_and_writes_a_schema_valid_report(tmp_path):
    lookup_suite(tmp_path)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("PASS  lookup")
    assert "1 passed, 0 failed" in result.stdout
    report = report_of(tmp_path)
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    case = report["cases"][0]
    assert (case["status"], case["source"], case["metrics"]["journey_success"]) == ("passed", "suites/lookup.yaml:1:1", True)
    assert case["transcript"][1]["tool_calls"][0]["function"]["name"] == "get_assignment_id"
    assert report["summary"]["exit_code"] == 0
    assert report["config"]["config_file"].endswith("evalrun.yaml")


def test_default_output_dir_and_latest_pointer(tmp_path):
    lookup_suite(tmp_path)
    assert run_cli("suites", cwd=tmp_path).returncode == 0
    latest = tmp_path / ".evalrun" / "reports" / "latest"
    assert (latest / "report.json").is_file()


def test_failed_case_exits_1_and_explains(tmp_path):
    lookup_suite(tmp_path, username="nken")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert ("  - goal 'get_id': called get_assignment_id 1 time(s), never with matching arguments; closest at "
            "message 2: `username` (strict, decided by exact): expected 'nken', got 'nwaters'") in result.stdout.splitlines()
    assert report_of(tmp_path)["cases"][0]["goals"][0]["status"] == "wrong_args"


def test_missing_transcript_is_an_error_case_and_others_still_run(tmp_path):
    lookup_suite(tmp_path)
    write(tmp_path / "suites" / "broken.yaml", """
        goal_details: []
        forbid_extra_calls: true
        transcript: t/nowhere.json
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3
    cases = {c["id"]: c for c in report_of(tmp_path)["cases"]}
    assert cases["lookup"]["status"] == "passed"
    assert cases["broken"]["status"] == "error"
    assert cases["broken"]["error"] == "transcript file not found: suites/t/nowhere.json"


def test_invalid_suite_exits_4_prints_diagnostics_and_runs_nothing(tmp_path):
    lookup_suite(tmp_path)
    write(tmp_path / "suites" / "bad.yaml", """
        goal_details:
          - type: tool_call
            name: x
            tool_name: y
            arg_match: {a: strict}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert ("suites/bad.yaml:5:5: error: unknown key 'arg_match' in goal_details[0] (did you mean 'arg_matching'?)"
            in result.stderr.splitlines())
    assert not (tmp_path / "out").exists()


def test_no_cases_collected_exits_5(tmp_path):
    lookup_suite(tmp_path)
    result = run_cli("suites", "-k", "nothing-matches", cwd=tmp_path)
    assert result.returncode == 5
    assert "no cases collected" in result.stderr


def test_filter_and_tag_select_cases(tmp_path):
    lookup_suite(tmp_path, case_id="alpha")
    lookup_suite(tmp_path, case_id="beta", extra="skip: not today")
    result = run_cli("suites", "-k", "alp*", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [c["id"] for c in report_of(tmp_path)["cases"]] == ["alpha"]
    result = run_cli("suites", "--tag", "hr", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0
    statuses = {c["id"]: c["status"] for c in report_of(tmp_path)["cases"]}
    assert statuses == {"alpha": "passed", "beta": "skipped"}
    assert run_cli("suites", "--tag", "finance", cwd=tmp_path).returncode == 5


def test_replay_dir_scores_each_case_on_its_id(tmp_path):
    lookup_suite(tmp_path)
    write_json(tmp_path / "replays" / "lookup.json",
               {"messages": tool_call_messages("get_assignment_id", {"username": "someone"})})
    result = run_cli("suites", "--replay", "replays", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert report_of(tmp_path)["cases"][0]["transcript_path"] == "replays/lookup.json"
    assert run_cli("suites", "--replay", "nowhere", cwd=tmp_path).returncode == 4


def test_min_pass_rate_lets_a_run_with_failures_exit_0(tmp_path):
    lookup_suite(tmp_path, case_id="good")
    lookup_suite(tmp_path, case_id="bad", username="nken")
    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS + "min_pass_rate: 0.5\n")
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS + "min_pass_rate: 0.75\n")
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 1


def test_invalid_config_is_reported_with_position(tmp_path):
    lookup_suite(tmp_path)
    write(tmp_path / "evalrun.yaml", "similarity_treshold: 0.7\n")
    result = run_cli("suites", cwd=tmp_path)
    assert result.returncode == 4
    assert ("evalrun.yaml:1:1: error: unknown key 'similarity_treshold' in the top level "
            "(did you mean 'similarity_threshold'?)") in result.stderr


def test_replay_run_imports_no_heavy_library(tmp_path):
    lookup_suite(tmp_path)
    code = ("import sys; from pathlib import Path; import runner.frontends.cli as c; code = c.main(['suites', '--output-dir', 'out', '-q']);"
            "print(sorted(m for m in ('litellm', 'torch', 'sentence_transformers') if m in sys.modules), code)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=cli_env(), capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "[] 0", result.stderr


def fuzzy_suite(tmp_path, base_url):
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        cache_dir: cache
        judge:
          model: openai/fake-judge
          api_base: {base_url}
          timeout_s: 2
          max_retries: 1
        """)
    write(tmp_path / "suites" / "fuzzy.yaml", """
        goal_details:
          - type: tool_call
            name: search
            tool_name: search_flights
            args: {destination: the capital of France}
            arg_matching: {destination: fuzzy}
        transcript: t.json
        """)
    write_json(tmp_path / "suites" / "t.json", tool_call_messages("search_flights", {"destination": "Paris"}))


def test_llm_judge_decides_fuzzy_arguments_over_real_http(tmp_path):
    with FakeOpenAI() as fake:
        fake.default = lambda request: json.dumps({"match": True, "score": 0.95, "verdict_id": token_of(request),
                                                   "reason": "Paris is the capital of France"})
        fuzzy_suite(tmp_path, fake.base_url)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(fake.requests) == 1
        prompt = fake.requests[0]["messages"][-1]["content"]
        assert "the capital of France" in prompt and "Paris" in prompt
    verdict = report_of(tmp_path)["cases"][0]["goals"][0]["attempts"][0]["arguments"][0]
    assert (verdict["decided_by"], verdict["score"], verdict["reason"]) == ("llm", 0.95, "Paris is the capital of France")
    # The second run is answered from the disk cache: no server needed.
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0


def test_a_failed_judge_is_marked_on_the_verdict_and_the_run_exits_3(tmp_path):
    with FakeOpenAI() as fake:
        fake.script(Reply(status=500, body={"error": {"message": "boom"}}), Reply(status=500, body={"error": {"message": "boom"}}))
        fuzzy_suite(tmp_path, fake.base_url)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3  # the outcome rests on rapidfuzz, which stood in for a judge that failed
    lines = result.stdout.splitlines()
    assert lines[0].endswith("[1 verdict(s) without the judge]")
    assert any(line.startswith("  ! without the judge: goal 'search', argument `destination`: decided by rapidfuzz "
                               "because the judge failed: HTTP 500 from http://127.0.0.1:") for line in lines)
    assert ("1 case(s) rest on verdicts reached without the judge, which failed (set judge.offline_fallback: true "
            "to accept them): exit 3") in lines
    case = report_of(tmp_path)["cases"][0]
    verdict = case["goals"][0]["attempts"][0]["arguments"][0]
    assert verdict["decided_by"] == "rapidfuzz" and verdict["judge_failure"].startswith("HTTP 500 from")
    assert case["judge_fallbacks"][0].startswith("goal 'search', argument `destination`: decided by rapidfuzz")
    assert report_of(tmp_path)["summary"]["judge_fallback_cases"] == 1


def test_offline_fallback_lets_the_offline_stages_stand_in_for_the_judge(tmp_path):
    with FakeOpenAI() as fake:
        fake.script(Reply(status=500), Reply(status=500))
        fuzzy_suite(tmp_path, fake.base_url)
        with (tmp_path / "evalrun.yaml").open("a") as config:
            config.write("  offline_fallback: true\n")
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout  # rapidfuzz: "Paris" is not like "the capital of France"
    assert report_of(tmp_path)["cases"][0]["judge_fallbacks"]  # still marked, in the report and on the console
    assert "[1 verdict(s) without the judge]" in result.stdout


@pytest.mark.slow
def test_bundled_examples_pass_and_failing_examples_fail(tmp_path):
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = report_of(tmp_path)["summary"]
    assert summary["failed"] == 0 and summary["passed"] >= 4
    decided = {g["name"]: (g.get("text_decision") or {}).get("decided_by") for c in report_of(tmp_path)["cases"]
               for g in c["goals"]}
    # the real offline model decides the reference answers; where the embeddings extra cannot be installed (no torch
    # wheel for Python 3.10/3.13 here: .ci/other-pythons) the cascade's next step does, and says so
    embeddings = importlib.util.find_spec("sentence_transformers") is not None
    assert decided["summarize"] == ("embedding" if embeddings else "rapidfuzz")
    failing = run_cli("suites/failing", "--output-dir", "out", cwd=tmp_path)
    assert failing.returncode == 1
    assert "0 passed, 7 failed" in failing.stdout


def test_exit_code_precedence():
    from runner.results.summary import Tally
    from runner.results.verdict import decide

    def code(min_pass_rate=None, interrupted=False, fallback_allowed=False, fallbacks=0, **counts):
        tally = Tally(["a"])
        tally.counts.update(counts)
        tally.judge_fallback_cases = fallbacks
        verdict = decide(tally, min_pass_rate=min_pass_rate, judge_may_fall_back=fallback_allowed,
                         stop_reason="SIGINT" if interrupted else None, interrupted=interrupted)
        assert verdict.ok == (verdict.exit_code == 0)
        return verdict.exit_code, verdict.reason

    counts = {"passed": 3, "failed": 1, "error": 1}
    assert code(interrupted=True, **counts)[0] == 2
    assert code(**counts) == (3, "1 case(s) ended in error: exit 3")
    assert code(**{**counts, "error": 0, "unscored": 2})[0] == 3
    assert code(**{**counts, "error": 0}) == (1, "1 case(s) failed: exit 1")
    assert code(0.75, **{**counts, "error": 0}) == (0, "min_pass_rate 0.75 reached (0.75) although 1 case(s) failed: exit 0")
    assert code(0.8, **{**counts, "error": 0}) == (1, "1 case(s) failed; pass rate 0.75 is below min_pass_rate 0.80: exit 1")
    # every case skipped: nothing was checked, which must not read as a green run (exit 5, as "nothing ran")
    assert code(0.9, skipped=2) == (5, "every case was skipped (2): nothing was checked: exit 5")
    assert code(passed=1, skipped=2) == (0, "all cases that ran passed (2 skipped): exit 0")
    assert code(fallbacks=1, passed=1)[0] == 3
    assert code(fallbacks=1, passed=1, fallback_allowed=True) == (0, "all cases passed: exit 0")


@pytest.mark.process  # a real SIGINT
def test_ctrl_c_keeps_the_finished_cases_and_exits_2(tmp_path):
    import signal

    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS)
    for n in range(400):
        write_json(tmp_path / "suites" / f"c{n:03d}.json", {"goal_details": [
            {"type": "tool_call", "name": "g", "tool_name": "t", "args": {"n": n}}], "transcript": f"t/c{n:03d}.json"})
        write_json(tmp_path / "suites" / "t" / f"c{n:03d}.json", tool_call_messages("t", {"n": n}))
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], cwd=tmp_path,
                               env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline()  # the first case is done: interrupt the run now
    assert first.startswith("PASS")
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=120)
    assert process.returncode == 2
    report = report_of(tmp_path)
    summary = report["summary"]
    assert (summary["exit_code"], summary["total"], summary["interrupted"]) == (2, 400, True)
    finished = len(report["cases"])
    assert 1 <= finished < 400
    assert finished + len(summary["not_run"]) == 400  # every case accounted for
    assert {c["id"] for c in report["cases"]}.isdisjoint(summary["not_run"])
    assert all(c["status"] == "passed" for c in report["cases"])
    assert f"interrupted (SIGINT): {finished} of 400 cases finished: exit 2" in stdout.splitlines()


def test_termination_rule_reads_the_recorded_ending(tmp_path):
    lookup_suite(tmp_path, extra="termination: [user_stop, agent_stop]")
    write_json(tmp_path / "suites" / "t" / "lookup.json", {
        "termination_reason": "max_steps",
        "messages": tool_call_messages("get_assignment_id", {"username": "nwaters"})})
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "  - ending: the conversation ended by 'max_steps', not by one of: user_stop, agent_stop" in result.stdout
    case = report_of(tmp_path)["cases"][0]
    assert (case["termination_reason"], case["metrics"]["journey_completion"]) == ("max_steps", 1.0)


def test_a_judge_whose_key_is_not_set_is_a_usage_error_before_anything_runs(tmp_path):
    lookup_suite(tmp_path)
    write(tmp_path / "evalrun.yaml", """
        judge:
          model: openai/gpt-4o-mini
          api_key_env: EVALRUN_TEST_KEY_THAT_IS_NOT_SET
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert ("evalrun.yaml:3:16: error: judge.api_key_env: the environment variable EVALRUN_TEST_KEY_THAT_IS_NOT_SET "
            "is not set; set it, or remove `judge` to let the offline stages decide") in result.stderr.splitlines()
    assert not (tmp_path / "out").exists()


def test_validate_does_not_need_the_judge_key(tmp_path):
    lookup_suite(tmp_path)
    write(tmp_path / "evalrun.yaml", "judge: {model: openai/gpt-4o-mini, api_key_env: EVALRUN_TEST_KEY_THAT_IS_NOT_SET}\n")
    assert run_cli("validate", "suites", cwd=tmp_path).returncode == 0


# ------------------------------------------------------------------ review fixes

def test_a_transcript_with_a_lone_surrogate_runs_and_its_report_is_written(tmp_path):
    lookup_suite(tmp_path)
    transcript = tmp_path / "suites" / "t" / "lookup.json"
    transcript.write_text(transcript.read_text().replace('"hi"', '"hi \\ud800"'), encoding="utf-8")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.splitlines()[0].startswith("PASS  lookup")
    assert report_of(tmp_path)["cases"][0]["transcript"][0]["content"] == "hi \\ud800"  # shown, not hidden


def test_an_output_dir_that_is_a_file_is_a_usage_error_before_anything_runs(tmp_path):
    lookup_suite(tmp_path)
    (tmp_path / "out").write_text("not a folder")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert "evalrun run: error: --output-dir: 'out' exists and is not a folder" in result.stderr.splitlines()
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == "config: evalrun.yaml"  # every run says which config it obeys
    assert (tmp_path / "out").read_text() == "not a folder"


def test_an_output_dir_that_cannot_be_made_is_a_usage_error_before_anything_runs(tmp_path):
    # Results stream to the run folder as cases finish; a run that could not keep them does not start.
    lookup_suite(tmp_path)
    (tmp_path / "afile").write_text("")
    result = run_cli("suites", "--output-dir", "afile/out", cwd=tmp_path)
    assert result.returncode == 4
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[:2] == ["config: evalrun.yaml",
                                              "afile/out:1:1: error: cannot write the run's results to 'afile/out': "
                                              "Not a directory: 'afile/out'"]
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["-k", "look", "suites"], ["-q", "suites"], ["--tag", "hr", "suites"],
                                  ["suites", "-k", "look"], ["suites"], ["run", "-q", "suites"],
                                  ["--output-dir", "out", "suites"]], ids=" ".join)
def test_options_before_the_path_still_mean_run(tmp_path, args):
    lookup_suite(tmp_path)
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1 passed, 0 failed" in result.stdout


def test_the_default_command_applies_only_without_a_command_or_help(tmp_path):
    from runner.frontends.cli import _with_default_command

    assert _with_default_command([]) == []
    assert _with_default_command(["--help"]) == ["--help"]
    assert _with_default_command(["-h"]) == ["-h"]
    assert _with_default_command(["--version"]) == ["--version"]
    assert _with_default_command(["validate", "s"]) == ["validate", "s"]
    assert _with_default_command(["-k", "validate", "s"]) == ["run", "-k", "validate", "s"]
    assert _with_default_command(["-q", "s"]) == ["run", "-q", "s"]
    alone = run_cli(cwd=tmp_path)
    assert alone.returncode == 4 and alone.stdout.startswith("usage: evalrun")


def test_a_user_prompt_template_overrides_the_built_in_one_by_name(tmp_path):
    with FakeOpenAI() as fake:
        fake.default = lambda request: json.dumps({"match": True, "score": 1.0, "reason": "same city",
                                                   "verdict_id": token_of(request)})
        fuzzy_suite(tmp_path, fake.base_url)
        with (tmp_path / "evalrun.yaml").open("a") as config:
            config.write("prompts_dir: my-prompts\n")
        write(tmp_path / "my-prompts" / "semantic_match.j2",
              'House rules. Is {{ actual }} the same as {{ expected }} ({{ context }})? Answer {"match": ..., '
              '"verdict_id": "{{ boundary }}"} BEGIN-{{ boundary }}\n')
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        prompt = fake.requests[0]["messages"][-1]["content"]
    assert prompt.startswith("House rules. Is Paris the same as the capital of France (the tool argument `destination`)?")


def test_a_goal_evalrun_cannot_score_makes_the_case_unscored_and_the_run_exit_3(tmp_path):
    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS)
    write(tmp_path / "suites" / "a.yaml", """
        id: a
        goal_details:
          - {type: interaction, name: greet}
          - {type: text, name: hello, keywords: [hello]}
        transcript: t.json
        """)
    write_json(tmp_path / "suites" / "t.json", [{"role": "user", "content": "hi"},
                                                {"role": "assistant", "content": "hello"}])
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "unscored"  # never a pass: one of its goals could not be judged
    assert case["unscored_reason"] == "goal 'greet': unscored: evalrun cannot score goals of type 'interaction' yet"
    assert "1 case(s) could not be scored: exit 3" in result.stdout.splitlines()
