"""One run, one verdict, whatever the front door: the CLI, evaluate/evaluate_file, aevaluate and pytest
(plain and with pytest-xdist) play the same scenarios and must agree on every case's status and on the
run's verdict (runner.results.verdict): its exit code and the reason report.json gives for it.

How each front end shows the verdict: the CLI exits with it; evaluate/aevaluate return it
(`Report.verdict`, `Report.passed == verdict.ok`); evaluate_file raises EvaluationFailed unless it is OK;
pytest sets its session's exit status from it and its terminal summary says "evalrun: run verdict exit N:
why" (a case that passed on its own does not make a run whose verdict is not OK pass). Where pytest's own
code takes precedence it is said in the row (a suite error is a collection error; another test's failure
is not hidden behind the verdict's 5).

Recorded transcripts only: no model, no embeddings; the judge of the fallback row is a closed port. Plain pytest
runs in this process (pytest.main, its plugins loaded through their entry points as in a process of its own);
pytest -n 2 and a real SIGINT need processes.
"""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import cli_env, tool_call_messages, write, write_json
from tests.helpers.pytest_plugin import pytest_command, pytest_here, pytest_in

NO_EMBEDDINGS = "embeddings: {enabled: false}\n"
LOOKUP = """
    id: {case_id}
    goal_details:
      - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: {username}}}}}
    transcript: t/{case_id}.json
    {extra}
    """


def lookup(root: Path, case_id: str, *, username: str = "nwaters", extra: str = "") -> None:
    write(root / "suites" / f"{case_id}.yaml", LOOKUP.format(case_id=case_id, username=username, extra=extra))
    write_json(root / "suites" / "t" / f"{case_id}.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenario(root: Path, name: str) -> dict:
    """Write the scenario's project under `root`; the options every front end is given (as RunRequest's)."""
    write(root / "evalrun.yaml", NO_EMBEDDINGS)
    if name == "all_pass":
        lookup(root, "a")
        lookup(root, "b")
    elif name in ("one_fails", "min_pass_rate_unmet"):
        lookup(root, "a")
        lookup(root, "b", username="someone-else")
        if name == "min_pass_rate_unmet":
            write(root / "evalrun.yaml", NO_EMBEDDINGS + "min_pass_rate: 0.9\n")
    elif name == "one_unscored":
        lookup(root, "a")
        write(root / "suites" / "u.yaml", """
            id: u
            goal_details:
              - {type: interaction, name: greet}
            transcript: t/u.json
            """)
        write_json(root / "suites" / "t" / "u.json", [{"role": "user", "content": "hi"},
                                                      {"role": "assistant", "content": "hello"}])
    elif name == "judge_down_fallback":  # the case passes on rapidfuzz's word, the judge being unreachable
        write(root / "evalrun.yaml", NO_EMBEDDINGS + "cache_dir: cache\njudge: {model: openai/fake-judge, "
              f"api_base: 'http://127.0.0.1:{closed_port()}/v1', timeout_s: 2, max_retries: 0}}\n")
        write(root / "suites" / "fuzzy.yaml", """
            id: fuzzy
            goal_details:
              - type: tool_call
                name: search
                tool_name: search_flights
                args: {destination: Paris Charles de Gaulle airport}
                arg_matching: {destination: fuzzy}
            transcript: t/fuzzy.json
            """)
        write_json(root / "suites" / "t" / "fuzzy.json",
                   tool_call_messages("search_flights", {"destination": "Paris Charles de Gaulle airprt"}))
    elif name == "baseline_regression":  # b passed in the baseline and fails now
        lookup(root, "a")
        lookup(root, "b", username="someone-else")
        write_json(root / "baseline.json", baseline_report(root))
        return {"baseline": root / "baseline.json"}
    elif name == "all_skipped":
        lookup(root, "a", extra="skip: not ready")
        lookup(root, "b", extra="skip: not ready")
    elif name == "invalid_suite":
        write(root / "suites" / "bad.yaml", "id: bad\ngoal_details: [{type: tool_call, name: x}]\ntranscript: 7\n")
    return {}


def baseline_report(root: Path) -> dict:
    """A saved run in which both cases passed (as report.json has it)."""
    from runner.frontends.python import evaluate

    passing = root.parent / (root.name + "-baseline")
    write(passing / "evalrun.yaml", NO_EMBEDDINGS)
    lookup(passing, "a")
    lookup(passing, "b")
    report = evaluate(passing / "suites", config=passing / "evalrun.yaml", output_dir=passing / "out")
    assert report.passed, report.explain()
    return json.loads(report.path.read_text())


# (case statuses, exit code, the reason's start) every front end must agree on
EXPECTED = {
    "all_pass": ({"a": "passed", "b": "passed"}, 0, "all cases passed"),
    "one_fails": ({"a": "passed", "b": "failed"}, 1, "1 case(s) failed"),
    "one_unscored": ({"a": "passed", "u": "unscored"}, 3, "1 case(s) could not be scored"),
    "judge_down_fallback": ({"fuzzy": "passed"}, 3, "1 case(s) rest on verdicts reached without the judge"),
    "min_pass_rate_unmet": ({"a": "passed", "b": "failed"}, 1, "1 case(s) failed; pass rate 0.50 is below"),
    "baseline_regression": ({"a": "passed", "b": "failed"}, 1, "baseline "),
    "all_skipped": ({"a": "skipped", "b": "skipped"}, 5, "every case was skipped (2)"),
    "invalid_suite": ({}, 4, None),
}
SCENARIOS = list(EXPECTED)


def statuses_of(report_json: Path) -> tuple[dict, str]:
    report = json.loads(report_json.read_text())
    return {c["id"]: c["status"] for c in report["cases"]}, report["summary"]["exit_reason"]


def through_cli(root: Path, options: dict, monkeypatch, capsys) -> tuple[int, dict, str]:
    from runner.frontends.cli import main

    monkeypatch.chdir(root)
    argv = ["run", "suites", "--output-dir", "out-cli"]
    if "baseline" in options:
        argv += ["--baseline", str(options["baseline"])]
    code = main(argv)
    capsys.readouterr()
    if not (root / "out-cli" / "report.json").is_file():
        return code, {}, None
    return (code, *statuses_of(root / "out-cli" / "report.json"))


def through_evaluate(root: Path, options: dict, **_) -> tuple[int, dict, str]:
    from runner.frontends.python import evaluate

    report = evaluate(root / "suites", config=root / "evalrun.yaml", output_dir=root / "out-py", **options)
    assert report.passed == report.verdict.ok == (report.exit_code == 0)
    assert report.verdict.exit_code == report.exit_code
    if report.summary is None:
        return report.exit_code, {}, None
    assert report.verdict.reason == report.summary.exit_reason
    return report.exit_code, {c.id: c.status for c in report.cases}, report.summary.exit_reason


def through_aevaluate(root: Path, options: dict, **_) -> tuple[int, dict, str]:
    from runner.frontends.python import aevaluate

    report = asyncio.run(aevaluate(root / "suites", config=root / "evalrun.yaml", output_dir=root / "out-async",
                                   **options))
    assert report.passed == report.verdict.ok
    if report.summary is None:
        return report.exit_code, {}, None
    return report.exit_code, {c.id: c.status for c in report.cases}, report.summary.exit_reason


def pytest_args(options: dict) -> list[str]:
    return ["--evalrun-baseline", str(options["baseline"])] if "baseline" in options else []


def through_pytest(root: Path, options: dict, *workers: str) -> tuple[int, dict, str]:
    """pytest in this process; with xdist's workers (`-n 2`), in a process of its own (its workers are)."""
    args = ("suites", "--evalrun-output-dir", "out-pytest", *pytest_args(options), *workers)
    done = pytest_in(root, *args) if workers else pytest_here(root, *args)
    report = root / "out-pytest" / "report.json"
    if not report.is_file():
        return done.returncode, {}, done.stdout
    statuses, reason = statuses_of(report)
    if done.returncode != 0 and "run verdict" in done.stdout:  # the terminal summary says why
        code = json.loads(report.read_text())["summary"]["exit_code"]
        assert f"evalrun: run verdict exit {code}: {reason.rsplit(': exit ', 1)[0]}" in done.stdout, done.stdout
    return done.returncode, statuses, reason


def check(name: str, got: tuple[int, dict, str], front_end: str) -> None:
    statuses, code, reason = EXPECTED[name]
    assert (front_end, got[0]) == (front_end, code), got
    assert (front_end, got[1]) == (front_end, statuses)
    if reason is not None:
        assert got[2].startswith(reason), (front_end, got[2])


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_cli_and_python_agree(name, tmp_path, monkeypatch, capsys):
    options = scenario(tmp_path / name, name)
    results = {"cli": through_cli(tmp_path / name, options, monkeypatch, capsys),
               "evaluate": through_evaluate(tmp_path / name, options),
               "aevaluate": through_aevaluate(tmp_path / name, options)}
    for front_end, got in results.items():
        check(name, got, front_end)
    reasons = {got[2] for got in results.values()}
    assert len(reasons) == 1, reasons  # the one verdict, word for word


@pytest.mark.parametrize("name", SCENARIOS)
def test_evaluate_file_raises_exactly_when_the_verdict_is_not_ok(name, tmp_path):
    """Each suite file of the scenario alone: evaluate_file raises EvaluationFailed exactly when evaluate's
    verdict on that file is not OK, and carries that verdict."""
    from runner.frontends.python import EvaluationFailed, evaluate, evaluate_file

    root = tmp_path / name
    options = scenario(root, name)
    for n, suite in enumerate(sorted((root / "suites").glob("*.yaml"))):
        verdict = evaluate(suite, config=root / "evalrun.yaml", output_dir=root / f"out-{n}", **options).verdict
        try:
            evaluate_file(suite, config=root / "evalrun.yaml", output_dir=root / f"out-file-{n}", **options)
            raised = None
        except EvaluationFailed as exc:
            raised = exc.report.verdict
        assert raised == (None if verdict.ok else verdict), suite.name


# The scenarios pytest -n 2 plays too. What xdist changes is where the verdict is reached: the workers play the
# cases and send each result (the whole CaseResult, as JSON) with its test's report; the controller, which
# collected nothing, reads the project, saves what arrives and sets its session's exit status from the verdict.
# Each row kept brings a path of its own through that: a result the controller must not lose on the way
# (unscored; skipped, with no failed test behind it; the judge fallback's mark on a passing case) and an exit
# status it must override (1 -> 3, 0 -> 5, 0 -> 3), or a run-level rule it applies to the merged results (the
# baseline, given on the command line). The rows left to plain pytest add nothing to that: all_pass's passing
# results travel in every kept row, and a passing run under -n 2 exits 0 in tests/frontends/pytest/
# test_pytest_plugin.py (the `evalrun init` project); one_fails has baseline_regression's cases, statuses and
# exit 1 (only the reason's tail differs, written by the code its plain row checks); min_pass_rate_unmet is a
# run-level rule over the merged statuses, as the baseline's is, read from the project the controller reads in
# every row. Each xdist row starts three interpreters: these are the rows that pay for them.
XDIST_SCENARIOS = ["one_unscored", "judge_down_fallback", "baseline_regression", "all_skipped"]


@pytest.mark.parametrize("name, workers", [
    *(pytest.param(n, (), id=f"{n}-plain") for n in SCENARIOS if n != "invalid_suite"),
    *(pytest.param(n, ("-n", "2"), id=f"{n}-xdist", marks=pytest.mark.process) for n in XDIST_SCENARIOS)])
def test_pytest_agrees_with_the_cli(name, workers, tmp_path):
    """pytest's exit status is the run's verdict where pytest alone would pass (the fallback row: 3 where
    pytest printed "1 passed" and exited 0; every case skipped: 5) and where the verdict is more serious than
    a failed test (an unscored case: 3)."""
    options = scenario(tmp_path / name, name)
    check(name, through_pytest(tmp_path / name, options, *workers), "pytest " + " ".join(workers))


def test_an_invalid_suite_is_a_usage_error_in_python_and_a_collection_error_in_pytest(tmp_path):
    options = scenario(tmp_path, "invalid_suite")
    done = pytest_here(tmp_path, "suites", *pytest_args(options))
    # pytest's own code for a file it cannot collect (2, "errors during collection"), the suite's error shown
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout
    assert "ERROR suites/bad.yaml" in done.stdout and "bad.yaml:" in done.stdout


def slow_project(root: Path) -> None:
    """Cases played by a Python agent that sleeps: a signal finds them in flight. The first two cases are quick
    (the tests wait for their results), every other one takes 4 s, so however loaded the machine and however many
    cases a front end plays at once, most of the run is still ahead when the signal comes."""
    write(root / "evalrun.yaml", NO_EMBEDDINGS + "agents:\n  bot: {type: python, entrypoint: agents.bot:respond}\n")
    write(root / "agents" / "__init__.py", "")
    write(root / "agents" / "bot.py", """
        import time

        def respond(messages, context):
            time.sleep(0.05 if context.case_id in ("c00", "c01") else 4)
            return "hello"
        """)
    write(root / "suites" / "s.yaml", "agent: bot\ncases:\n" + "".join(
        f"  - id: c{n:02d}\n    starting_sentence: hi\n    goal_details: [{{type: text, name: t, keywords: [hello]}}]\n"
        for n in range(40)))


@pytest.mark.process
@pytest.mark.parametrize("front_end", ["cli", "pytest"])
def test_an_interrupted_run_exits_2_with_the_report_of_what_finished(front_end, tmp_path):
    """A real SIGINT in the middle of the run: the CLI and pytest both exit 2 and write report.json, whose
    verdict says interrupted. (evaluate re-raises KeyboardInterrupt after writing it; aevaluate, cancelled,
    writes it and re-raises CancelledError: tests/frontends/test_evaluate_api.py.)"""
    slow_project(tmp_path)
    command = [sys.executable, "-m", "runner", "suites", "--output-dir", "out", "-j", "1"] if front_end == "cli" else \
        pytest_command("suites", "--evalrun-output-dir", "out")
    process = subprocess.Popen(command, cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    results = tmp_path / "out" / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.is_file() and results.read_text().count("\n") >= 2):
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, out + err
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["exit_code"] == 2 and summary["interrupted"], summary
    assert summary["exit_reason"].startswith("interrupted (")
    assert 2 <= summary["passed"] < 40


def test_no_front_end_inspects_an_outcome_to_learn_whether_the_run_goes_on():
    """A step that ends the run raises RunEnded, caught at the session's boundary (runner.session.ended)."""
    runner = Path(__file__).resolve().parents[2] / "runner"
    found = [f"{path.relative_to(runner)}:{n}" for path in sorted(runner.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "isinstance(" in line and "RunOutcome)" in line]
    assert found == []


def test_an_unknown_option_is_a_type_error_naming_the_known_ones(tmp_path):
    from runner.frontends.python import evaluate

    with pytest.raises(TypeError, match=r"unknown option 'min_passrate'; did you mean 'min_pass_rate'\? \(known: .*"
                                        r"baseline, .*exitfirst"):
        evaluate(tmp_path, min_passrate=0.5)


def test_a_run_request_is_frozen(tmp_path):
    import dataclasses

    from runner.api import RunRequest

    request = RunRequest([tmp_path])
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.exitfirst = True
