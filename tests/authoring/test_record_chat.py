"""`evalrun record` as a person uses it: a chat through a real pseudo-terminal (pexpect), ended by /save,
Ctrl-D or Ctrl-C; the draft it writes then passes when rerun live against the same deterministic agent
and when replayed on the saved chat."""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from runner.suite.load import load_file
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, write

pexpect = pytest.importorskip("pexpect")

FIRST = "I want to know my timeoff schedule for a certain period."
SECOND = "My username is nwaters, and I mean from 2025-01-01 to 2025-03-03."
ANSWER = "Your time off between January 1, 2025 and March 3, 2025 is on January 5, 2025."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the bundled suites: evalrun.yaml declares hr_agent, a deterministic python agent."""
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    write(tmp_path / "suites" / "live" / "slow_agent.py", """
        import pathlib
        import time

        def respond(messages, context):
            if context.turn > 1:
                pathlib.Path("agent-working").touch()
                time.sleep(60)  # the person presses Ctrl-C before this ends
            return "Hello! Which order?"
        """)
    config = tmp_path / "suites" / "evalrun.yaml"
    config.write_text(config.read_text() + "  slow_agent:\n    type: python\n    entrypoint: live.slow_agent:respond\n")
    return tmp_path


def start(project: Path, *args: str):
    child = pexpect.spawn(sys.executable, ["-m", "runner", "record", *args], cwd=str(project), env=cli_env(),
                          encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.expect_exact("Chatting with agent ")
    return child


def finish(child) -> tuple[str, int]:
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def chat_about_time_off(child) -> None:
    child.expect_exact("you> ")
    child.sendline(FIRST)
    child.expect_exact("agent> Sure. What is your username, and which period do you mean?")
    child.expect_exact("you> ")
    child.sendline(SECOND)
    child.expect_exact('  call  get_assignment_id_hr_agent {"username": "nwaters"}')
    child.expect_exact("  result 15778303")
    child.expect_exact('  call  get_timeoff_schedule_hr_agent {"assignment_id": "15778303", "start_date": '
                       '"2025-01-01", "end_date": "2025-03-03"}')
    child.expect_exact('  result ["20250105"]')
    child.expect_exact(f"agent> {ANSWER}")
    child.expect_exact("you> ")


@pytest.mark.parametrize("ending", ["/save", "Ctrl-D", "Ctrl-C"])
def test_a_chat_becomes_a_draft_that_passes_live_and_replayed(project: Path, ending: str) -> None:
    child = start(project, "--agent", "hr_agent", "-o", "suites/recorded/")
    chat_about_time_off(child)
    if ending == "/save":
        child.sendline("/save")
    elif ending == "Ctrl-D":
        child.sendeof()
    else:
        child.sendintr()
    rest, status = finish(child)
    assert status == 0, rest
    assert "case 'chat': 2 tool call goals, 1 text goal; 2 lines to check" in rest
    assert "wrote suites/recorded/chat.yaml" in rest and "saved suites/recorded/transcripts/chat.json" in rest
    cases, diagnostics, _ = load_file(project / "suites" / "recorded" / "chat.yaml")
    assert not diagnostics
    case, = cases
    assert (case.agent, case.transcript, case.starting_sentence, case.user_prompts) == ("hr_agent", None, FIRST, [SECOND])
    assert [g.name for g in case.goal_details] == ["get_assignment_id_hr_agent", "get_timeoff_schedule_hr_agent",
                                                   "answer"]
    saved = json.loads((project / "suites" / "recorded" / "transcripts" / "chat.json").read_text())
    assert saved["termination_reason"] == "user_stop"
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant", "user", "assistant", "tool", "assistant",
                                                       "tool", "assistant"]

    live = run_cli("run", "suites/recorded", "--output-dir", "live", cwd=project)
    assert live.returncode == 0, live.stdout + live.stderr
    report = json.loads((project / "live" / "report.json").read_text())
    assert report["cases"][0]["status"] == "passed" and all(g["achieved"] for g in report["cases"][0]["goals"])
    assert report["cases"][0]["termination_reason"] == "script_end"  # it talked to the agent again

    replayed = run_cli("run", "suites/recorded/chat.yaml", "--replay", "suites/recorded/transcripts",
                       "--output-dir", "replayed", cwd=project)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_ctrl_c_while_the_agent_works_keeps_what_was_said(project: Path) -> None:
    child = start(project, "--agent", "slow_agent", "-o", "suites/slow.yaml")
    child.expect_exact("you> ")
    child.sendline("hi")
    child.expect_exact("agent> Hello! Which order?")
    child.expect_exact("you> ")
    child.sendline("A-1042 please")
    deadline = time.monotonic() + 30
    while not (project / "agent-working").exists():  # the line was read and the agent is on it
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child.sendintr()  # the agent sleeps for a minute: the chat ends now, not then
    rest, status = finish(child)
    assert status == 0, rest
    cases, diagnostics, _ = load_file(project / "suites" / "slow.yaml")
    assert not diagnostics
    assert (cases[0].id, cases[0].starting_sentence, cases[0].user_prompts) == ("slow", "hi", ["A-1042 please"])
    assert [g.name for g in cases[0].goal_details] == ["answer"]


def test_leaving_before_saying_anything_writes_nothing(project: Path) -> None:
    child = start(project, "--agent", "hr_agent", "-o", "suites/recorded/")
    child.expect_exact("you> ")
    child.sendline("/save")
    rest, status = finish(child)
    assert status == 5
    assert "nothing to save: no message was sent" in rest
    assert not (project / "suites" / "recorded").exists()


def test_an_agent_that_cannot_chat_is_refused_with_the_reason(project: Path) -> None:
    made = run_cli("record", "--agent", "airline_agent", "-o", "suites/x.yaml", cwd=project)
    assert made.returncode == 4
    assert made.stderr.splitlines()[-1] == ("evalrun record: agent 'airline_agent' replays recordings and cannot chat; "
                                            "use `evalrun record --from` with its transcripts, or name another agent "
                                            "with --agent")
    unknown = run_cli("record", "--agent", "hr_agnet", cwd=project / "suites")
    assert unknown.returncode == 4
    assert unknown.stderr.splitlines()[-1].startswith(
        "evalrun record: --agent hr_agnet: not declared in evalrun.yaml (did you mean 'hr_agent'?) (declared: hr_agent, "
        "bank_agent, airline_agent, ")


@pytest.mark.process  # feeds stdin
def test_messages_from_a_pipe_are_shown_and_the_only_agent_that_can_chat_is_chosen(project: Path) -> None:
    """No --agent: evalrun.yaml declares several agents that can chat, so it asks; with only hr_agent and
    airline_agent (a replay), hr_agent is the only one that can. Input from a pipe ends at its end (EOF)."""
    import subprocess

    asked = subprocess.run([sys.executable, "-m", "runner", "record", "-o", "suites/piped.yaml"], cwd=project,
                           env=cli_env(), input="hi\n", capture_output=True, text=True, timeout=120)
    assert asked.returncode == 4
    assert asked.stderr.splitlines()[-1].startswith("evalrun record: which agent? name one with --agent (declared: "
                                                    "hr_agent, bank_agent, airline_agent, ")
    config = project / "suites" / "evalrun.yaml"
    text = config.read_text()
    config.write_text(text[:text.index("agents:")] + "agents:\n  hr_agent: {type: python, entrypoint: live.hr_agent:respond}\n"
                      "  airline_agent: {type: replay}\n")
    piped = subprocess.run([sys.executable, "-m", "runner", "record", "-o", "suites/piped.yaml"], cwd=project,
                           env=cli_env(), input=f"{FIRST}\n{SECOND}\n", capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[1:4] == [f"you> {FIRST}",
                                              "agent> Sure. What is your username, and which period do you mean?",
                                              f"you> {SECOND}"]
    assert run_cli("run", "suites/piped.yaml", cwd=project).returncode == 0
