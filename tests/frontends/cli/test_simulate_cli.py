"""`evalrun simulate`: the simulated user (the fake OpenAI server, over real HTTP) plays a story against the
deterministic agent; the conversation is printed unscored, --batch saves N transcripts, and those become a
passing suite through `record --from`: the loop from a story to a suite."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import REPO, run_cli, write

STORY_CASE = """
    id: story-only
    agent: hr_agent
    story: You are nwaters and want your time off from 2025-01-01 to 2025-03-03.
    goal_details:
      - {type: text, name: answer, keywords: [January 5]}
    transcript: ../hr/transcripts/hr-timeoff-basic.json   # simulate plays live all the same
    """


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    write(tmp_path / "suites" / "live" / "story.yaml", STORY_CASE)
    write(tmp_path / "suites" / "live" / "broken_agent.py", """
        def respond(messages, context):
            raise RuntimeError("the database is down")
        """)
    return tmp_path


def with_simulator(project: Path, base_url: str) -> None:
    config = project / "suites" / "evalrun.yaml"
    config.write_text(config.read_text() + f"simulator:\n  model: openai/fake-user\n  api_base: {base_url}\n"
                      "  max_retries: 0\n  max_user_turns: 4\n")
    text = config.read_text().replace("agents:\n", "agents:\n  broken_agent:\n    type: python\n"
                                                    "    entrypoint: live.broken_agent:respond\n", 1)
    config.write_text(text)


def user_turn(request: dict) -> str:
    said = sum(1 for m in request["messages"] if m["role"] == "assistant")  # the simulator's own earlier messages
    return "I'm nwaters. My time off from 2025-01-01 to 2025-03-03, please." if said == 0 else '{"done": true}'


def test_a_story_plays_out_printed_saved_and_drafted_into_a_passing_suite(project: Path) -> None:
    with FakeOpenAI() as fake:
        fake.default = user_turn
        with_simulator(project, fake.base_url)
        played = run_cli("simulate", "suites/live/story.yaml", "--batch", "2", "-o", "simulated", cwd=project)
        asked = len(fake.requests)
    assert played.returncode == 0, played.stderr
    assert asked == 4  # two conversations of two simulator turns: the second is not the first's cached answer
    assert played.stdout.splitlines()[:7] == [
        "== story-only (1/2) with agent 'hr_agent'",
        "user> I'm nwaters. My time off from 2025-01-01 to 2025-03-03, please.",
        '  call  get_assignment_id_hr_agent {"username": "nwaters"}',
        "  result 15778303",
        '  call  get_timeoff_schedule_hr_agent {"assignment_id": "15778303", "start_date": "2025-01-01", '
        '"end_date": "2025-03-03"}',
        '  result ["20250105"]',
        "agent> Your time off between January 1, 2025 and March 3, 2025 is on January 5, 2025.",
    ]
    assert "-- ended: user_stop" in played.stdout
    saved = sorted((project / "simulated").glob("*.json"))
    assert [p.name for p in saved] == ["story-only-1.json", "story-only-2.json"]
    assert json.loads(saved[0].read_text())["termination_reason"] == "user_stop"
    assert not (project / ".evalrun" / "reports").exists()  # nothing was scored

    drafted = run_cli("record", "--from", *(str(p) for p in saved), "-o", "suites/drafted", cwd=project)
    assert drafted.returncode == 0, drafted.stderr
    ran = run_cli("run", "suites/drafted", cwd=project)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_failing_agent_is_printed_and_exits_3(project: Path) -> None:
    with FakeOpenAI() as fake:
        fake.default = user_turn
        with_simulator(project, fake.base_url)
        played = run_cli("simulate", "suites/live/story.yaml", "--agent", "broken_agent", cwd=project)
    assert played.returncode == 3
    assert "-- ended: agent_error" in played.stdout
    assert played.stderr.splitlines()[-1] == ("story-only: live.broken_agent:respond raised RuntimeError: the database "
                                              "is down (at broken_agent.py:2 in respond)")


def test_no_selected_case_and_bad_options(project: Path) -> None:
    assert run_cli("simulate", "suites/live", "-k", "nothing-like-this", cwd=project).returncode == 5
    bad = run_cli("simulate", "suites/live", "--batch", "0", cwd=project)
    assert (bad.returncode, bad.stderr.strip()) == (4, "evalrun simulate: --batch must be at least 1")
