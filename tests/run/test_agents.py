"""Agent targets: the registry and its schema, the python kind, choosing an agent by name."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from runner.authoring.schema import build_schema
from runner.config.load import load_config
from runner.config.model import Config
from runner.run.agent_choice import AgentNotFound, agent_name_for, check_agent_names, check_agent_override
from runner.run.agents._registry import KINDS, kind_module
from tests.fakes.cases import make_agent, make_case, talk


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# ------------------------------------------------------------------ registry and schema

def test_the_registry_holds_one_kind_per_module_and_the_schema_lists_them():
    assert KINDS == ("adk", "agentflow", "10xgraph", "command", "http", "model", "python", "replay")
    agent = build_schema("config")["properties"]["agents"]["additionalProperties"]
    assert agent["properties"]["type"]["enum"] == list(KINDS)
    assert [b["then"]["$ref"] for b in agent["allOf"]] == [
        f"#/$defs/{kind_module(k).Options.__name__}" for k in KINDS]


@pytest.mark.parametrize("kind", KINDS)
def test_every_option_has_hover_help(kind):
    schema = build_schema("config")["$defs"][kind_module(kind).Options.__name__]
    for name, field in schema["properties"].items():
        assert field.get("title") and field.get("description") and field.get("examples"), (kind, name)


def test_a_typo_in_an_agent_is_reported_at_its_key_with_a_suggestion(tmp_path):
    config = write(tmp_path / "evalrun.yaml", """
        agents:
          hr:
            type: python
            entry_point: agent:respond
          other:
            type: pyhton
        """)
    _, diagnostics = load_config(config)
    assert [f"{d.line}:{d.column}: {d.severity}: {d.message}" for d in sorted(diagnostics)] == [
        "3:5: error: agents.hr is missing the required key 'entrypoint'",
        "4:5: error: unknown key 'entry_point' in agents.hr (did you mean 'entrypoint'?)",
        "6:11: error: agents.other.type: 'pyhton' is not one of adk, agentflow, 10xgraph, command, http, model, python, "
        "replay "
        "(did you mean 'python'?)",
    ]


def test_default_agent_must_be_declared(tmp_path):
    config = write(tmp_path / "evalrun.yaml", """
        agents:
          hr_agent: {type: python, entrypoint: "agent:respond"}
        default_agent: hr_agnet
        """)
    _, diagnostics = load_config(config)
    assert [f"{d.line}:{d.column}: {d.severity}: {d.message}" for d in diagnostics] == [
        "3:16: error: default_agent: Value error, agent 'hr_agnet' is not declared under agents "
        "(did you mean 'hr_agent'?)"]


def test_header_and_env_values_are_hidden_when_the_config_is_saved():
    config = Config.model_validate({"agents": {
        "web": {"type": "http", "url": "http://x/chat",
                "headers": {"Authorization": "Bearer ${TOKEN}", "X-Key": "sk-live-123", "X-Team": "evals"}},
        "cli": {"type": "command", "command": "agent", "env": {"TOKEN": "${TOKEN}", "PASSWORD": "hunter2"}}}})
    dumped = json.dumps(config.model_dump(mode="json"))
    assert "sk-live-123" not in dumped and "hunter2" not in dumped and "evals" not in dumped
    assert config.model_dump(mode="json")["agents"]["web"]["headers"] == {
        "Authorization": "Bearer ${TOKEN}", "X-Key": "<redacted>", "X-Team": "<redacted>"}


# ------------------------------------------------------------------ choosing the agent

def declared(*names: str, default: str | None = None) -> Config:
    return Config.model_validate({"agents": {n: {"type": "python", "entrypoint": "m:f"} for n in names},
                                  "default_agent": default})


def test_check_agent_names_reports_undeclared_names_at_the_case():
    cases = [make_case(id="a", agent="hr_agent"), make_case(id="b", agent="hr_agnet",
                                                            source={"path": "s/b.yaml", "line": 7, "column": 3})]
    assert [str(d) for d in check_agent_names(cases, declared("hr_agent", "airline"))] == [
        "s/b.yaml:7:3: error: case 'b': agent 'hr_agnet' is not declared in evalrun.yaml (did you mean 'hr_agent'?) "
        "(declared: hr_agent, airline)"]
    assert check_agent_names(cases, Config()) == []  # no agents section: watsonx datasets name their own agents


def test_agent_name_for_follows_override_case_default_and_the_only_agent():
    config = declared("a", "b", default="b")
    assert agent_name_for(make_case(agent="a"), config) == "a"
    assert agent_name_for(make_case(), config) == "b"
    assert agent_name_for(make_case(agent="a"), config, override="b") == "b"
    assert agent_name_for(make_case(), declared("only")) == "only"
    with pytest.raises(AgentNotFound, match=r"^the case names no agent: add `agent:` to the case or `default_agent` "
                                            r"to evalrun.yaml \(declared: a, b\)$"):
        agent_name_for(make_case(), declared("a", "b"))


def test_a_missing_agent_says_how_to_declare_it():
    with pytest.raises(AgentNotFound) as caught:
        agent_name_for(make_case(agent="hr_agent"), Config())
    assert caught.value.reason == (
        "the case runs against agent 'hr_agent', which is not declared: evalrun.yaml has no `agents:` section. "
        "Declare it, for example:\n  agents:\n    hr_agent:\n      type: python\n"
        "      entrypoint: my_agent:respond   # or http, command, model, replay, adk")
    assert check_agent_override("hr_agnet", declared("hr_agent")) == \
        "--agent hr_agnet: not declared in evalrun.yaml (did you mean 'hr_agent'?) (declared: hr_agent)"
    assert check_agent_override("hr_agent", declared("hr_agent")) is None


# ------------------------------------------------------------------ the python kind

def test_a_sync_function_from_the_config_folder_answers_each_turn(tmp_path):
    write(tmp_path / "pkg" / "bot.py", """
        SEEN = []

        def respond(messages, context):
            SEEN.append((context.case_id, context.turn, context.runtime_context))
            messages.append({"role": "user", "content": "mutated"})  # must not reach the record
            return f"turn {context.turn}: {messages[-2]['content']}"
        """)
    case = make_case(id="hello", starting_sentence="hi", user_prompts=["again"], runtime_context={"tenant": "x"})
    conversation = talk(case, make_agent({"type": "python", "entrypoint": "pkg.bot:respond"}, tmp_path))
    assert conversation.messages == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "turn 1: hi"},
        {"role": "user", "content": "again"}, {"role": "assistant", "content": "turn 2: again"}]
    assert (conversation.termination_reason, conversation.error, conversation.user_turns) == ("script_end", None, 2)
    import pkg.bot

    assert pkg.bot.SEEN == [("hello", 1, {"tenant": "x"}), ("hello", 2, {"tenant": "x"})]


def test_an_async_function_may_return_tool_calls_and_stop(tmp_path):
    write(tmp_path / "asyncbot.py", """
        async def respond(messages, context):
            return {"stop": True, "messages": [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "1", "content": "ok"},
                {"role": "assistant", "content": "done"}]}
        """)
    case = make_case(starting_sentence="go", user_prompts=["never sent"])
    conversation = talk(case, make_agent({"type": "python", "entrypoint": "asyncbot:respond"}, tmp_path))
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "tool", "assistant"]
    assert (conversation.termination_reason, conversation.error) == ("agent_stop", None)


@pytest.mark.parametrize("source, entrypoint, error", [
    (None, "nowhere.mod:respond", "the agent could not start: entrypoint 'nowhere.mod:respond': cannot import module "
     "'nowhere.mod' (no module named 'nowhere', searched from {dir} and the installed packages)"),
    ("def other(m, c): return 'x'\nVALUE = 1\n", "badattr:respond",
     "the agent could not start: entrypoint 'badattr:respond': 'badattr' has no attribute 'respond' (it has: other)"),
    ("VALUE = 1\n", "notfn:VALUE", "the agent could not start: entrypoint 'notfn:VALUE': 'VALUE' is a int, not a function"),
    ("import json\nraise RuntimeError('no config')\n", "boom_on_import:respond",
     "the agent could not start: entrypoint 'boom_on_import:respond': importing module 'boom_on_import' failed: "
     "RuntimeError: no config (at boom_on_import.py:2 in <module>)"),
])
def test_an_entrypoint_that_cannot_be_loaded_is_the_case_error(tmp_path, source, entrypoint, error):
    if source is not None:
        (tmp_path / f"{entrypoint.split(':')[0]}.py").write_text(source)
    conversation = talk(make_case(starting_sentence="hi"), make_agent({"type": "python", "entrypoint": entrypoint},
                                                                      tmp_path))
    assert (conversation.termination_reason, conversation.error) == ("agent_error", error.format(dir=tmp_path.resolve()))
    assert conversation.messages == []


def test_a_folder_shadowed_by_an_installed_package_is_named_with_the_fix(tmp_path):
    # `json` stands for any installed package (openai-agents installs `agents`): a folder of the same name
    # without __init__.py loses to it wherever it sits on the path
    write(tmp_path / "json" / "bot.py", "def respond(messages, context):\n    return 'hi'\n")
    conversation = talk(make_case(starting_sentence="hi"),
                        make_agent({"type": "python", "entrypoint": "json.bot:respond"}, tmp_path))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error.endswith(
        "; the folder json/ here has no __init__.py, so the installed package 'json' "
        f"({os.path.dirname(json.__file__)}) is imported instead: add json/__init__.py or rename the folder")


def test_an_agent_exception_keeps_the_conversation_so_far(tmp_path):
    write(tmp_path / "flaky.py", """
        def respond(messages, context):
            if context.turn == 2:
                raise ValueError("lost the thread\\x1b[31m")
            return "first answer"
        """)
    case = make_case(starting_sentence="one", user_prompts=["two", "three"])
    conversation = talk(case, make_agent({"type": "python", "entrypoint": "flaky:respond"}, tmp_path))
    assert conversation.messages == [{"role": "user", "content": "one"}, {"role": "assistant", "content": "first answer"},
                                     {"role": "user", "content": "two"}]
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == "flaky:respond raised ValueError: lost the thread\\x1b[31m (at flaky.py:3 in respond)"


@pytest.mark.parametrize("value, error", [
    ("42", "flawed:respond returned: expected a string, a list of messages, {\"messages\": [...]} or a chat completion, "
           "got 42"),
    ("[{'role': 'user', 'content': 'x'}]", "flawed:respond returned: message 0 has role \"user\"; an agent's messages "
     "are 'assistant' or 'tool' (the user's come from the suite)"),
    ("{'messages': 'hello'}", "flawed:respond returned: 'messages' must be a list, got \"hello\""),
])
def test_a_reply_in_no_known_shape_is_an_agent_error(tmp_path, value, error):
    module = f"flawed_{len(value)}"  # modules are cached by name: one per parameter
    (tmp_path / f"{module}.py").write_text(f"def respond(messages, context):\n    return {value}\n")
    conversation = talk(make_case(starting_sentence="hi"), make_agent({"type": "python", "entrypoint": f"{module}:respond"},
                                                                      tmp_path))
    error = error.replace("flawed:", f"{module}:")
    assert (conversation.termination_reason, conversation.error) == ("agent_error", error)


def test_the_readme_examples_of_agents_and_simulator_are_valid_configs():
    import re

    import yaml

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    from tests.helpers.docs_pages import page

    readme = page("how-to/connect-agents.md")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.S)
    agents = next(b for b in blocks if b.startswith("agents:"))
    config = Config.model_validate(yaml.safe_load(agents))
    assert sorted(config.agents[n].type for n in config.agents) == sorted(KINDS)
    Config.model_validate(yaml.safe_load(next(b for b in blocks if b.startswith("simulator:"))))
