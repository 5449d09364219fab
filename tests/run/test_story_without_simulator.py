"""A `story` with no `simulator` configured: validate warns before a live run, and the failure says the
conversation ended because nobody played the user, instead of blaming the agent. Through the real CLI."""
from __future__ import annotations

from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.run_live import live_project, report_of

ASKING_AGENT = """
    def respond(messages, context):
        return [{"role": "assistant", "content": "Sure. What is your username?"}]
    """
STORY_CASE = """
    agent: bot
    cases:
      - id: lookup
        story: You are nwaters and want your assignment id.
        starting_sentence: I need my assignment id.
        goal_details:
          - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
    """
UNPLAYED = ("conversation: it ended because no simulated user was configured: the case has a `story`, but nobody "
            "played the user once the scripted messages ran out (script_end); the agent's last message went "
            "unanswered; add `simulator:` to evalrun.yaml")


def test_the_failure_says_nobody_played_the_user(tmp_path):
    live_project(tmp_path, ASKING_AGENT, cases=STORY_CASE)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert case["failures"] == [UNPLAYED, "goal 'get_id': not called: the agent never called get_assignment_id"]
    assert f"  - {UNPLAYED}" in result.stdout.splitlines()


def test_a_required_ending_is_explained_the_same_way(tmp_path):
    live_project(tmp_path, ASKING_AGENT, cases="""
        agent: bot
        story: You are nwaters and want your assignment id.
        starting_sentence: I need my assignment id.
        termination: [user_stop]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert report_of(tmp_path)["cases"][0]["failures"] == [
        UNPLAYED, "ending: the conversation ended by 'script_end', not by one of: user_stop"]


def test_a_passing_case_with_an_unplayed_story_still_passes(tmp_path):
    answering = """
        def respond(messages, context):
            return [{"role": "assistant", "content": "Your id is 15778303."}]
        """
    live_project(tmp_path, answering, cases="""
        agent: bot
        story: You are nwaters and want your assignment id.
        starting_sentence: I need my assignment id.
        goal_details:
          - {type: text, name: tell, keywords: ["15778303"]}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert report_of(tmp_path)["cases"][0]["failures"] == []


def test_without_a_story_nothing_is_added(tmp_path):
    live_project(tmp_path, ASKING_AGENT, cases=STORY_CASE.replace("story: You are nwaters and want your assignment id.\n"
                                                                   "        ", ""))
    run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert report_of(tmp_path)["cases"][0]["failures"] == [
        "goal 'get_id': not called: the agent never called get_assignment_id"]


def test_validate_warns_when_a_live_case_has_a_story_and_no_simulator(tmp_path):
    live_project(tmp_path, ASKING_AGENT, cases=STORY_CASE)
    done = run_cli("validate", "suites", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, (
        "suites/live.yaml:3:5: warning: case 'lookup' has a `story`, but evalrun.yaml configures no `simulator`: "
        "nobody plays the user after the scripted messages, so a live conversation ends there (script_end); add "
        "`simulator:` to evalrun.yaml, or write the user's turns as `user_prompts`\n"))
    write(tmp_path / "evalrun.yaml", (tmp_path / "evalrun.yaml").read_text() + "simulator: {model: openai/gpt-4o-mini}\n")
    assert run_cli("validate", "suites", cwd=tmp_path).stdout == ""


def test_a_recorded_case_with_a_story_gets_no_warning(tmp_path):
    # replayed, so no agent (naming one beside a transcript is a warning of its own), and the recording opens
    # with the case's sentence (else it is not this case's conversation)
    recorded = STORY_CASE.replace("    agent: bot\n", "").replace("starting_sentence:", "transcript: t.json\n"
                                                                 "        starting_sentence:")
    live_project(tmp_path, ASKING_AGENT, cases=recorded)
    write(tmp_path / "suites" / "t.json", '[{"role": "user", "content": "I need my assignment id."}]')
    assert run_cli("validate", "suites", cwd=tmp_path).stdout == ""
