"""`evalrun quick`: cases with only a starting sentence, scored by the referenceless profile (valid_tool_calls,
helpfulness, groundedness) through the run code: a run folder, reports and exit codes like any run; the judge
over real HTTP against the fake server; without a judge the case is unscored, never passed."""
from __future__ import annotations

import json
import re

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import run_cli, write

AGENT = '''
import json

def respond(messages, context):
    said = messages[-1]["content"]
    city = "Pariss" if "typo" in said else "Paris"
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny, 21 C"},
        {"role": "assistant", "content": "It is sunny in Paris, 21 C."},
    ]
'''
TOOLS = '[{name: get_weather, parameters: {type: object, properties: {city: {type: string, enum: [Paris, Rome]}}, ' \
        'required: [city]}}]'


def project(tmp_path, judge_url=None):
    write(tmp_path / "bot.py", AGENT)
    judge = f"judge: {{model: openai/fake-judge, api_base: '{judge_url}', max_retries: 0}}\n" if judge_url else ""
    agents = f"agents:\n  bot: {{type: python, entrypoint: 'bot:respond', tools: {TOOLS}}}\n"
    write(tmp_path / "evalrun.yaml", judge + agents)
    write(tmp_path / "cases" / "weather.yaml", """
        cases:
          - id: plain
            starting_sentence: What is the weather in Paris?
          - id: typo
            starting_sentence: What is the weather in Paris? (typo)
        """)


def judge_reply(request):
    prompt = request["messages"][0]["content"]
    token = re.search(r"BEGIN-(V[0-9A-F]{20})", prompt).group(1)
    if "claim" in prompt:
        return json.dumps({"claims": [{"claim": "sunny, 21 C", "reason": "the tool says so", "grounded": True}],
                           "verdict_id": token})
    return json.dumps({"reason": "answered", "score": 5, "verdict_id": token})


def test_run_refuses_cases_with_nothing_to_check_but_quick_plays_them(tmp_path):
    with FakeOpenAI(default=judge_reply) as fake:
        project(tmp_path, fake.base_url)
        refused = run_cli("run", "cases", cwd=tmp_path)
        done = run_cli("quick", "cases", "--output-dir", "out", "--format", "junit", cwd=tmp_path)
    assert refused.returncode == 4 and "has nothing to check" in refused.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    by_id = {case["id"]: case for case in report["cases"]}
    assert by_id["plain"]["status"] == "passed"
    assert [(c["type"], c["status"]) for c in by_id["plain"]["checks"]] == [
        ("valid_tool_calls", "passed"), ("helpfulness", "passed"), ("groundedness", "passed")]
    assert by_id["typo"]["status"] == "failed"
    assert ("check 'valid_tool_calls': 0 of 1 tool call(s) valid against the tools of agent 'bot' (evalrun.yaml); "
            "call #1 (message 2) get_weather: $.city: 'Pariss' is not one of ['Paris', 'Rome']") in done.stdout
    assert (tmp_path / "out" / "junit.xml").is_file()
    assert len(fake.requests) == 4  # helpfulness and groundedness for each of the two cases


def test_quick_ignores_goals_and_the_cases_own_checks(tmp_path):
    with FakeOpenAI(default=judge_reply) as fake:
        project(tmp_path, fake.base_url)
        write(tmp_path / "cases" / "weather.yaml", """
            id: with-goals
            starting_sentence: What is the weather in Paris?
            goal_details:
              - {type: tool_call, name: book, tool_name: book_flight, args: {city: Rome}}
            checks: [{type: contains, value: snow}]
            """)
        normal = run_cli("run", "cases", "--output-dir", "run", cwd=tmp_path)
        done = run_cli("quick", "cases", "--output-dir", "out", cwd=tmp_path)
    assert normal.returncode == 1
    assert done.returncode == 0, done.stdout + done.stderr
    [case] = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert case["goals"] == [] and [c["type"] for c in case["checks"]] == [
        "valid_tool_calls", "helpfulness", "groundedness"]


def test_without_a_judge_quick_is_unscored_never_a_pass(tmp_path):
    project(tmp_path)
    write(tmp_path / "cases" / "weather.yaml", "id: plain\nstarting_sentence: What is the weather in Paris?\n")
    done = run_cli("quick", "cases", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    [case] = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert case["status"] == "unscored"
    assert [(c["type"], c["status"]) for c in case["checks"]] == [
        ("valid_tool_calls", "passed"), ("helpfulness", "unscored"), ("groundedness", "unscored")]


@pytest.mark.parametrize("command", ["quick", "generate"])
def test_the_help_describes_the_command(tmp_path, command):
    done = run_cli(command, "--help", cwd=tmp_path)
    assert done.returncode == 0 and ("referenceless" in done.stdout or "stories" in done.stdout)
