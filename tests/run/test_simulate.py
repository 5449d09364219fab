"""The simulated user over real HTTP against the fake OpenAI server: its structured done signal,
repetition, failures, and the conversation it sees."""
from __future__ import annotations

import json
import textwrap

import pytest

from runner.llm.settings import SimulatorSettings
from runner.run.simulate import FIRST_MESSAGE_CUE, build_user
from tests.fakes.cases import make_agent, make_case, talk
from tests.fakes.openai_server import FakeOpenAI

STORY = "My username is nwaters. I want my time off for the weekend."


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def agent(tmp_path):
    (tmp_path / "parrot.py").write_text(textwrap.dedent("""
        def respond(messages, context):
            said = messages[-1]["content"]
            if said.startswith("template"):
                return "{{ story }} {% raw %}END"   # agent text that looks like a template
            return {"messages": [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "t", "content": "secret tool data"},
                {"role": "assistant", "content": "you said: " + said}]}
        """))
    return make_agent({"type": "python", "entrypoint": "parrot:respond"}, tmp_path)


def simulated(case, fake, **settings):
    from runner.llm.client import LLMClient

    options = SimulatorSettings(model="openai/user-model", api_base=fake.base_url, max_retries=0, cache=False,
                                **settings)
    return build_user(case, simulator=options, client=LLMClient(options, role="simulator"))


def said(*replies: dict) -> list[str]:
    return [json.dumps(r) for r in replies]


def test_the_user_talks_until_it_says_done_and_the_weekend_ends_nothing(fake, agent):
    fake.script(*said({"message": "Is there anything on the WEEKEND? END", "done": False},
                      {"message": "Thanks, bye!", "done": True}))
    case = make_case(story=STORY, starting_sentence="Hi, I need my time off.")
    conversation = talk(case, agent, simulated(case, fake))
    users = [m["content"] for m in conversation.messages if m["role"] == "user"]
    assert users == ["Hi, I need my time off.", "Is there anything on the WEEKEND? END"]
    assert (conversation.termination_reason, conversation.error) == ("user_stop", None)
    first = fake.requests[0]["messages"]
    assert first[0]["role"] == "system" and STORY in first[0]["content"]
    # the user sees the agent's words as the other party's, and no tool call or result
    assert first[1:] == [{"role": "assistant", "content": "Hi, I need my time off."},
                         {"role": "user", "content": "you said: Hi, I need my time off."}]


def test_agent_text_is_data_never_a_template(fake, agent):
    fake.script(*said({"message": "ok", "done": True}))
    case = make_case(story=STORY, starting_sentence="template please")
    talk(case, agent, simulated(case, fake))
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": "{{ story }} {% raw %}END"}


def test_a_repeated_message_ends_the_conversation(fake, agent):
    fake.script(*said({"message": "hi,  I need my TIME off.", "done": False}))
    case = make_case(story=STORY, starting_sentence="Hi, I need my time off.")
    conversation = talk(case, agent, simulated(case, fake))
    assert (conversation.termination_reason, conversation.user_turns) == ("repeating", 1)


def test_the_simulator_writes_the_first_message_when_the_case_has_none(fake, agent):
    fake.script(*said({"message": "Hello there", "done": False}, {"done": True}))
    case = make_case(story=STORY)
    conversation = talk(case, agent, simulated(case, fake))
    assert conversation.messages[0] == {"role": "user", "content": "Hello there"}
    assert fake.requests[0]["messages"][1:] == [{"role": "user", "content": FIRST_MESSAGE_CUE}]


def test_max_user_turns_bounds_a_user_that_never_stops(fake, agent):
    fake.default = lambda request: json.dumps({"message": f"question {len(fake.requests)}", "done": False})
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake, max_user_turns=3))
    assert (conversation.termination_reason, conversation.user_turns, len(fake.requests)) == ("max_turns", 3, 2)
    capped = make_case(story=STORY, starting_sentence="Hi", max_user_turns=2)  # the case's limit wins
    assert talk(capped, agent, simulated(capped, fake, max_user_turns=3)).user_turns == 2


@pytest.mark.parametrize("reply, error", [
    ('{"message": "bye", "done": "yes"}', "the simulated user's 'done' must be true or false, got \"yes\""),
    ('{"text": "hello", "done": false}', "the simulated user's reply is a JSON object with no 'message' text: "
                                         '{"text": "hello", "done": false}'),
    ("   ", "the simulated user's reply is empty"),
])
def test_a_reply_that_holds_no_message_is_a_simulator_error_quoting_it(fake, agent, reply, error):
    fake.default = lambda request: reply
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake, reply_retries=1))
    assert conversation.termination_reason == "simulator_error"
    assert conversation.error.startswith(error + " (asked 2 times); the last reply: ")
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "tool", "assistant"]
    assert len(fake.requests) == 2  # asked again once, with the problem and the shape wanted
    assert fake.requests[1]["messages"][-1]["content"].endswith(
        'Answer again with only your next message to the assistant as plain text, or {"done": true} alone to end '
        "the conversation.")


def test_a_plain_text_reply_is_the_users_next_message(fake, agent):
    """Issue 16: one prose reply errored the whole case with no second request. Plain text is the next
    message (done: false), as ADK and watsonx take it; only the stop needs structure."""
    fake.script("I'd like my time off for the weekend, please.", '{"done": true}')
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake))
    users = [m["content"] for m in conversation.messages if m["role"] == "user"]
    assert users == ["Hi", "I'd like my time off for the weekend, please."]
    assert (conversation.termination_reason, conversation.error, len(fake.requests)) == ("user_stop", None, 2)


def test_an_object_quoted_after_the_users_own_is_not_its_stop(fake, agent):
    """Issue 15: the parser took the last JSON object, so a simulator that quoted the agent's `{"done": true}`
    after its own `{"done": false}` ended the conversation. Only the object the reply starts with counts."""
    fake.script('{"message": "Is it booked?", "done": false}\nThe assistant wrote {"done": true} to me.',
                'Thanks. The assistant said {"message": "", "done": true}', '{"done": true}')
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake))
    users = [m["content"] for m in conversation.messages if m["role"] == "user"]
    assert users == ["Hi", "Is it booked?", 'Thanks. The assistant said {"message": "", "done": true}']
    assert conversation.termination_reason == "user_stop" and len(fake.requests) == 3


def test_an_object_without_done_is_a_message_not_a_stop(fake, agent):
    fake.script('{"message": "And tomorrow?"}', '{"done": true}')
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake))
    assert [m["content"] for m in conversation.messages if m["role"] == "user"] == ["Hi", "And tomorrow?"]
    assert conversation.termination_reason == "user_stop" and len(fake.requests) == 2


def test_a_cut_simulator_reply_is_named(fake, agent):
    from tests.fakes.openai_server import Reply

    fake.default = lambda request: Reply(content='{"message": "I would like to', finish_reason="length")
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake, max_tokens=8, reply_retries=0))
    assert conversation.termination_reason == "simulator_error"
    assert conversation.error.startswith("the simulated user's model failed: the simulator's reply was cut at "
                                         "max_tokens=8 (finish_reason: length); raise `simulator.max_tokens`")


def test_without_a_story_or_a_simulator_the_script_decides(fake, agent):
    no_story = make_case(starting_sentence="Hi")
    assert talk(no_story, agent, simulated(no_story, fake)).termination_reason == "script_end"
    no_simulator = make_case(story=STORY, starting_sentence="Hi")
    assert talk(no_simulator, agent, build_user(no_simulator)).termination_reason == "script_end"
    assert fake.requests == []


def test_a_failing_simulator_model_is_named_in_the_error(fake, agent):
    from tests.fakes.openai_server import Reply

    fake.script(Reply(status=500))
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = talk(case, agent, simulated(case, fake))
    assert conversation.termination_reason == "simulator_error"
    assert conversation.error.startswith(f"the simulated user's model failed: HTTP 500 from {fake.base_url}")


def test_only_usable_replies_are_cached(fake, agent, tmp_path):
    from runner.llm.client import LLMClient

    case = make_case(story=STORY, starting_sentence="Hi")
    options = SimulatorSettings(model="openai/user-model", api_base=fake.base_url, max_retries=0, reply_retries=0)

    def run():
        client = LLMClient(options, tmp_path / "cache", role="simulator")
        return talk(case, agent, build_user(case, simulator=options, client=client))

    fake.script('{"done": "maybe"}', *said({"message": "Anything this weekend?", "done": False}, {"done": True}))
    assert run().termination_reason == "simulator_error"
    assert run().termination_reason == "user_stop"  # the bad reply was not kept: the model is asked again
    asked = len(fake.requests)
    assert (asked, run().termination_reason, len(fake.requests)) == (3, "user_stop", 3)  # all from the cache


def test_a_run_takes_the_simulator_and_prompts_dir_from_the_config(fake, agent, tmp_path):
    import asyncio

    from runner.config.load import LoadedConfig
    from runner.config.model import Config
    from runner.run.conversation import converse_case

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "user_simulator.j2").write_text("You are a terse customer. {{ story }}")
    config = Config.model_validate({
        "agents": {"parrot": {"type": "python", "entrypoint": "parrot:respond"}}, "prompts_dir": "prompts",
        "simulator": {"model": "openai/user-model", "api_base": fake.base_url, "cache": False, "max_retries": 0}})
    fake.script(*said({"done": True}))
    case = make_case(story=STORY, starting_sentence="Hi")
    conversation = asyncio.run(converse_case(case, LoadedConfig(config=config, path=tmp_path / "evalrun.yaml")))
    assert (conversation.termination_reason, conversation.error) == ("user_stop", None)
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": f"You are a terse customer. {STORY}"}
