"""The Python API (runner.frontends.python, exported by `runner`): evaluate, aevaluate, evaluate_file, Report."""
from __future__ import annotations

import asyncio
import itertools
import json
import re
import signal
import subprocess
import sys
import time

import pytest

from runner import EvaluationFailed, Report, aevaluate, evaluate, evaluate_file
from runner.run.agents import _inline
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import cli_env, write

_modules = itertools.count()

SUITE = """
    cases:
      - id: greets
        starting_sentence: hi
        goal_details: [{type: text, name: greet, keywords: [hello]}]
      - id: helps
        starting_sentence: I need help
        goal_details: [{type: text, name: offer, keywords: [help]}]
    """


def agent_module(folder, body: str) -> str:
    """A module of a name of its own holding `body`, importable (its folder on sys.path); its name."""
    name = f"api_agent_{next(_modules)}"
    write(folder / f"{name}.py", body)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return name


def report_json(report: Report) -> dict:
    return json.loads(report.path.read_text())


def test_a_function_agent_plays_every_case_and_the_report_has_cases_metrics_and_exit_code(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)
    module = agent_module(tmp_path, """
        def respond(messages, context):
            return "hello, how can I help?"
        """)
    respond = __import__(module).respond
    report = evaluate(tmp_path / "evals", agent=respond, output_dir=tmp_path / "out")
    assert (report.exit_code, report.passed) == (0, True)
    assert [(c.id, c.status) for c in report.cases] == [("greets", "passed"), ("helps", "passed")]
    assert report.metrics == {"pass_rate": 1.0, "journey_completion": 1.0, "tool_call_precision": None,
                              "tool_call_recall": None}
    assert report.path == tmp_path / "out" / "report.json"
    # the report names the function as the user would (it is importable by its own names)
    assert report_json(report)["config"]["agents"] == {"respond": {"type": "python",
                                                                   "entrypoint": f"{module}:respond",
                                                                   "isolate": "none", "tools": None}}
    assert report.case("helps").transcript[-1] == {"role": "assistant", "content": "hello, how can I help?"}
    with pytest.raises(KeyError, match="no case 'nope' in this report \\(cases: greets, helps\\)"):
        report.case("nope")
    assert report.raise_for_failures() is report


def test_a_failing_run_raises_evaluation_failed_with_evalrun_s_explanation(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)
    report = evaluate(tmp_path / "evals", agent=lambda messages, context: "hello", output_dir=tmp_path / "out")
    assert (report.exit_code, [c.status for c in report.cases]) == (1, ["passed", "failed"])
    with pytest.raises(EvaluationFailed) as raised:
        report.raise_for_failures()
    assert isinstance(raised.value, AssertionError) and raised.value.report is report
    first, where, *rest = str(raised.value).splitlines()
    assert where.startswith("  ") and where.endswith("evals/s.yaml:5:5")  # the case's place, relative to the cwd
    assert [first, *rest] == [
        "FAIL  helps [live]  completion 0.00",
        "  - goal 'offer': not said: nothing in the assistant's messages contains all keywords; the closest "
        "(message 2) misses 'help'",
        "1 passed, 1 failed; 1 case(s) failed: exit 1",
        f"report: {tmp_path / 'out' / 'report.json'}"]
    # an agent given as an object is held for the run only, under a name the report shows
    [(name, agent)] = report_json(report)["config"]["agents"].items()
    assert (name, agent["type"]) == ("lambda", "python")
    assert agent["entrypoint"].startswith("runner.run.agents._inline:lambda_")
    assert not hasattr(_inline, agent["entrypoint"].partition(":")[2])


def test_evaluate_file_raises_unless_every_case_passed_and_needs_no_config(tmp_path):
    write(tmp_path / "one.yaml", SUITE)
    assert evaluate_file(tmp_path / "one.yaml", agent=lambda m, c: "hello, help", output_dir=tmp_path / "a").passed
    with pytest.raises(EvaluationFailed, match="FAIL  greets"):
        evaluate_file(tmp_path / "one.yaml", agent=lambda m, c: "help", output_dir=tmp_path / "b")


def test_cases_naming_other_agents_are_played_by_the_agent_given(tmp_path):
    write(tmp_path / "evals" / "s.yaml", "agent: orchestrate_hr_agent\n" + SUITE.replace("\n    ", "\n"))
    report = evaluate(tmp_path / "evals", agent=lambda m, c: "hello, help", output_dir=tmp_path / "out")
    assert report.exit_code == 0, report.explain()


def test_config_as_a_dict_a_path_or_a_declared_agent_s_name(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)
    half = lambda m, c: "hello"  # noqa: E731 - passes one case of two
    assert evaluate(tmp_path / "evals", agent=half, config={"min_pass_rate": 0.5},
                    output_dir=tmp_path / "a").exit_code == 0
    wrong = evaluate(tmp_path / "evals", agent=half, config={"min_pass_rate": 2, "judge": 1})
    assert (wrong.exit_code, wrong.path, wrong.cases) == (4, None, [])
    assert [str(d) for d in wrong.diagnostics] == [
        "config:1:1: error: config: judge: Input should be a valid dictionary or instance of JudgeSettings",
        "config:1:1: error: config: min_pass_rate: Input should be less than or equal to 1"]
    with pytest.raises(EvaluationFailed, match="min_pass_rate: Input should be less than or equal to 1"):
        wrong.raise_for_failures()
    module = agent_module(tmp_path, "def respond(messages, context):\n    return 'hello, help'\n")
    write(tmp_path / "evalrun.yaml", f"embeddings: {{enabled: false}}\nagents:\n"
                                     f"  bot: {{type: python, entrypoint: '{module}:respond'}}\n")
    assert evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", agent="bot",
                    output_dir=tmp_path / "b").exit_code == 0
    typo = evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", agent="bto", output_dir=tmp_path / "d")
    assert typo.exit_code == 4
    assert "--agent bto: not declared in evalrun.yaml (did you mean 'bot'?)" in typo.explain()
    assert evaluate(tmp_path / "evals", agent=f"{module}:respond", output_dir=tmp_path / "e").exit_code == 0
    assert report_json(evaluate(tmp_path / "evals", agent=f"{module}:respond", output_dir=tmp_path / "f"))["config"][
        "agents"] == {"respond": {"type": "python", "entrypoint": f"{module}:respond", "isolate": "none", "tools": None}}


def test_an_adk_agent_object_is_played_through_adk_s_runner(tmp_path):
    from tests.fakes import adk_shop  # google-adk's import (2 s) for this test only, not every worker's collection

    write(tmp_path / "evals" / "order.yaml", """
        id: order
        starting_sentence: Where is order A-1042?
        goal_details:
          - {type: tool_call, name: get_order, tool_name: get_order, args: {order_id: A-1042}}
          - {type: tool_call, name: track, tool_name: track_parcel, args: {tracking_id: T-77}}
        """)
    with FakeOpenAI() as fake:
        adk_shop.script(fake)
        report = evaluate(tmp_path / "evals", agent=adk_shop.build(fake.base_url), output_dir=tmp_path / "out",
                          config={"embeddings": {"enabled": False}})
    assert report.exit_code == 0, report.explain()
    [(name, agent)] = report_json(report)["config"]["agents"].items()
    assert (name, agent["type"]) == ("shop_agent", "adk")


def test_an_agent_of_no_known_kind_is_a_type_error():
    with pytest.raises(TypeError, match=re.escape("agent must be a function (messages, context) -> reply, a Google ADK "
                                                  "agent, 'module:attribute' naming one, or the name of an agent in "
                                                  "evalrun.yaml; got a int")):
        evaluate("nowhere", agent=42)
    with pytest.raises(TypeError, match=re.escape("config must be a path to evalrun.yaml, a dict of its settings or None")):
        evaluate("nowhere", config=3.5)


def test_aevaluate_plays_the_cases_on_the_caller_s_loop(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)
    seen = []

    async def main():
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()  # made on the caller's loop: only usable from it
        ready.set()

        async def respond(messages, context):
            await ready.wait()
            seen.append(asyncio.get_running_loop() is loop)
            return "hello, help"

        return await aevaluate(tmp_path / "evals", agent=respond, output_dir=tmp_path / "out")

    report = asyncio.run(main())
    assert (report.exit_code, seen) == (0, [True, True])


def test_a_cancelled_aevaluate_still_writes_the_report_of_what_finished(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)

    async def main():
        answered = asyncio.Event()

        async def respond(messages, context):
            if context.case_id == "helps":
                await asyncio.Event().wait()  # never answers
            answered.set()
            return "hello"

        task = asyncio.ensure_future(aevaluate(tmp_path / "evals", agent=respond, output_dir=tmp_path / "out"))
        await answered.wait()
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [c["id"] for c in report["cases"]] == ["greets"]
    assert (report["summary"]["interrupted"], report["summary"]["not_run"], report["summary"]["exit_code"]) == (
        True, ["helps"], 2)


def test_importing_runner_stays_light_until_the_api_is_used():
    check = ("import sys, runner; assert 'runner.frontends.python' not in sys.modules and 'runner.api' not in sys.modules; "
             "from runner import evaluate; print(evaluate.__module__)")
    done = subprocess.run([sys.executable, "-c", check], env=cli_env(), capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "runner.frontends.python\n"), done.stderr


def test_ctrl_c_writes_the_report_of_what_finished_then_stops_the_caller(tmp_path):
    write(tmp_path / "evals" / "s.yaml", SUITE)
    write(tmp_path / "script.py", """
        import asyncio, pathlib
        from runner import evaluate

        async def respond(messages, context):
            if context.case_id == "helps":
                pathlib.Path("waiting").write_text("")
                await asyncio.sleep(60)
            return "hello"

        try:
            evaluate("evals", agent=respond, output_dir="out", concurrency=1)
        except KeyboardInterrupt:
            print("stopped by Ctrl-C")
            raise
        """)
    process = subprocess.Popen([sys.executable, "script.py"], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if (tmp_path / "waiting").exists():
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode != 0 and out == "stopped by Ctrl-C\n", err
    assert err.rstrip().endswith("KeyboardInterrupt")
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert (summary["interrupted"], summary["stop_reason"], summary["passed"], summary["not_run"]) == (
        True, "SIGINT", 1, ["helps"])


def test_repeats_takes_what_the_cli_s_repeat_takes_and_runs_the_same_rule(tmp_path, evalrun):
    """evaluate(repeats="auto:...") is `--repeat auto:...`: the same stopping rule, the same runs per case and the
    same verdict; a spec the CLI refuses is a ValueError with the CLI's words."""
    write(tmp_path / "evals" / "s.yaml", SUITE)
    module = agent_module(tmp_path, """
        def respond(messages, context):
            return "hello, how can I help?"
        """)
    write(tmp_path / "evalrun.yaml", f"agents: {{helper: {{type: python, entrypoint: '{module}:respond'}}}}\n")
    report = evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", output_dir=tmp_path / "api",
                      repeats="auto:max=6")
    code, _, _ = evalrun(tmp_path, "run", "evals", "--output-dir", "cli", "--repeat", "auto:max=6")
    api, cli = report_json(report)["summary"]["repeats"], json.loads((tmp_path / "cli" / "report.json").read_text())
    assert (report.exit_code, code) == (0, 0)
    assert api["per_case"] == cli["summary"]["repeats"]["per_case"]
    assert [(c["id"], c["runs"], c["settled"]) for c in api["per_case"]] == [("greets", 4, "passed"),
                                                                             ("helps", 4, "passed")]
    from runner.results.auto_repeat import AutoRepeat

    same = evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", output_dir=tmp_path / "object",
                    repeats=AutoRepeat(max=6))
    assert report_json(same)["summary"]["repeats"]["per_case"] == api["per_case"]
    with pytest.raises(ValueError, match=re.escape("'sometimes' is neither a whole number nor auto[:KEY=VALUE,...]")):
        evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", repeats="sometimes")
    with pytest.raises(TypeError, match="repeats must be a whole number, 'auto"):
        evaluate(tmp_path / "evals", config=tmp_path / "evalrun.yaml", repeats=2.5)
