"""The `model` target over real HTTP against the fake OpenAI server: evalrun plays the tools."""
from __future__ import annotations

import json

import pytest

from runner.run.agents.model import NO_OUTPUT
from tests.fakes.cases import make_agent, make_case, talk
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

TOOLS = [{"type": "function", "function": {"name": "get_assignment_id_hr_agent", "parameters": {
    "type": "object", "properties": {"username": {"type": "string"}}}}}]
HR_CASE = {
    "id": "hr-live", "starting_sentence": "What is my time off? I'm nwaters, 2025-01-01 to 2025-03-03.",
    "tool_outputs": {"get_weather": {"temp_c": 21}},
    "goal_details": [
        {"type": "tool_call", "name": "aid", "tool_name": "get_assignment_id_hr_agent", "args": {"username": "nwaters"},
         "output": "15778303"},
        {"type": "tool_call", "name": "aid_other", "tool_name": "get_assignment_id_hr_agent",
         "args": {"username": "johndoe"}, "output": "15338303"},
        {"type": "tool_call", "name": "schedule", "tool_name": "get_timeoff_schedule_hr_agent",
         "args": {"assignment_id": "15778303", "start_date": "2025-01-01", "end_date": "2025-03-03"},
         "arg_matching": {"start_date": "fuzzy"}, "output": ["20250105"]},
    ]}


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def model_agent(fake: FakeOpenAI, tmp_path, **options):
    return make_agent({"type": "model", "model": "openai/hr-model", "api_base": fake.base_url, "max_retries": 0,
                       "cache": False, "system_prompt": "You are an HR assistant.", "tools": TOOLS, **options}, tmp_path)


def test_the_model_calls_tools_and_evalrun_answers_from_the_case(fake, tmp_path):
    fake.script(
        Reply(tool_calls=[tool_call("get_assignment_id_hr_agent", {"username": "johndoe"}, "c1"),
                          tool_call("get_assignment_id_hr_agent", {"username": "nwaters"}, "c2"),
                          tool_call("get_weather", {"city": "Paris"}, "c3"),
                          tool_call("book_flight", {}, "c4")]),
        Reply(tool_calls=[tool_call("get_timeoff_schedule_hr_agent", {
            "assignment_id": "15778303", "start_date": "January 1, 2025", "end_date": "2025-03-03"}, "c5")]),
        "Your time off is on January 5, 2025.")
    conversation = talk(make_case(**HR_CASE), model_agent(fake, tmp_path))
    results = {m["tool_call_id"]: m["content"] for m in conversation.messages if m["role"] == "tool"}
    assert results == {
        "c1": "15338303",  # the goal whose arguments match, not the first goal of the tool
        "c2": "15778303",
        "c3": '{"temp_c": 21}',  # no goal: the case's tool_outputs
        "c4": NO_OUTPUT.format(name="book_flight"),
        "c5": NO_OUTPUT.format(name="get_timeoff_schedule_hr_agent"),  # fuzzy compares strict here: no guessing
    }
    assert conversation.messages[-1] == {"role": "assistant", "content": "Your time off is on January 5, 2025."}
    assert (conversation.termination_reason, conversation.error) == ("script_end", None)
    first, last = fake.requests[0], fake.requests[-1]
    assert first["messages"] == [{"role": "system", "content": "You are an HR assistant."},
                                 {"role": "user", "content": HR_CASE["starting_sentence"]}]
    assert first["tools"] == TOOLS and first["model"] == "hr-model"
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "tool", "tool", "tool", "tool",
                                                     "assistant", "tool"]


def test_no_output_message_names_the_fix():
    assert NO_OUTPUT.format(name="book_flight") == (
        "Error: evalrun has no canned output for tool 'book_flight' with these arguments. Give a goal of this tool an "
        "`output`, or the case `tool_outputs: {book_flight: ...}`.")


def test_max_tool_rounds_ends_the_conversation_with_what_was_said(fake, tmp_path):
    fake.default = lambda request: Reply(tool_calls=[tool_call("get_weather", {}, f"c{len(fake.requests)}")])
    case = make_case(**{**HR_CASE, "user_prompts": ["never sent"]})
    conversation = talk(case, model_agent(fake, tmp_path, max_tool_rounds=2))
    assert conversation.termination_reason == "max_tool_rounds" and conversation.error is None
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert len(fake.requests) == 3


def test_a_failing_model_is_the_case_error_with_the_conversation_so_far(fake, tmp_path):
    fake.script(Reply(tool_calls=[tool_call("get_weather", {}, "c1")]), Reply(status=500))
    conversation = talk(make_case(**HR_CASE), model_agent(fake, tmp_path))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error.startswith(f"model openai/hr-model: HTTP 500 from {fake.base_url}")
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "tool"]


def test_prompt_and_tools_from_files(fake, tmp_path):
    (tmp_path / "prompt.txt").write_text("Be brief.")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    fake.script("Hi.")
    agent = model_agent(fake, tmp_path, system_prompt=None, tools=[], system_prompt_file="prompt.txt",
                        tools_file="tools.json")
    assert talk(make_case(starting_sentence="hello"), agent).error is None
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert fake.requests[0]["tools"] == TOOLS
    missing = talk(make_case(starting_sentence="hello"),
                   model_agent(fake, tmp_path, system_prompt=None, system_prompt_file="nowhere.txt"))
    assert missing.error == f"the agent could not start: system_prompt_file: cannot read {tmp_path / 'nowhere.txt'}: " \
                            "No such file or directory"
