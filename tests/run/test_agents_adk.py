"""`type: adk`: a Google ADK agent run in-process through ADK's runner, its events read as OpenAI messages.

The agent (tests/fakes/adk_shop.py: two tools, one sub-agent) talks to the fake OpenAI-compatible
server through ADK's LiteLlm wrapper over real HTTP; nothing is patched."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from runner.run.agents.adk import event_messages, session_input
from tests.fakes.cases import make_agent, make_case, talk
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call
from tests.helpers.agents_adk import SUITE, make_project  # noqa: F401 - shared with other test modules
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, saved_conversations, write

_modules = itertools.count()


def shop():
    """tests/fakes/adk_shop.py, imported when a test first needs it: google-adk's import (~2 s of CPU) is then paid
    by the worker that runs these tests, not by every worker's collection."""
    from tests.fakes import adk_shop

    return adk_shop


def entry_module(folder, base_url: str) -> str:
    """A module (of a name of its own: Python caches modules by name) holding the shop agent for this
    fake server, as `root_agent` and as a factory `make_agent`."""
    name = f"shop_entry_{next(_modules)}"
    write(folder / f"{name}.py", f"""
        from tests.fakes.adk_shop import build

        root_agent = build({base_url!r})

        def make_agent():
            return build({base_url!r})
        """)
    return name


def tool_calls(message: dict) -> list[tuple[str, dict]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


def test_each_turn_s_events_become_openai_messages_and_the_hand_over_shows(tmp_path):
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        shop().script(fake)
        fake.script("You're welcome.")
        case = make_case(id="where", starting_sentence="Where is order A-1042?", user_prompts=["Thanks!"],
                         runtime_context={"app_name": "shop", "user_id": "ann", "state": {"tier": "gold"}})
        agent = make_agent({"type": "adk", "entrypoint": f"{module}:root_agent"}, tmp_path)
        conversation = talk(case, agent)
    assert (conversation.error, conversation.termination_reason) == (None, "script_end")
    messages = conversation.messages
    assert [(m["role"], m.get("name")) for m in messages] == [
        ("user", None), ("assistant", "shop_agent"), ("tool", "get_order"),
        ("assistant", "shop_agent"), ("tool", "transfer_to_agent"),
        ("assistant", "shipping_agent"), ("tool", "track_parcel"), ("assistant", "shipping_agent"),
        ("user", None), ("assistant", "shipping_agent")]
    assert [tool_calls(m) for m in messages if m.get("tool_calls")] == [
        [("get_order", {"order_id": "A-1042"})], [("transfer_to_agent", {"agent_name": "shipping_agent"})],
        [("track_parcel", {"tracking_id": "T-77"})]]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call_1", "call_2", "call_3"]
    assert json.loads(messages[2]["content"]) == {"order_id": "A-1042", "tracking_id": "T-77"}
    assert messages[6]["content"] == "parcel T-77: out for delivery, arrives 2025-06-12"  # ADK's {"result": text}
    assert [m["content"] for m in messages if m["role"] == "assistant" and not m.get("tool_calls")] == [
        "It arrives on June 12.", "You're welcome."]
    # one ADK session for the whole conversation: the second turn's request carries the first
    assert "Where is order A-1042?" in json.dumps(fake.requests[-1])
    assert fake.requests[-1]["messages"][-1]["content"] == "Thanks!"
    # the session's final state: the case's initial state and what the tools wrote, in the transcript too
    assert conversation.state == {"tier": "gold", "last_order": "A-1042", "seen_by": "shop/ann"}
    assert conversation.to_transcript()["state"] == conversation.state


def test_session_input_comes_from_the_runtime_context_then_the_options_then_adk_s_defaults(tmp_path):
    assert session_input(make_case(runtime_context={"app_name": "a", "state": {"k": 1}, "other": 2})) == {
        "app_name": "a", "state": {"k": 1}}

    class WithSessionInput:  # an ADK eval case read into a case brings its session_input along
        session_input = {"app_name": "a", "user_id": "u", "state": {"k": 1}, "session_id": None}
        runtime_context = {"app_name": "not this one"}

    assert session_input(WithSessionInput()) == {"app_name": "a", "user_id": "u", "state": {"k": 1}}
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        shop().script(fake)
        case = make_case(starting_sentence="Where is my order?", runtime_context={"state": {"tier": "gold"}})
        agent = make_agent({"type": "adk", "entrypoint": f"{module}:make_agent",
                            "state": {"tier": "basic", "lang": "en"}}, tmp_path)
        conversation = talk(case, agent)
    assert conversation.error is None
    # no app_name or user_id given: the root agent's name and ADK's evaluation user; the case's state wins
    assert conversation.state == {"tier": "gold", "lang": "en", "last_order": "A-1042",
                                  "seen_by": "shop_agent/test_user_id"}


def test_options_name_the_app_and_user(tmp_path):
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        shop().script(fake)
        case = make_case(starting_sentence="Where?", runtime_context={"app_name": "ignored", "user_id": "ignored"})
        agent = make_agent({"type": "adk", "entrypoint": f"{module}:root_agent", "app_name": "store",
                            "user_id": "bob"}, tmp_path)
        conversation = talk(case, agent)
    assert conversation.state["seen_by"] == "store/bob"


def test_a_tool_that_raises_is_the_case_error_with_the_conversation_so_far(tmp_path):
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        fake.script(Reply(tool_calls=[tool_call("get_order", {"order_id": "BOOM"}, "call_1")]))
        conversation = talk(make_case(starting_sentence="Order BOOM?", runtime_context={"state": {"tier": "gold"}}),
                            make_agent({"type": "adk", "entrypoint": f"{module}:root_agent"}, tmp_path))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == ("the ADK agent 'shop_agent' reported an error: RuntimeError: the order database "
                                  "is down")
    # ADK logged where it happened: kept with the case (shown under its error), not printed over the console
    assert conversation.stderr_tail[-1] == (
        "ERROR google.adk.workflow._node_runner: Node execution failed with exception — "
        "RuntimeError: the order database is down (at adk_shop.py:27 in get_order)")
    assert [(m["role"], tool_calls(m)) for m in conversation.messages] == [
        ("user", []), ("assistant", [("get_order", {"order_id": "BOOM"})])]
    assert conversation.state == {"tier": "gold"}  # kept even when the turn failed


def test_a_model_that_fails_is_the_case_error(tmp_path):
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        fake.script(*[Reply(status=400, content="model not found")] * 4)
        conversation = talk(make_case(starting_sentence="Where?"),
                            make_agent({"type": "adk", "entrypoint": f"{module}:root_agent"}, tmp_path))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == ("the ADK agent 'shop_agent' reported an error: BadRequestError: "
                                  "litellm.BadRequestError: OpenAIException - model not found")
    assert conversation.messages == [{"role": "user", "content": "Where?"}]


@pytest.mark.parametrize("source, entrypoint, error", [
    ("VALUE = 1\n", "notagent_a:VALUE",
     "the agent could not start: entrypoint 'notagent_a:VALUE' is a int, not an ADK agent, App, or function "
     "returning one"),
    ("def make():\n    return 'agent'\n", "notagent_b:make",
     "the agent could not start: entrypoint 'notagent_b:make' is a str, not an ADK agent, App, or function "
     "returning one"),
    ("def make():\n    raise KeyError('MODEL')\n", "notagent_c:make",
     "the agent could not start: notagent_c:make() raised KeyError: 'MODEL' (at notagent_c.py:2 in make)"),
    (None, "nowhere_adk:root_agent",
     "the agent could not start: entrypoint 'nowhere_adk:root_agent': cannot import module 'nowhere_adk' (no module "
     "named 'nowhere_adk', searched from {dir} and the installed packages)"),
    ("x = 1\n", "notagent_d:root_agent",
     "the agent could not start: entrypoint 'notagent_d:root_agent': 'notagent_d' has no attribute 'root_agent'"),
], ids=["a-value", "a-factory-of-a-str", "a-factory-that-raises", "no-such-module", "no-such-attribute"])
def test_an_entrypoint_that_is_not_an_adk_agent_is_the_case_error(tmp_path, source, entrypoint, error):
    if source is not None:
        (tmp_path / f"{entrypoint.split(':')[0]}.py").write_text(source)
    agent = make_agent({"type": "adk", "entrypoint": entrypoint}, tmp_path)
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == error.format(dir=tmp_path.resolve())


def test_an_error_event_is_an_agent_error_naming_the_agent():
    from google.adk.events import Event

    event = Event(author="shop_agent", invocation_id="i", error_code="SAFETY", error_message="blocked\x1b[31m")
    with pytest.raises(Exception) as raised:
        event_messages(event)
    assert raised.value.reason == "the ADK agent 'shop_agent' reported an error: SAFETY: blocked\\x1b[31m"


def test_streamed_chunks_and_thoughts_are_not_messages():
    from google.adk.events import Event
    from google.genai import types

    chunk = Event(author="a", invocation_id="i", partial=True,
                  content=types.Content(role="model", parts=[types.Part(text="It arr")]))
    thought = Event(author="a", invocation_id="i", content=types.Content(role="model", parts=[
        types.Part(text="let me think", thought=True), types.Part(text="It arrives.")]))
    assert event_messages(chunk) == []
    assert event_messages(thought) == [{"role": "assistant", "content": "It arrives.", "name": "a"}]


# ------------------------------------------------------------------ the CLI, as a user runs it


def test_the_cli_runs_an_adk_agent_and_scores_its_calls_including_the_hand_over(tmp_path):
    with FakeOpenAI() as fake:
        project = make_project(tmp_path / "project", fake.base_url)
        shop().script(fake)
        done = run_cli("suites/", "--output-dir", str(tmp_path / "out"), cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [case] = report["cases"]
    assert (case["id"], case["status"], case["metrics"]["journey_completion"]) == ("where-is-my-order", "passed", 1.0)
    saved = saved_conversations(tmp_path / "out")["where-is-my-order"]
    assert saved["state"] == {"tier": "gold", "last_order": "A-1042", "seen_by": "shop/ann"}
    assert [m.get("name") for m in saved["messages"] if m["role"] == "assistant"] == [
        "shop_agent", "shop_agent", "shipping_agent", "shipping_agent"]


def test_without_google_adk_the_case_says_how_to_install_it_and_validate_never_imports_it(tmp_path):
    project = make_project(tmp_path / "project", "http://127.0.0.1:9/v1")
    hide_adk = "import sys; sys.modules['google.adk'] = None; from runner.frontends.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", hide_adk, "suites/", "--output-dir", str(tmp_path / "out")],
                          cwd=project, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    [case] = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert case["error"] == ("the agent could not start: type: adk needs google-adk, which cannot be imported "
                             "(No module named 'google.adk.agents'; 'google.adk' is not a package); "
                             "pip install 'evalrun[adk]'")
    check = ("import sys; from runner.frontends.cli import main; code = main(['validate', 'suites/']); "
             "assert 'google.adk' not in sys.modules, 'imported'; sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", check], cwd=project, env=cli_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert str(REPO) in cli_env()["PYTHONPATH"]


def test_a_cases_canaries_are_in_the_adk_sessions_state(tmp_path):
    with FakeOpenAI() as fake:
        module = entry_module(tmp_path, fake.base_url)
        shop().script(fake)
        case = make_case(starting_sentence="Where is my order?", runtime_context={"state": {"tier": "gold"}},
                         canaries=["RT-ADKCANARY42"])
        conversation = talk(case, make_agent({"type": "adk", "entrypoint": f"{module}:make_agent"}, tmp_path))
    assert conversation.error is None
    assert conversation.state["canaries"] == ["RT-ADKCANARY42"] and conversation.state["tier"] == "gold"
