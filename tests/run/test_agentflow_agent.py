"""`type: agentflow` (alias `10xgraph`): a graph built with the library (a model node on the fake OpenAI-compatible
server, a ToolNode with two tools, compiled at import time) played by evalrun's CLI in a Python >= 3.12 venv, its
verdicts equal to those of the library's own AgentEvaluator on the same eval set; and the clear error on older
Pythons. The venvs come from `.ci/agentflow-venv`; without them these tests skip, saying so."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.agentflow_agent import PROJECT, VENVS, venv_python, weather_model  # noqa: F401 - shared with other test modules
from tests.helpers.agentflow_files import call, criterion, eval_case, eval_config, eval_set, invocation
from tests.helpers.cli_helpers import cli_env, run_cli, write, write_json

RESULT_NAMES = {"tool_trajectory_avg_score": "trajectory", "tool_name_match_score": "tool_name_match",
                "node_order_score": "node_order", "rouge_match": "rouge_match", "contains_keywords": "contains_keywords"}


CASES = eval_set("weather", *[
    eval_case("paris", invocation("What's the weather in Paris?", [call("get_weather", {"location": "Paris"})],
                                  "Paris is sunny, 21 C", nodes=("MAIN", "MAIN"), invocation_id="p1")),
    eval_case("two_cities", invocation("What's the weather in Oslo and Rome?",
                                       [call("get_weather", {"location": "Rome"}), call("get_weather", {"location": "Oslo"})],
                                       "Oslo sunny, Rome sunny", invocation_id="t1")),
    # Slowtown's call is made first and finishes last: Agentflow records (and scores) the order they finish in
    eval_case("forecast", invocation("What's the forecast in Slowtown and Fastville?",
                                     [call("get_forecast", {"location": "Fastville"}),
                                      call("get_forecast", {"location": "Slowtown"})], "rain", invocation_id="f1")),
    eval_case("broken_tool", invocation("Please break", [call("get_weather", {"location": "Atlantis"})],
                                        "I could not get the weather.", invocation_id="b1")),
    eval_case("two_turns", invocation("hi", [], "Hello!", invocation_id="h1"),
              invocation("now convert 20", [call("to_fahrenheit", {"celsius": 20})], "That is 68.0 F",
                         nodes=("MAIN", "MAIN"), invocation_id="h2")),
])
CONFIG = eval_config(tool_name_match=criterion(0.8), trajectory=criterion(1.0, match_type="EXACT", check_args=True),
                     node_order=criterion(1.0, match_type="IN_ORDER"), rouge_match=criterion(0.5),
                     contains_keywords=criterion(0.5, keywords=["sunny", "F"]))


def project(tmp_path: Path, graph: str = "graph: weather_graph:app") -> None:
    for name in ("weather_graph.py", "own_evaluator.py"):
        shutil.copy(PROJECT / name, tmp_path / name)
    write_json(tmp_path / "evals" / "weather.evalset.json", CASES)
    write_json(tmp_path / "evals" / "eval_config.json", CONFIG)
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        cache_dir: cache
        default_agent: weather
        agents:
          weather: {{type: agentflow, {graph}}}
        """)


def finished(running: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        stdout, stderr = running.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        running.kill()
        raise
    return subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr)


def alias_and_project_file(tmp_path: Path) -> None:
    """`type: 10xgraph` (the alias) with no `graph:`: the project's agentflow.json names the graph."""
    project(tmp_path, graph="")
    (tmp_path / "evalrun.yaml").write_text((tmp_path / "evalrun.yaml").read_text().replace("agentflow, }",
                                                                                        "10xgraph}"))
    write_json(tmp_path / "agentflow.json", {"agent": "weather_graph:app"})


@pytest.mark.process  # Agentflow needs Python >= 3.12: the run is evalrun in that venv's interpreter
@pytest.mark.parametrize("import_name", ["agentflow", "tenxgraph"])
def test_a_graph_plays_the_eval_set_and_the_verdicts_are_agentflows_own(tmp_path, import_name):
    """Each venv runs one of the two ways to name the graph (its own run each: a run is ~3 s of a child's CPU):
    `type: agentflow, graph: ...` in the 10xGraph venv; in the Agentflow one, the project file names the graph and
    `type: 10xgraph` is an alias."""
    python = venv_python(import_name)
    if import_name == "agentflow":
        alias_and_project_file(tmp_path)
        assert "type: 10xgraph}" in (tmp_path / "evalrun.yaml").read_text()
    else:
        project(tmp_path)
    with FakeOpenAI(default=weather_model) as fake:
        env = cli_env(WEATHER_LLM_URL=fake.base_url, AGENTFLOW_IMPORT=import_name)
        # four conversations at once (-j 4): each records only its own calls and node visits; the library's own
        # evaluator runs beside it (two cores: the two interpreters' imports overlap)
        ours_running = subprocess.Popen([str(python), "-m", "runner", "run", "evals", "--config", "evalrun.yaml",
                                         "--output-dir", "out", "--quiet", "-j", "4"], cwd=tmp_path, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        theirs_running = subprocess.Popen([str(python), "own_evaluator.py", "evals/weather.evalset.json",
                                           "evals/eval_config.json"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
        done, theirs = map(finished, (ours_running, theirs_running))
    assert done.returncode == 1, done.stdout + done.stderr  # broken_tool fails
    assert theirs.returncode == 0, theirs.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    ours = {case["id"]: case for case in report["cases"]}
    own = json.loads(theirs.stdout)
    assert set(ours) == set(own) == {"paris", "two_cities", "forecast", "broken_tool", "two_turns"}
    for eval_id, verdict in own.items():
        case = ours[eval_id]
        assert case["status"] == ("passed" if verdict["passed"] else "failed"), (eval_id, case, verdict)
        assert {c["name"]: c["score"] for c in case["checks"]} == \
            {RESULT_NAMES[k]: v for k, v in verdict["scores"].items()}, eval_id
    assert [ours[k]["status"] for k in ("paris", "two_cities", "broken_tool", "two_turns")] == \
        ["passed", "failed", "failed", "passed"]  # two_cities: ROUGE 0.46 < 0.5
    assert next(c for c in ours["forecast"]["checks"] if c["name"] == "trajectory")["score"] == 1.0
    # what Agentflow scores: the arguments the tool received (not the undeclared `bogus`), node visits with
    # __start__, the failed call kept in the conversation but marked failed
    paris = next(line for line in (tmp_path / "out" / "conversations.jsonl").read_text().splitlines()
                 if '"paris"' in line[:40])
    saved = json.loads(paris)
    call_message = next(m for m in saved["messages"] if m.get("tool_calls"))
    assert json.loads(call_message["tool_calls"][0]["function"]["arguments"]) == {"location": "Paris"}
    assert saved["state"]["agentflow"]["node_visits"] == ["__start__", "MAIN", "MAIN"]
    broken = ours["broken_tool"]
    trajectory = next(c for c in broken["checks"] if c["name"] == "trajectory")
    assert "1 failed call(s) left out (Agentflow never records a call that raised)" in trajectory["explanation"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the error of an interpreter Agentflow cannot run on")
def test_on_an_older_python_the_case_errors_saying_what_is_needed(tmp_path):
    project(tmp_path)
    done = run_cli("run", "evals", "--config", "evalrun.yaml", "--output-dir", "out", "--quiet", cwd=tmp_path)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert done.returncode == 3, done.stdout
    errors = {case["error"] for case in report["cases"]}
    assert len(errors) == 1
    assert errors.pop() == ("the agent could not start: type: agentflow needs Python 3.12 or newer (Agentflow and "
                            f"10xGraph require it); this evalrun runs on Python {sys.version.split()[0]}: pip install "
                            "'evalrun[agentflow]' (or 10xgraph) in a Python >= 3.12 environment")
