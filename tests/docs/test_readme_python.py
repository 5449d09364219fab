"""The docs' Python examples run as written: the Python API (a script, a test, async), the Google ADK
agent and the LangGraph and OpenAI Agents SDK wrappers, the last three against the fake
OpenAI-compatible server (their OPENAI_BASE_URL), through the CLI (in this process, as other agents' tests run it)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runner.suite.load import load_file
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, run_cli_process, saved_conversations, write
from tests.helpers.docs_pages import all_pages, page

README = all_pages()  # the pages are one text here: the examples name their files


def files_in_readme() -> dict[str, str]:
    """Every code block whose first line names a file (`# path/to/file.py`): path -> the block."""
    found = {}
    for block in re.findall(r"```(?:python|yaml)\n(.*?)```", README, flags=re.S):
        named = re.match(r"# ([\w/.]+\.(?:py|yaml))\b", block)
        if named:
            found[named.group(1)] = block
    return found


def project_from_readme(root: Path, *names: str) -> Path:
    blocks = files_in_readme()
    for name in names:
        write(root / name, blocks[name])
        for parent in Path(name).parents:
            if parent.parts and parent.parts[0] in ("my_agents", "shop_agent"):
                write(root / parent / "__init__.py", "")
    return root


def run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=root, env=cli_env(**env), capture_output=True, text=True,
                          timeout=300)


# pytest plugins that other packages install here (langsmith's comes with langchain-openai, for the LangGraph
# example; logfire's and hypothesis's with the dev extra) are not under test and cost ~2 s of each pytest's start;
# evalrun's own plugin still loads by its entry point, as where evalrun alone is installed
OTHER_PLUGINS_OFF = ("-p", "no:langsmith_plugin", "-p", "no:logfire", "-p", "no:pytest_logfire",
                     "-p", "no:hypothesispytest")


@contextlib.contextmanager
def as_a_script_in(root: Path, monkeypatch):
    """`python SCRIPT` in `root`, in this process: the script's folder first on sys.path, `root` the working
    directory, and the modules imported from `root` forgotten after (the next test's `my_agents` is its own)."""
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    try:
        yield
    finally:
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(f"{root}{os.sep}"):
                del sys.modules[name]


@pytest.mark.process  # the page's test file runs under pytest in a process of its own
def test_the_python_api_examples_run_as_written(tmp_path, monkeypatch, capsys):
    root = project_from_readme(tmp_path, "run_evals.py", "tests/test_support_agent.py", "run_evals_async.py",
                               "my_agents/support.py", "evals/greeting.yaml")
    # the two scripts are Python the page shows: run here, as `python run_evals.py` would run them
    with as_a_script_in(root, monkeypatch):
        runpy.run_path("run_evals.py", run_name="__main__")  # raise_for_failures() would raise here
        assert capsys.readouterr().out.splitlines() == ["0 1.0", "greeting passed"]
        runpy.run_path("run_evals_async.py", run_name="__main__")
        assert capsys.readouterr().out == "True 1\n"
    as_test = run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", *OTHER_PLUGINS_OFF, "tests/test_support_agent.py")
    assert as_test.returncode == 0, as_test.stdout + as_test.stderr
    assert "1 passed" in as_test.stdout
    # the same test fails with evalrun's explanation when the agent does not do what the suite wants
    (root / "my_agents" / "support.py").write_text("def respond(messages, context):\n    return 'Go away.'\n")
    failing = run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", *OTHER_PLUGINS_OFF, "tests/test_support_agent.py")
    assert failing.returncode == 1
    shown = [line for line in failing.stdout.splitlines() if line.startswith(("E ", ">"))]
    assert shown[:5] == [
        '>       report = evaluate_file("evals/greeting.yaml", agent=respond)',
        "E       runner.frontends.python.EvaluationFailed: FAIL  greeting [live]  completion 0.00",
        "E         evals/greeting.yaml:2:1",
        "E         - goal 'greet': not said: nothing in the assistant's messages contains all keywords; the closest "
        "(message 2) misses 'hello', 'help'",
        "E       1 failed; 1 case(s) failed: exit 1"], failing.stdout
    assert "evaluation.py" not in failing.stdout  # evalrun's own frames are hidden


def weather_turns(fake: FakeOpenAI) -> None:
    fake.script(Reply(tool_calls=[tool_call("get_weather", {"location": "Paris"}, "call_w1")]),
                "It is sunny in Paris.", "You're welcome.")


WEATHER_SUITE = """
    id: weather
    starting_sentence: What's the weather in Paris?
    user_prompts: [Thanks!]
    goals: {get_weather: [tell]}
    goal_details:
      - {type: tool_call, name: get_weather, tool_name: get_weather, args: {location: Paris}}
      - {type: text, name: tell, keywords: [sunny]}
    """


def run_agent(root: Path, agent: dict, fake: FakeOpenAI, name: str = "target", *, process: bool = False) -> dict:
    write(root / "evalrun.yaml", f"embeddings: {{enabled: false}}\nagents:\n  {name}: {json.dumps(agent)}\n")
    run = run_cli_process if process else run_cli  # in this process unless the agent's imports must not stay here
    done = run("suites/", "--output-dir", "out", cwd=root,
               env={"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test"})
    assert done.returncode == 0, done.stdout + done.stderr
    [case] = json.loads((root / "out" / "report.json").read_text())["cases"]
    return case


def assert_history_reached_the_second_turn(fake: FakeOpenAI) -> None:
    """The wrappers are stateless: the second turn's request carries the first turn's call and its result."""
    second = fake.requests[-1]["messages"]
    assert [m["role"] for m in second if m["role"] != "system"] == ["user", "assistant", "tool", "assistant", "user"]
    call = next(m for m in second if m["role"] == "assistant" and m.get("tool_calls"))["tool_calls"][0]
    assert (call["id"], call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "call_w1", "get_weather", {"location": "Paris"})
    assert next(m for m in second if m["role"] == "tool")["content"] == "It is sunny in Paris."
    assert all(request["model"] == "gpt-4o-mini" for request in fake.requests)


def test_the_langgraph_wrapper_runs_as_written(tmp_path):
    root = project_from_readme(tmp_path, "my_agents/weather_langgraph.py")
    write(root / "suites" / "weather.yaml", WEATHER_SUITE)
    with FakeOpenAI() as fake:
        weather_turns(fake)
        case = run_agent(root, {"type": "python", "entrypoint": "my_agents.weather_langgraph:respond"}, fake)
    assert case["status"] == "passed", case
    assert_history_reached_the_second_turn(fake)


@pytest.mark.process  # the OpenAI Agents SDK is the installed package `agents`: imported into a test process, it
# shadows every later test's own `agents/` package (seen: 17 tests of one xdist worker failed to import agents.bot)
def test_the_openai_agents_wrapper_runs_as_written(tmp_path):
    root = project_from_readme(tmp_path, "my_agents/weather_openai_agents.py")
    write(root / "suites" / "weather.yaml", WEATHER_SUITE)
    with FakeOpenAI() as fake:
        weather_turns(fake)
        case = run_agent(root, {"type": "python", "entrypoint": "my_agents.weather_openai_agents:respond"}, fake,
                         process=True)
    assert case["status"] == "passed", case
    assert_history_reached_the_second_turn(fake)


def test_the_adk_agent_and_its_case_run_as_written(tmp_path):
    blocks = re.findall(r"```yaml\n(# a case for it\n.*?)```", README, flags=re.S)
    root = project_from_readme(tmp_path, "shop_agent/agent.py")
    write(root / "suites" / "order.yaml", blocks[0])
    cases, diagnostics, _ = load_file(root / "suites" / "order.yaml")
    assert diagnostics == [] and [c.id for c in cases] == ["where-is-my-order"]
    readme_agents = yaml.safe_load(next(b for b in re.findall(r"```yaml\n(.*?)```", page("how-to/connect-agents.md"),
                                                              flags=re.S) if b.startswith("agents:")))["agents"]
    with FakeOpenAI() as fake:
        fake.script(Reply(tool_calls=[tool_call("get_order", {"order_id": "A-1042"})]),
                    Reply(tool_calls=[tool_call("transfer_to_agent", {"agent_name": "shipping_agent"})]),
                    Reply(tool_calls=[tool_call("track_parcel", {"tracking_id": "T-77"})]), "It arrives on June 12.")
        case = run_agent(root, readme_agents["shop"], fake, name="shop")
    assert (case["status"], case["metrics"]["journey_completion"]) == ("passed", 1.0)
    saved = saved_conversations(root / "out")["where-is-my-order"]
    assert saved["state"] == {"tier": "gold", "last_order": "A-1042"}


@pytest.mark.process  # `pytest suites/failing -q`, as the page shows it
def test_the_pytest_output_shown_is_what_pytest_prints(tmp_path):
    block = re.search(r"```text\n\$ (pytest suites/failing -q)\n(.*?)```", README, flags=re.S)
    command, shown = block.group(1).split(), [line for line in block.group(2).splitlines() if line != "..."]
    env = cli_env(COLUMNS="80")
    for name in ("CI", "BUILD_NUMBER"):  # pytest prints its summary lines whole on CI: the README shows a terminal
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", *command, "-p", "no:cacheprovider", *OTHER_PLUGINS_OFF,
                           "--evalrun-output-dir", str(tmp_path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    printed = done.stdout.splitlines()
    assert done.returncode == 1 and all(line in printed for line in shown), done.stdout
