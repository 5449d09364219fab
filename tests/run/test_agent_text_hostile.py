"""Agent text that Python can hold but UTF-8 and JSON writers cannot: a lone surrogate, and tool arguments
nested far deeper than any reader goes. Live (python, http, command agents) and replayed, through the
CLI: the case is scored, its conversation and arguments are kept, the oddity is visible and named."""
from __future__ import annotations

import json
import sys

import pytest

from tests.fakes.agent_server import AgentServer
from tests.helpers.cli_helpers import run_cli, saved_conversations, write, write_json

SURROGATE_AGENT = """
    import json

    def respond(messages, context):
        call = {"id": "c1", "type": "function",
                "function": {"name": "get_id", "arguments": json.dumps({"username": "nw\\ud800"})}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "id \\udc00 42"},
                {"role": "assistant", "content": "done \\ud800 here"}]
    """

COMMAND_AGENT = r"""
import sys

import pytest
for line in sys.stdin:
    print('{"messages": [{"role": "assistant", "content": "done \\ud800 here"}]}', flush=True)
"""

VISIBLE = "done \\ud800 here"  # the six characters \ud800, not the code point


def surrogate_cases(server_url: str) -> str:
    return f"""
        embeddings: {{enabled: false}}
        agents:
          py: {{type: python, entrypoint: "surrogate_agent:respond"}}
          web: {{type: http, url: "{server_url}"}}
          cmd: {{type: command, command: ["{sys.executable}", cmd_agent.py]}}
        """


def test_a_lone_surrogate_in_live_agent_text_is_kept_visible_everywhere(tmp_path):
    with AgentServer() as server:
        server.reply_text = '{"messages": [{"role": "assistant", "content": "done \\ud800 here"}]}'
        write(tmp_path / "evalrun.yaml", surrogate_cases(server.url("/raw")))
        write(tmp_path / "surrogate_agent.py", SURROGATE_AGENT)
        write(tmp_path / "cmd_agent.py", COMMAND_AGENT)
        write(tmp_path / "suites" / "s.yaml", """
            cases:
              - id: py
                agent: py
                starting_sentence: hi
                goal_details:
                  - {type: tool_call, name: g, tool_name: get_id, args: {username: nw}}
                  - {type: text, name: t, keywords: [done, here]}
              - {id: web, agent: web, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [done]}]}
              - {id: cmd, agent: cmd, starting_sentence: hi, goal_details: [{type: text, name: t, keywords: [done]}]}
            """)
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # py fails on its argument; nothing is an error
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    assert {i: c["status"] for i, c in cases.items()} == {"py": "failed", "web": "passed", "cmd": "passed"}
    for case in cases.values():
        assert case["transcript"][-1] == {"role": "assistant", "content": VISIBLE}, case["id"]
        assert not case["notes"], case["notes"]
        saved = saved_conversations(tmp_path / "out")[case['id']]
        assert saved["messages"] == case["transcript"]
    py = cases["py"]
    assert py["transcript"][2]["content"] == "id \\udc00 42"
    assert py["calls"][0]["arguments"] == {"username": "nw\\ud800"}
    assert py["goals"][0]["attempts"][0]["arguments"][0]["actual"] == "nw\\ud800"
    results = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert {r["id"]: r["transcript"][-1]["content"] for r in results} == {"py": VISIBLE, "web": VISIBLE, "cmd": VISIBLE}
    assert "nw\\\\ud800" in result.stdout  # the console's explanation quotes the argument, backslash escaped


def test_a_lone_surrogate_in_a_replay_keeps_the_transcript_and_every_argument(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "t.json").write_text(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "look \ud800", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "get_id",
                                                         "arguments": json.dumps({"username": "nw\ud800"})}}]},
        {"role": "tool", "tool_call_id": "1", "content": "42"},
        {"role": "assistant", "content": "done"}]))
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: r
            transcript: t.json
            goal_details: [{type: tool_call, name: g, tool_name: get_id, args: {username: nw}}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["status"] == "failed" and not case["notes"]
    assert case["transcript"][1]["content"] == "look \\ud800"
    assert case["calls"][0]["arguments"] == {"username": "nw\\ud800"}


# ------------------------------------------------------------------ arguments nested far too deep

DEEP_AGENT = """
    def respond(messages, context):
        depth = 100_000 if context.case_id.endswith("100k") else 300
        if context.case_id.startswith("text"):
            arguments = "[" * depth + "]" * depth
        else:  # a Python object, built without recursion
            arguments = inner = {}
            for _ in range(depth):
                inner["a"] = {}
                inner = inner["a"]
        call = {"id": "c1", "type": "function", "function": {"name": "get_id", "arguments": arguments}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "42"},
                {"role": "assistant", "content": "done"}]
    """

UNREAD = "arguments are nested more than 100 levels deep; evalrun keeps them as written but does not read them"


def test_deeply_nested_arguments_are_kept_and_marked_unreadable_live_and_replayed(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          deep: {type: python, entrypoint: "deep_agent:respond"}
        """)
    write(tmp_path / "deep_agent.py", DEEP_AGENT)
    write_json(tmp_path / "suites" / "t.json", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "get_id", "arguments": "[" * 100_000 + "]" * 100_000}}]},
        {"role": "tool", "tool_call_id": "1", "content": "42"}])
    goal = "goal_details: [{type: tool_call, name: g, tool_name: get_id, args: {username: nw}}]"
    live = ["text-100k", "text-300", "object-100k", "object-300"]
    write(tmp_path / "suites" / "s.yaml", "cases:\n" + "".join(
        f"  - {{id: {i}, agent: deep, starting_sentence: hi, {goal}}}\n" for i in live)
        + f"  - {{id: replayed, transcript: t.json, {goal}}}\n")
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stdout + result.stderr and "RecursionError" not in result.stdout
    cases = {c["id"]: c for c in json.loads((tmp_path / "out" / "report.json").read_text())["cases"]}
    assert sorted(cases) == sorted([*live, "replayed"])
    for case_id, case in cases.items():
        assert case["status"] == "failed", (case_id, case.get("error"))
        assert not case["notes"], case["notes"]
        call = case["calls"][0]
        assert call["role"] == "invalid_arguments" and call["note"].endswith(UNREAD), call["note"]
        depth = 300 if case_id.endswith("300") else 100_000
        kept = case["transcript"][1]["tool_calls"][0]["function"]["arguments"]
        assert kept == ("[" * depth + "]" * depth if not case_id.startswith("object") else
                        '{"a":' * depth + "{}" + "}" * depth), case_id  # the whole text, as written
        assert call["arguments"] == kept
        assert UNREAD in case["goals"][0]["explanation"]


def test_a_lone_surrogate_in_a_checks_reason_is_shown_and_the_result_kept(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "team" / "__init__.py", "")
    write(tmp_path / "team" / "checks.py", """
        def odd(final_text, options):
            return {"passed": True, "reason": "odd \\ud800 reason"}
        """)
    write_json(tmp_path / "suites" / "t.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "done"}])
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: a
            transcript: t.json
            goal_details: [{type: text, name: t, keywords: [done]}]
            checks: [{type: python, function: "team.checks:odd"}]
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["status"] == "passed" and not case["notes"]
    assert case["transcript"][-1] == {"role": "assistant", "content": "done"}
    assert case["checks"][0]["explanation"] == "odd \\ud800 reason"


def test_a_message_holding_what_json_cannot_is_the_case_error_with_the_conversation_kept(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          bot: {type: python, entrypoint: "odd_agent:respond"}
        """)
    write(tmp_path / "odd_agent.py", """
        def respond(messages, context):
            if context.turn == 1:
                return "first"
            return [{"role": "assistant", "content": "x", "metadata": {"when": object()}}]
        """)
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - {id: a, agent: bot, starting_sentence: one, user_prompts: [two], goal_details: [{type: text, name: t, keywords: [first]}]}
        """)
    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["error"] == ("odd_agent:respond returned: message 0: `metadata.when` is not JSON data (a Python object); "
                             "a message holds only JSON data: text, numbers, true/false, null, lists and objects")
    saved = saved_conversations(tmp_path / "out")["a"]
    assert [m["content"] for m in saved["messages"]] == ["one", "first", "two"] == \
        [m["content"] for m in case["transcript"]]


def test_deep_arguments_in_every_shape_an_agent_or_a_recording_gives_them(tmp_path):
    """The same 100,000-deep arguments as a JSON object (not text): in an http reply, a command's line, an
    isolated python agent's return value, an OpenAI recording, a watsonx recording, an Anthropic one."""
    deep = '{"a": ' * 100_000 + "{}" + "}" * 100_000
    reply = ('{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
             '"function": {"name": "get_id", "arguments": ' + deep + '}}]}, {"role": "tool", "tool_call_id": "c1", '
             '"content": "42"}, {"role": "assistant", "content": "done"}]}')
    (tmp_path / "reply.json").write_text(reply)
    write(tmp_path / "cmd_deep.py", """
        import sys
        reply = open("reply.json").read()
        for line in sys.stdin:
            print(reply, flush=True)
        """)
    write(tmp_path / "iso_deep.py", DEEP_AGENT)
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "openai.json").write_text(
        '[{"role": "user", "content": "hi"}, ' + reply[len('{"messages": ['):-2] + "]")
    watsonx_args = json.dumps({"name": "get_id", "args": "ARGS", "id": "c1"}).replace('"ARGS"', deep)
    (tmp_path / "suites" / "watsonx.json").write_text(json.dumps([
        {"role": "user", "content": "hi", "type": "text"},
        {"role": "assistant", "type": "tool_call", "content": watsonx_args},
        {"role": "assistant", "type": "tool_response", "content": json.dumps({"tool_call_id": "c1", "content": "42"})}]))
    (tmp_path / "suites" / "anthropic.json").write_text(
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", '
        '"name": "get_id", "input": ' + deep + '}]}]')
    with AgentServer() as server:
        server.reply_text = reply
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            agents:
              web: {{type: http, url: "{server.url('/raw')}"}}
              cmd: {{type: command, command: ["{sys.executable}", cmd_deep.py]}}
              iso: {{type: python, entrypoint: "iso_deep:respond", isolate: process}}
            """)
        goal = "goal_details: [{type: tool_call, name: g, tool_name: get_id, args: {username: nw}}]"
        write(tmp_path / "suites" / "s.yaml", "cases:\n"
              "  - {id: web, agent: web, starting_sentence: hi, " + goal + "}\n"
              "  - {id: cmd, agent: cmd, starting_sentence: hi, " + goal + "}\n"
              "  - {id: object-100k, agent: iso, starting_sentence: hi, " + goal + "}\n"
              + "".join(f"  - {{id: {name}, transcript: {name}.json, {goal}}}\n"
                        for name in ("openai", "watsonx", "anthropic")))
        result = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stdout + result.stderr
    cases = {c["id"]: c for c in json.loads((tmp_path / "out" / "report.json").read_text())["cases"]}
    assert len(cases) == 6
    for case_id, case in cases.items():
        assert case["status"] == "failed", (case_id, case.get("error"))
        call = case["calls"][0]
        assert (call["role"], call["note"].endswith(UNREAD)) == ("invalid_arguments", True), (case_id, call["note"])
        expected = deep if case_id != "object-100k" else '{"a":' * 100_000 + "{}" + "}" * 100_000
        assert call["arguments"] == expected, case_id  # kept whole, as written


# ------------------------------------------------------------------ where the limits lie

def nested_object_text(depth: int) -> str:
    """An object `depth` levels deep, itself included."""
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def test_depth_is_counted_from_the_outermost_container():
    from runner.util.jsontext import deeper_than

    assert [deeper_than(json.loads(nested_object_text(d)), 100) for d in (99, 100, 101)] == [False, False, True]
    assert [deeper_than(v, 0) for v in (1, "x", [], {})] == [False, False, True, True]
    assert deeper_than([1, [2, {"k": [3]}]], 3) is True and deeper_than([1, [2, {"k": [3]}]], 4) is False


@pytest.mark.parametrize("depth, readable", [(100, True), (101, False)])
@pytest.mark.parametrize("as_text", [True, False], ids=["json-text", "object"])
def test_arguments_are_read_up_to_100_levels_deep(depth, readable, as_text):
    from runner.transcripts.read import build_trajectory

    text = nested_object_text(depth)
    arguments = text if as_text else json.loads(text)
    trajectory = build_trajectory([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}])
    call = trajectory.tool_calls[0]
    assert (call.arguments == json.loads(text), call.arguments_error) == ((True, None) if readable else (False, UNREAD))


@pytest.mark.parametrize("depth, accepted", [(100, True), (101, False)])
def test_an_agent_message_may_nest_100_levels_below_itself(depth, accepted):
    from runner.run.agents._base import AgentError, check_messages

    content = json.loads("[" * depth + "]" * depth)
    message = {"role": "assistant", "content": content}
    if accepted:
        assert check_messages([message], "the reply") == [message]
    else:
        with pytest.raises(AgentError, match=r"^the reply: message 0 is nested more than 100 levels deep$"):
            check_messages([message], "the reply")


def test_an_agent_message_with_arguments_of_101_levels_keeps_them_as_text():
    from runner.run.agents._base import check_messages

    arguments = json.loads(nested_object_text(101))
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "function": {"name": "f",
                                                                                            "arguments": arguments}}]}
    kept = check_messages([message], "the reply")[0]
    assert kept["tool_calls"][0]["function"]["arguments"] == nested_object_text(101).replace(": ", ":")
    assert message["tool_calls"][0]["function"]["arguments"] is arguments  # the agent's own object is left alone
    shallow = {**message, "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": json.loads(nested_object_text(100))}}]}
    assert check_messages([shallow], "the reply") == [shallow]


# ------------------------------------------------------------------ what an agent says before failing

def test_messages_kept_from_a_turn_that_failed_show_their_surrogates(tmp_path):
    from tests.fakes.cases import make_agent, make_case, talk
    from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

    with FakeOpenAI() as fake:
        fake.script(Reply(content="looking \ud800", tool_calls=[tool_call("lookup", {"who": "nw\udc00"}, "c1")]),
                    Reply(status=500, content="boom"))
        agent = make_agent({"type": "model", "model": "openai/m", "api_base": fake.base_url, "max_retries": 0,
                            "cache": False, "system_prompt": "x", "tools": []}, tmp_path)
        conversation = talk(make_case(starting_sentence="hi", tool_outputs={"lookup": "found"}), agent)
    assert conversation.termination_reason == "agent_error" and "500" in conversation.error
    assert conversation.messages[1]["content"] == "looking \\ud800"
    assert json.loads(conversation.messages[1]["tool_calls"][0]["function"]["arguments"]) == {"who": "nw\udc00"}
    json.dumps(conversation.to_transcript(), ensure_ascii=False).encode("utf-8")  # it can be saved


def test_a_secret_in_words_that_needed_their_surrogates_shown_is_still_redacted(tmp_path):


    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        judge: {model: openai/fake, api_key_env: EVAL_JUDGE_KEY, api_base: "http://127.0.0.1:9"}
        """)
    write(tmp_path / "team" / "__init__.py", "")
    write(tmp_path / "team" / "checks.py", """
        import os

        def leaky(final_text, options):
            return {"passed": True, "reason": "odd \\ud800 " + os.environ["EVAL_JUDGE_KEY"]}  # a lone surrogate
        """)
    write_json(tmp_path / "suites" / "t.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "done"}])
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: a
            transcript: t.json
            goal_details: [{type: text, name: t, keywords: [done]}]
            checks: [{type: python, function: "team.checks:leaky"}]
        """)
    from tests.helpers.cli_helpers import run_cli

    result = run_cli("suites", "--output-dir", "out", cwd=tmp_path, env={"EVAL_JUDGE_KEY": "sk-judge-very-secret"})
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("report.json", "results.jsonl"):
        text = (tmp_path / "out" / name).read_text()
        assert "sk-judge-very-secret" not in text and "odd \\\\ud800 ***" in text, name
