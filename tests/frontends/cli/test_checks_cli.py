"""Checks through the real CLI: validate, replay and live runs, exit codes, report.json, and the
registry against the committed schema."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.checks import families, registry
from tests.helpers.checks_cli import TRANSCRIPT, replay_project
from tests.helpers.cli_helpers import run_cli, write, write_json
from tests.helpers.docs_pages import page
from tests.helpers.run_live import LOOKUP_AGENT, live_project, report_of

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "schemas" / "suite.schema.json").read_text())


# ------------------------------------------------------------------ registry and schema

def test_schema_lists_exactly_the_registered_check_types():
    check = SCHEMA["$defs"]["Check"]
    assert check["properties"]["type"]["enum"] == list(registry())
    dispatch = {rule["if"]["properties"]["type"]["const"]: rule["then"]["$ref"] for rule in check["allOf"]}
    assert dispatch == {t: f"#/$defs/{f.options.__name__}" for t, f in registry().items()}
    for family in families():  # every type of a family is accepted by its options model, and only those
        accepted = SCHEMA["$defs"][family.options.__name__]["properties"]["type"]
        assert accepted.get("enum", [accepted.get("const")]) == list(family.types)


def test_every_check_option_has_editor_help():
    for family in families():
        definition = SCHEMA["$defs"][family.options.__name__]
        assert definition.get("title") and definition.get("description") and definition.get("examples"), family.type
        for key, prop in definition["properties"].items():
            assert prop.get("title") and prop.get("description") and prop.get("examples"), (family.type, key)


def test_every_registered_check_has_a_description_and_only_judged_ones_need_a_model():
    for family in families():
        assert family.description and 0 <= family.default_threshold <= 1
    assert sorted(f.type for f in families() if f.needs_model) == [
        "agentflow_judge", "assert", "factual_accuracy", "groundedness", "helpfulness", "intent_resolution",
        "per_turn_user_simulator_quality_v1", "refusal", "response_completeness", "rubric", "safety", "semantic_match",
        "task_adherence", "tool_call_accuracy"]


# ------------------------------------------------------------------ validate

def test_validate_names_a_misspelt_check_or_option(tmp_path):
    write(tmp_path / "s.yaml", """
        id: c1
        starting_sentence: hi
        checks:
          - type: contains
            valeu: x
          - type: trajectroy
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 4
    lines = result.stdout.splitlines()
    assert "s.yaml:5:5: error: unknown key 'valeu' in checks[0] (did you mean 'value'?)" in lines
    assert any(line.startswith("s.yaml:6:11: error: checks[1].type: 'trajectroy' is not one of ")
               and line.endswith("(did you mean 'trajectory'?)") for line in lines)


def test_validate_reports_null_check_options(tmp_path):
    write(tmp_path / "s.yaml", """
        id: n
        starting_sentence: hi
        checks:
          - {type: assert, statement: x, judge: {model: null}}
          - {type: contains, value: x, name: null}
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 4
    assert result.stdout.splitlines()[:2] == [
        "s.yaml:4:49: error: checks[0].judge.model must be text, got nothing (null) null",
        "s.yaml:5:38: error: checks[1].name must be text, got nothing (null) null"]


def test_a_case_with_checks_and_no_goals_is_valid(tmp_path):
    write(tmp_path / "s.yaml", """
        id: c1
        starting_sentence: hi
        checks: [{type: not_contains, value: As an AI}]
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# ------------------------------------------------------------------ replay runs


def test_passing_checks_pass_the_case_and_are_reported(tmp_path):
    replay_project(tmp_path, """
          - {type: trajectory, match: exact, expected: [{tool_name: get_assignment_id, args: {username: nwaters}}]}
          - {type: contains, value: "15778303"}
          - {type: response_match_score, reference: "The assignment id is 15778303.", threshold: 0.7}
          - {type: latency, max_s: 0.001}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "passed"
    assert [(c["name"], c["status"]) for c in case["checks"]] == [
        ("trajectory", "passed"), ("contains", "passed"), ("response_match_score", "passed"), ("latency", "skipped")]
    assert case["checks"][2]["score"] == pytest.approx(10 / 12)  # all 5 reference words among the 7 of the answer
    assert case["checks"][3]["explanation"] == "skipped: no live timing: the case was scored from a recording"


def test_a_failing_gating_check_fails_the_case_and_exits_1(tmp_path):
    replay_project(tmp_path, """
          - {type: trajectory, match: exact, expected: [{tool_name: get_assignment_id}, {tool_name: get_schedule}]}
          - {type: not_contains, value: nwaters, gate: false}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "failed"
    assert case["failures"] == [
        "check 'trajectory': 1 of 2 expected call(s) matched among 1 call(s) (exact); first divergence: call 2: "
        "expected get_schedule, but the agent made no more calls (score 0.5 < threshold 1)"]
    assert case["checks"][1]["status"] == "failed" and not case["checks"][1]["gate"]


def test_an_unscored_gating_check_exits_3_never_passes(tmp_path):
    replay_project(tmp_path, """
          - {type: regex, pattern: "(a|aa)+$"}
        """)
    write_json(tmp_path / "suites" / "t.json", TRANSCRIPT[:-1] + [{"role": "assistant", "content": "a" * 5000 + "b"}])
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "unscored"
    assert "took longer than 1 s and was stopped" in case["unscored_reason"]


# ------------------------------------------------------------------ live runs

def test_budget_checks_on_a_live_run(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT, cases="""
        agent: bot
        cases:
          - id: lookup
            starting_sentence: Look up nwaters please.
            checks:
              - {type: latency, max_s: 120}
              - {type: max_tool_calls, max: 0, name: no tools}
              - {type: cost, max_usd: 1, gate: false}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    latency, tools, cost = case["checks"]
    assert latency["status"] == "passed" and 0 < latency["evidence"]["measured"] < 120
    assert (tools["status"], tools["explanation"]) == ("failed", "tool calls: 1, over the limit of 0")
    assert (cost["status"], cost["explanation"]) == ("skipped", "skipped: no model calls were recorded for this case")
    assert case["failures"] == ["check 'no tools': tool calls: 1, over the limit of 0"]


# ------------------------------------------------------------------ the README documents them

CHECKS_SECTION = page("how-to/checks.md")


def test_readme_documents_every_check_type():
    for check_type in registry():
        assert f"`{check_type}`" in CHECKS_SECTION or (
            check_type.startswith("not_") and "`not_` form" in CHECKS_SECTION), check_type


def test_readme_check_examples_validate(tmp_path):
    import re

    import yaml

    from runner.config.model import Config
    from runner.suite.load import load_file

    blocks = re.findall(r"```yaml\n(.*?)```", CHECKS_SECTION, flags=re.S)
    assert len(blocks) == 13
    for n, block in enumerate(blocks):
        data = yaml.safe_load(block)
        if block.startswith("# evalrun.yaml"):  # an excerpt of the config, not of a suite
            Config.model_validate(data)
            continue
        checks = data["checks"] if isinstance(data, dict) else data
        # in a case with a tool goal: a check that compares the calls with the goals needs one (validate says so)
        path = write(tmp_path / f"c{n}.yaml", yaml.safe_dump({"starting_sentence": "hi", "checks": checks,
                                                              "goal_details": [{"type": "tool_call", "name": "g",
                                                                                "tool_name": "t"}]}))
        cases, diagnostics, _ = load_file(path)
        assert [str(d) for d in diagnostics] == [] and len(cases[0].checks) == len(checks), block


def test_the_bundled_checks_example_passes_without_a_key(tmp_path):
    result = run_cli(str(Path(__file__).resolve().parents[3] / "suites" / "hr" / "timeoff_checks.yaml"),
                     "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert [c["status"] for c in case["checks"]] == ["passed"] * 6 + ["skipped"] + ["unscored"] * 2
    assert case["checks"][5]["explanation"].startswith("1 of 2 nested check(s) passed (any): [passed] contains: ")
    # the judged checks (gate: false) are shown, unscored with the way to turn them on while no judge is configured
    assert all(c["explanation"].startswith("unscored: no judge model is configured: add `judge:` to evalrun.yaml")
               and not c["gate"] for c in case["checks"][7:])


# ------------------------------------------------------------------ judged checks through the CLI

def test_judged_check_through_the_cli_with_a_configured_judge(tmp_path):
    import re

    from tests.fakes.openai_server import FakeOpenAI

    def judge(request):
        token = re.search(r"BEGIN-(V[0-9A-F]{20})", request["messages"][0]["content"]).group(1)
        return json.dumps({"reason": "same id", "match": True, "score": 0.9, "verdict_id": token})

    replay_project(tmp_path, """
          - {type: semantic_match, reference: "The id of nwaters is 15778303."}
          - {type: assert, statement: The agent gives the assignment id., gate: false}
        """)
    with FakeOpenAI(default=judge) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", max_retries: 0, cache: false}}
            """)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(fake.requests) == 2
    case = report_of(tmp_path)["cases"][0]
    assert [(c["type"], c["status"], c["score"]) for c in case["checks"]] == [
        ("semantic_match", "passed", 0.9), ("assert", "passed", 0.9)]
    assert case["model_usage"]["by_role"]["judge"]["calls"] == 2


def test_judged_check_without_a_judge_is_unscored_and_the_run_exits_3(tmp_path):
    replay_project(tmp_path, """
          - {type: semantic_match, reference: "The id of nwaters is 15778303."}
          - {type: contains, value: "15778303"}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert [c["status"] for c in case["checks"]] == ["unscored", "passed"]
    assert case["status"] == "unscored"
    assert case["unscored_reason"].startswith("check 'semantic_match': unscored: no judge model is configured")
