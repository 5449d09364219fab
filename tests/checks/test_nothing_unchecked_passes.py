"""Nothing passes that was not checked: judged checks with no judge to ask, a profile that leaves out a
case's only criteria, and the validate warnings that say so before a run. Through the real CLI."""
from __future__ import annotations

from tests.helpers.checks_cli import replay_project
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.run_live import report_of

SAFETY = "\n          - {type: assert, statement: The agent never reveals the assignment id., name: no leak}"
NO_JUDGE_REASON = ("check 'no leak': unscored: no judge model is configured: add `judge:` to evalrun.yaml, or give "
                   "this check `judge: {model: ...}` (a --profile with `judged: false` leaves judged checks out on "
                   "purpose)")


def run(root, *args):
    return run_cli("suites", "--output-dir", "out", *args, cwd=root)


def test_a_safety_assert_that_no_judge_decided_is_unscored_not_a_pass(tmp_path):
    replay_project(tmp_path, SAFETY)
    result = run(tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert (case["status"], case["unscored_reason"]) == ("unscored", NO_JUDGE_REASON)
    assert "UNSCORED lookup" in result.stdout
    assert report_of(tmp_path)["summary"]["exit_reason"] == "1 case(s) could not be scored: exit 3"


def test_a_judged_check_is_unscored_even_when_the_goals_pass(tmp_path):
    replay_project(tmp_path, SAFETY, goals="""goal_details:
          - {type: tool_call, name: lookup, tool_name: get_assignment_id, args: {username: nwaters}}""")
    result = run(tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert report_of(tmp_path)["cases"][0]["unscored_reason"] == NO_JUDGE_REASON


def test_fuzzy_matching_off_is_named_as_the_reason_not_a_missing_judge(tmp_path):
    replay_project(tmp_path, SAFETY)
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nenable_fuzzy_matching: false\n"
                                     "judge: {model: openai/gpt-4o-mini}\n")
    result = run(tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    reason = report_of(tmp_path)["cases"][0]["unscored_reason"]
    assert reason == ("check 'no leak': unscored: evalrun.yaml sets enable_fuzzy_matching: false, which turns the "
                      "judge off: set it to true, or give this check `judge: {model: ...}` (a --profile with "
                      "`judged: false` leaves judged checks out on purpose)")
    assert "no judge model is configured" not in result.stdout + reason


def test_a_profile_may_leave_out_a_judged_check_when_the_goals_were_checked(tmp_path):
    replay_project(tmp_path, SAFETY, goals="""goal_details:
          - {type: tool_call, name: lookup, tool_name: get_assignment_id, args: {username: nwaters}}""")
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nprofiles: {ci: {judged: false}}\n")
    result = run(tmp_path, "--profile", "ci")
    assert result.returncode == 0, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert (case["status"], case["checks"][0]["status"]) == ("passed", "skipped")


def test_a_profile_that_leaves_out_a_cases_only_criteria_leaves_it_unscored(tmp_path):
    replay_project(tmp_path, SAFETY)
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nprofiles: {ci: {judged: false}}\n")
    result = run(tmp_path, "--profile", "ci")
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["status"] == "unscored"
    assert case["unscored_reason"] == (
        "nothing was checked: the case has no goals, forbidden calls or required ending, and none of its checks was "
        "decided: check 'no leak' skipped: left out by profile ci (judged: false, and this check asks a judge model)")


def test_a_case_whose_only_gating_check_is_skipped_for_its_own_reason_is_unscored(tmp_path):
    replay_project(tmp_path, "\n          - {type: response_match}\n          - {type: contains, value: x, gate: false}")
    result = run(tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    reason = report_of(tmp_path)["cases"][0]["unscored_reason"]
    assert reason.startswith("nothing was checked: ")
    assert reason.endswith("check 'response_match' skipped: no reference answer: give `reference:` or a text goal "
                           "with `response`; check 'contains' is not gating (gate: false)")


def test_forbidden_calls_or_a_required_ending_count_as_something_checked(tmp_path):
    replay_project(tmp_path, SAFETY + "\n        forbid_extra_calls: [cancel_*]")
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nprofiles: {ci: {judged: false}}\n")
    assert run(tmp_path, "--profile", "ci").returncode == 0


def test_a_required_ending_is_something_checked():
    from runner.checks.run import apply_checks
    from runner.results.models import CaseResult
    from tests.helpers.checks_text import case_with, texts

    left_out = {"type": "response_match", "name": "no reference"}  # skipped: the case has no reference answer
    for fields, status in (({"termination": ["user_stop"]}, "passed"), ({}, "unscored")):
        result = apply_checks(CaseResult(id="t", status="passed", source="t.yaml:1:1"), case_with(left_out, **fields),
                              texts("hello"))
        assert result.status == status, fields


# ------------------------------------------------------------------ validate says so before a run

def validate(root):
    return run_cli("validate", "suites", cwd=root)


def test_validate_warns_about_gating_judged_checks_without_a_judge(tmp_path):
    replay_project(tmp_path, SAFETY + "\n          - {type: all, checks: [{type: semantic_match, reference: x}]}"
                             "\n          - {type: rubric, rubrics: [{name: a, description: b}], gate: false}")
    done = validate(tmp_path)
    assert (done.returncode, done.stdout) == (0, (
        "suites/case.yaml:1:1: warning: case 'lookup': checks 'no leak', 'semantic_match' need a judge model, and "
        "evalrun.yaml configures none: the case will be unscored (exit 3); add `judge:` to evalrun.yaml, or run with "
        "a --profile whose `judged: false` leaves judged checks out\n")), done.stdout


def test_validate_names_fuzzy_matching_off_and_is_quiet_with_a_judge(tmp_path):
    replay_project(tmp_path, SAFETY)
    write(tmp_path / "evalrun.yaml", "enable_fuzzy_matching: false\njudge: {model: openai/gpt-4o-mini}\n")
    done = validate(tmp_path)
    assert "evalrun.yaml turns the judge off (enable_fuzzy_matching: false)" in done.stdout
    assert "configures none" not in done.stdout and "no judge model is configured" not in done.stdout
    write(tmp_path / "evalrun.yaml", "judge: {model: openai/gpt-4o-mini}\n")
    assert (validate(tmp_path).returncode, validate(tmp_path).stdout) == (0, "")
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")  # a check with a judge of its own
    replay_project(tmp_path, "\n          - {type: assert, statement: x, judge: {model: openai/gpt-4o-mini}}")
    assert validate(tmp_path).stdout == ""
