"""The docs' Google ADK and Agentflow sections (how-to/migrate.md) are runnable: the three commands of each, as written, on real
eval files; the turns example and the ADK criteria examples are valid."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import yaml

from runner.checks.run import check_problem
from runner.suite.load import load_file
from tests.fakes.llm import token_of, verdict
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import REPO, run_cli, write
from tests.helpers.docs_pages import all_pages, page, section
from tests.helpers.shared_data import require_shared

DOCS = all_pages()
SECTION = section(page("how-to/migrate.md"), "## Coming from Google ADK or Agentflow")


def commands(marker: str) -> list[list[str]]:
    """The bash block after `marker` in the section, one command per line, comments dropped."""
    block = SECTION.split(marker, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#", 1)[0]) for line in block.splitlines() if line.strip()]


def run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """The page's `evalrun ...` line, in this process: no step needs one of its own (exit codes and output are
    run_cli's as a process's; the agent's modules, imported from `cwd`, are forgotten after each)."""
    assert argv[0] == "evalrun"
    return run_cli(*argv[1:], cwd=cwd)


def agent_config(tmp_path, judge: str = "") -> None:
    (tmp_path / "weather_agents").mkdir(exist_ok=True)
    shutil.copy(REPO / "suites" / "adk_weather" / "weather_agent.py", tmp_path / "weather_agents" / "weather_agent.py")
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        {judge}
        agents:
          weather_agent: {{type: python, entrypoint: "weather_agents.weather_agent:respond"}}
        """)


def test_the_three_commands_of_an_adk_user(tmp_path):
    steps = commands("For an **ADK user**")
    assert [step[:2] for step in steps] == [["evalrun", "validate"], ["evalrun", "run"], ["evalrun", "convert"]]
    shutil.copytree(REPO / "suites" / "adk_weather", tmp_path / "my_agent" / "eval",
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    agent_config(tmp_path)
    for step in steps:
        done = run(step, tmp_path)
        assert done.returncode == 0, (step, done.stdout, done.stderr)
    assert (tmp_path / "suites" / "weather.yaml").is_file()
    converted = run_cli("run", "suites", "-c", "evalrun.yaml", cwd=tmp_path)  # the test's own check: in this process
    assert converted.returncode == 0, converted.stdout + converted.stderr


def test_the_three_commands_of_an_agentflow_user(tmp_path):
    steps = commands("For an **Agentflow user**")
    assert [step[:2] for step in steps] == [["evalrun", "validate"], ["evalrun", "run"], ["evalrun", "convert"]]
    shutil.copytree(require_shared("agentflow"), tmp_path / "evals")
    with FakeOpenAI() as fake:
        fake.default = lambda request: verdict(token_of(request), True, "same", 1.0)
        agent_config(tmp_path, f"judge: {{model: openai/local-judge, api_base: {fake.base_url}, max_retries: 0}}")
        for step in steps:
            done = run(step, tmp_path)
            assert done.returncode == 0, (step, done.stdout, done.stderr)
    assert (tmp_path / "suites" / "weather_agent.yaml").is_file()


def test_the_turns_example_is_a_valid_suite(tmp_path):
    example = next(b for b in re.findall(r"```yaml\n(.*?)```", DOCS, flags=re.S) if "id: paris-then-london" in b)
    [case], diagnostics, _ = load_file(write(tmp_path / "suites" / "paris.yaml", example))
    assert diagnostics == []
    assert [t.user for t in case.turns] == ["What's the weather in Paris?", "And in London?"]
    assert case.turns[1].calls[0].arg_matching == {"location": "strict", "days": "optional"}


def test_the_adk_criteria_examples_are_valid_checks():
    block = section(page("how-to/checks.md"), "## ADK's criteria, turn by turn").split("```yaml\n", 1)[1].split("```", 1)[0]
    specs = yaml.safe_load(block)
    assert [s["type"] for s in specs] == ["tool_trajectory_avg_score", "response_match_score",
                                          "final_response_match_v2"]
    assert [check_problem(s) for s in specs] == [None, None, None]
