"""Live runs through the real CLI: agents played, conversations saved and scored, faults contained."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.cli_helpers import cli_env, run_cli, saved_conversations, write
from tests.helpers.run_live import LOOKUP_AGENT, live_project, report_of


def test_a_live_case_is_played_saved_and_scored(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert (case["status"], case["termination_reason"]) == ("passed", "script_end")
    assert case["transcript"][0] == {"role": "user", "content": "Look up nwaters please."}
    saved = saved_conversations(tmp_path / "out")["lookup"]
    assert saved["termination_reason"] == "script_end" and len(saved["messages"]) == 4
    assert case["transcript_path"] == "out/conversations.jsonl#lookup"
    assert not (tmp_path / "out" / "conversations").exists()  # one file for the run, not one per case


def test_rescore_scores_the_saved_conversation_again_without_calling_the_agent(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    assert run_cli("suites", "--output-dir", "out", cwd=tmp_path).returncode == 0
    calls = (tmp_path / "agents" / "calls.log").read_text()
    suite = tmp_path / "suites" / "live.yaml"
    suite.write_text(suite.read_text().replace("username: nwaters", "username: someone"))  # a stricter expectation
    result = run_cli("rescore", "out", "--output-dir", "again", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (tmp_path / "agents" / "calls.log").read_text() == calls  # nothing was called
    assert report_of(tmp_path, "again")["cases"][0]["goals"][0]["status"] == "wrong_args"


def test_an_agent_that_raises_is_that_cases_error_with_the_conversation_so_far(tmp_path):
    live_project(tmp_path, """
        def respond(messages, context):
            if context.case_id == "broken":
                raise RuntimeError("the database is down")
            return "hello"
        """, cases="""
        agent: bot
        cases:
          - id: broken
            starting_sentence: hi
            goal_details: [{type: text, name: greet, keywords: [hello]}]
          - id: fine
            starting_sentence: hi
            goal_details: [{type: text, name: greet, keywords: [hello]}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3
    cases = {c["id"]: c for c in report_of(tmp_path)["cases"]}
    assert cases["fine"]["status"] == "passed"
    broken = cases["broken"]
    assert broken["status"] == "error" and broken["termination_reason"] == "agent_error"
    assert "the database is down" in broken["error"]
    assert broken["transcript"] == [{"role": "user", "content": "hi"}]


def test_a_case_that_outlives_its_timeout_ends_in_error_and_the_others_go_on(tmp_path):
    live_project(tmp_path, """
        import asyncio

        async def respond(messages, context):
            if context.case_id == "slow":
                await asyncio.sleep(60)
            return "hello"
        """, cases="""
        agent: bot
        cases:
          - id: slow
            timeout_s: 0.5
            starting_sentence: hi
            goal_details: [{type: text, name: greet, keywords: [hello]}]
          - id: quick
            starting_sentence: hi
            goal_details: [{type: text, name: greet, keywords: [hello]}]
        """)
    started = time.monotonic()
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert time.monotonic() - started < 30
    assert result.returncode == 3
    cases = {c["id"]: c for c in report_of(tmp_path)["cases"]}
    assert cases["quick"]["status"] == "passed"
    assert (cases["slow"]["status"], cases["slow"]["termination_reason"]) == ("error", "timeout")
    assert "0.5 s" in cases["slow"]["error"]


def test_an_unknown_agent_is_a_validation_error_and_a_usage_error_for_agent(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT)
    suite = tmp_path / "suites" / "live.yaml"
    suite.write_text(suite.read_text().replace("agent: bot", "agent: bott"))
    checked = run_cli("validate", "suites", cwd=tmp_path)
    assert checked.returncode == 4
    assert any("agent 'bott'" in line and "did you mean 'bot'?" in line for line in checked.stdout.splitlines()), \
        checked.stdout
    suite.write_text(suite.read_text().replace("agent: bott", "agent: bot"))
    wrong = run_cli("suites", "--agent", "bto", cwd=tmp_path)
    assert wrong.returncode == 4
    assert "did you mean 'bot'?" in wrong.stderr


@pytest.mark.process  # a real SIGINT
def test_ctrl_c_cancels_live_conversations_in_flight_and_reports_what_finished(tmp_path):
    cases = "agent: bot\ncases:\n" + "".join(
        f"  - id: c{n}\n    starting_sentence: hi\n    goal_details: [{{type: text, name: g, keywords: [hello]}}]\n"
        for n in range(6))
    live_project(tmp_path, """
        import asyncio

        async def respond(messages, context):
            if context.case_id != "c0":
                await asyncio.sleep(120)
            return "hello"
        """, cases=cases)
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "3"],
                               cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline().startswith("PASS  c0")
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert time.monotonic() - started < 20  # cancelled, not waited out
    assert process.returncode == 2, stderr
    report = report_of(tmp_path)
    assert [c["id"] for c in report["cases"]] == ["c0"]
    assert sorted(report["summary"]["not_run"]) == ["c1", "c2", "c3", "c4", "c5"]
    assert "interrupted (SIGINT): 1 of 6 cases finished: exit 2" in stdout


def test_a_model_agent_and_a_simulated_user_over_real_http(tmp_path):
    """The bare model plays the agent (evalrun plays its tools from the goals' outputs), an LLM plays the
    user until it says it is done; both through the fake OpenAI server, scored and saved like any case."""
    from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

    def serve(request):
        messages = request["messages"]
        if request.get("tools"):  # the agent under test: look the user up, then answer with the result
            if messages[-1]["role"] == "tool":
                return Reply(content=f"Your assignment id is {messages[-1]['content']}.")
            return Reply(tool_calls=[tool_call("get_assignment_id", {"username": "nwaters"}, "c1")])
        # the simulated user: it has said what it wanted once the agent gave the id
        done = any("15778303" in str(m.get("content")) for m in messages)
        return json.dumps({"message": "" if done else "I am nwaters.", "done": done})

    with FakeOpenAI(default=serve) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            agents:
              bot:
                type: model
                model: openai/fake-agent
                api_base: {fake.base_url}
                system_prompt: You are the HR assistant.
                tools:
                  - type: function
                    function:
                      name: get_assignment_id
                      parameters: {{type: object, properties: {{username: {{type: string}}}}}}
            simulator:
              model: openai/fake-user
              api_base: {fake.base_url}
            """)
        write(tmp_path / "suites" / "sim.yaml", """
            id: sim
            agent: bot
            story: You are nwaters and want your assignment id.
            starting_sentence: What is my assignment id?
            termination: [user_stop]
            goal_details:
              - type: tool_call
                name: lookup
                tool_name: get_assignment_id
                args: {username: nwaters}
                output: "15778303"
              - {type: text, name: tell, keywords: ["15778303"]}
            """)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
        requests = len(fake.requests)
    assert result.returncode == 0, result.stdout + result.stderr
    case = report_of(tmp_path)["cases"][0]
    assert (case["status"], case["termination_reason"]) == ("passed", "user_stop")
    roles = [m["role"] for m in case["transcript"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert case["transcript"][2]["content"] == "15778303"  # played from the goal's output
    usage = case["model_usage"]
    assert usage["by_role"]["agent"]["calls"] == 2 and usage["by_role"]["simulator"]["calls"] >= 1
    assert usage["calls"] == requests  # every request the server saw is accounted to the case


def test_a_case_id_cannot_steer_where_its_conversation_is_saved(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT, cases="""
        agent: bot
        cases:
          - id: ../../escaped
            starting_sentence: Look up nwaters please.
            goal_details: [{type: text, name: tell, keywords: ["15778303"]}]
          - id: .hidden/../../x
            starting_sentence: Look up nwaters please.
            goal_details: [{type: text, name: tell, keywords: ["15778303"]}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(saved_conversations(tmp_path / "out")) == ["../../escaped", ".hidden/../../x"]  # keys, not paths
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != ".evalrun-run.lock") == \
        ["conversations.jsonl", "report.json", "results.jsonl"]
    assert not (tmp_path / "escaped.json").exists() and not (tmp_path / "x.json").exists()
    assert not list(tmp_path.parent.glob("escaped*"))
    transcripts = [c["transcript_path"] for c in report_of(tmp_path)["cases"]]
    assert sorted(transcripts) == ["out/conversations.jsonl#../../escaped", "out/conversations.jsonl#.hidden/../../x"]
    again = run_cli("rescore", "out", "--output-dir", "again", cwd=tmp_path)  # found again by id
    assert again.returncode == 0, again.stdout + again.stderr
    assert [c["status"] for c in json.loads((tmp_path / "again" / "report.json").read_text())["cases"]] == ["passed"] * 2
