"""The docs' "Coming from Agentflow / 10xGraph" section (how-to/migrate.md) is runnable: its three commands, as written, on a 10xGraph
project (Python evals in evals/, the graph named by agentflow.json), in the Python >= 3.12 venv that
`.ci/agentflow-venv` makes (skipped, saying so, without it)."""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.agentflow_agent import PROJECT, venv_python, weather_model
from tests.helpers.cli_helpers import cli_env, run_cli, write, write_json
from tests.helpers.docs_pages import page, section

SECTION = section(page("how-to/migrate.md"), "## Coming from Agentflow / 10xGraph")


def commands() -> list[list[str]]:
    block = SECTION.split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#", 1)[0]) for line in block.splitlines() if line.strip()]


def python_project(tmp_path: Path) -> None:
    shutil.copy(PROJECT / "weather_graph.py", tmp_path / "weather_graph.py")
    write_json(tmp_path / "agentflow.json", {"agent": "weather_graph:app"})
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        cache_dir: cache
        agents:
          app: {type: agentflow}
        """)
    write(tmp_path / "evals" / "weather_eval.py", """
        from agentflow.qa.evaluation import (CriteriaConfig, CriterionConfig, EvalConfig, EvalSetBuilder, MatchType,
                                             ToolCall)

        EVAL_CONFIG = EvalConfig(criteria=CriteriaConfig(
            trajectory=CriterionConfig.trajectory(threshold=1.0, match_type=MatchType.IN_ORDER, check_args=True),
            node_order=CriterionConfig.node_order(threshold=1.0, match_type=MatchType.IN_ORDER)))


        def get_eval_set():
            return (EvalSetBuilder("weather")
                    .add_case(query="What's the weather in Paris?", expected="Paris: sunny",
                              expected_tools=[ToolCall(name="get_weather", args={"location": "Paris"})],
                              expected_node_order=["MAIN", "MAIN"], case_id="paris")
                    .build())
        """)
    write(tmp_path / "evals" / "eval_more.py", """
        from agentflow.qa.evaluation import EvalSet, EvalSetBuilder


        def greetings() -> EvalSet:
            return EvalSetBuilder("greetings").add_case(query="hi", expected="Hello! How can I help?", case_id="hi").build()
        """)
    write(tmp_path / "evals" / "confeval.py", """
        from agentflow.qa.evaluation import CriteriaConfig, CriterionConfig, EvalConfig


        def get_eval_config():
            return EvalConfig(criteria=CriteriaConfig(tool_name_match=CriterionConfig.tool_name_match(threshold=1.0),
                                                      rouge_match=CriterionConfig.rouge_match(threshold=0.3)))
        """)


@pytest.mark.process  # the README's commands in the Agentflow venv's interpreter
def test_the_three_commands_of_a_10xgraph_team(tmp_path):
    python = venv_python("agentflow")
    steps = commands()
    assert [step[:2] for step in steps] == [["evalrun", "convert"], ["evalrun", "validate"], ["evalrun", "run"]]
    python_project(tmp_path)
    with FakeOpenAI(default=weather_model) as fake:
        env = cli_env(WEATHER_LLM_URL=fake.base_url, AGENTFLOW_IMPORT="agentflow")
        for step in steps:
            if step[1] == "validate":  # reads files only, imports no Agentflow: in this process
                done = run_cli(*step[1:], cwd=tmp_path)
            else:
                done = subprocess.run([str(python), "-m", "runner", *step[1:], *(["--output-dir", "out"] if
                                                                                step[1] == "run" else [])],
                                      cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, (step, done.stdout, done.stderr)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = {case["id"]: case for case in report["cases"]}
    assert {k: c["status"] for k, c in cases.items()} == {"paris": "passed", "hi": "passed"}
    assert [c["name"] for c in cases["paris"]["checks"]] == ["trajectory", "node_order"]  # the file's own config
    assert [c["name"] for c in cases["hi"]["checks"]] == ["tool_name_match", "rouge_match"]  # confeval.py's


def test_python_evals_are_read_only_when_asked(tmp_path):
    python_project(tmp_path)
    (tmp_path / "evals" / "weather_eval.py").write_text("raise SystemExit('imported!')\n")
    done = run_cli("validate", "evals", cwd=tmp_path)  # an import here would end the command with 'imported!'
    assert (done.returncode, "imported!" in done.stdout + done.stderr) == (0, False)
    assert not (tmp_path / "evals" / "__pycache__").exists()  # nothing of the project was imported


@pytest.mark.parametrize("python", ["/nonexistent/python3"])
def test_an_interpreter_without_the_library_is_a_clear_error(tmp_path, python):
    python_project(tmp_path)
    done = run_cli("convert", "evals", "--from", "agentflow-python", "--python", python, "-o", "out", cwd=tmp_path)
    assert done.returncode == 4
    assert "the project's Python evals could not be read with /nonexistent/python3" in done.stderr
