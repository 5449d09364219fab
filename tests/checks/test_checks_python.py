"""`python` checks: a team's own function, sync or async, on concrete conversations; what each kind of
return value means; errors, bad returns and hangs are the check's `unscored` with the reason."""
from __future__ import annotations

import itertools
import textwrap

import pytest

from runner.checks.run import run_checks
from runner.transcripts.read import build_trajectory
from tests.helpers.checks_cli import TRANSCRIPT
from tests.helpers.checks_text import case_with
from tests.helpers.cli_helpers import run_cli, write, write_json
from tests.helpers.run_live import report_of

_names = itertools.count()


def check_module(tmp_path, source: str) -> str:
    """Write a module with `source` under tmp_path; its name is unique, since imports are cached."""
    name = f"team_checks_{next(_names)}_{tmp_path.name[-8:].replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return name


def one(tmp_path, source, function="check", **spec):
    module = check_module(tmp_path, source)
    [result] = run_checks(case_with({"type": "python", "function": f"{module}:{function}", **spec}),
                          build_trajectory(TRANSCRIPT), base_dir=tmp_path)
    return result


def test_a_function_gets_what_it_names_and_its_dict_decides(tmp_path):
    result = one(tmp_path, """
        def check(final_text, tool_calls, options, case):
            ok = options["id"] in final_text and tool_calls[0]["name"] == "get_assignment_id"
            return {"passed": ok, "score": 0.9, "reason": f"case {case.id}: id given", "evidence": {"calls": len(tool_calls)}}
        """, options={"id": "15778303"})
    assert (result.status, result.score, result.explanation) == ("passed", 0.9, "case t: id given")
    assert result.evidence == {"calls": 1}


@pytest.mark.parametrize("returned, status, score, explanation", [
    ("True", "passed", 1.0, "the function returned True"),
    ("False", "failed", 0.0, "the function returned False"),
    ("0.5", "failed", 0.5, "the function scored 0.5 (score 0.5 < threshold 1)"),
    ("1", "passed", 1.0, "the function scored 1 (score 1 >= threshold 1)"),
    ("{'score': 0.75, 'reason': 'most of it'}", "failed", 0.75, "most of it (score 0.75 < threshold 1)"),
    ("Result(0.8, True, 'fine')", "passed", 0.8, "fine"),
])
def test_return_values(tmp_path, returned, status, score, explanation):
    result = one(tmp_path, f"""
        from dataclasses import dataclass

        @dataclass
        class Result:
            score: float
            passed: bool
            reason: str

        def check(**everything):
            assert set(everything) == {{"case", "trajectory", "messages", "tool_calls", "final_text", "options"}}
            return {returned}
        """)
    assert (result.status, result.score, result.explanation) == (status, score, explanation)


def test_an_async_function_is_awaited_and_threshold_applies(tmp_path):
    result = one(tmp_path, """
        import asyncio

        async def check(messages):
            await asyncio.sleep(0.01)
            return len(messages) / 10
        """, threshold=0.4)
    assert (result.status, result.score) == ("passed", 0.4)


@pytest.mark.parametrize("source, reason", [
    ("def check(final_text):\n    raise ValueError('no id in ' + final_text)\n",
     "it raised ValueError: no id in The assignment id of nwaters is 15778303."),
    ("def check():\n    return None\n",
     "it returned NoneType None; expected a bool, a 0-1 number, a dict or an object with score/passed/reason"),
    ("def check():\n    return 1.5\n", "its score 1.5 is outside 0-1"),
    ("def check():\n    return {'pass': True}\n",
     "it returned a dict with unknown key(s) pass (expected score, passed, reason, evidence)"),
    ("def check():\n    return {'passed': 'yes'}\n", "its `passed` is str 'yes', not true or false"),
    ("def check(answer):\n    return True\n",
     "its parameter(s) answer are not among those a check gets: case, trajectory, messages, tool_calls, final_text, "
     "options"),
    ("x = 1\n", "module '{module}' has no function 'check'"),
])
def test_errors_and_bad_returns_are_unscored_with_the_reason(tmp_path, source, reason):
    module = check_module(tmp_path, source)
    [result] = run_checks(case_with({"type": "python", "function": f"{module}:check"}),
                          build_trajectory(TRANSCRIPT), base_dir=tmp_path)
    assert result.status == "unscored"
    assert result.explanation == f"unscored: function '{module}:check': " + reason.format(module=module)


def test_the_trace_of_an_exception_is_kept(tmp_path):
    result = one(tmp_path, "def helper():\n    return 1 / 0\n\ndef check():\n    return helper()\n")
    assert result.explanation.endswith("it raised ZeroDivisionError: division by zero")
    trace = result.evidence["traceback"]
    assert "in helper" in trace and trace.rstrip().endswith("ZeroDivisionError: division by zero")


def test_a_module_that_fails_to_import_or_is_missing(tmp_path):
    result = one(tmp_path, "import not_a_module_anywhere_xyz\n")
    assert result.explanation.endswith("failed: ModuleNotFoundError: No module named 'not_a_module_anywhere_xyz'")
    [missing] = run_checks(case_with({"type": "python", "function": "no_such_team_module:check"}),
                           build_trajectory(TRANSCRIPT), base_dir=tmp_path)
    assert missing.explanation == (f"unscored: function 'no_such_team_module:check': cannot import module "
                                   f"'no_such_team_module' (looked in {tmp_path} and the installed packages)")


def test_a_hung_function_is_stopped_by_its_timeout(tmp_path):
    result = one(tmp_path, "import time\n\ndef check():\n    time.sleep(30)\n", timeout_s=0.2)
    assert result.explanation.endswith("it did not return within 0.2 s (timeout_s)")


def test_through_the_cli_importing_from_the_config_folder(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "team" / "__init__.py", "")
    write(tmp_path / "team" / "judges.py", """
        def gives_id(final_text):
            return {"passed": "15778303" in final_text, "reason": "the id is in the answer"}

        def broken():
            raise RuntimeError("bug in the team's check")
        """)
    write_json(tmp_path / "suites" / "t.json", TRANSCRIPT)
    write(tmp_path / "suites" / "case.yaml", """
        id: lookup
        starting_sentence: Look up nwaters please.
        transcript: t.json
        checks:
          - {type: python, function: "team.judges:gives_id"}
          - {type: python, function: "team.judges:broken", name: broken}
        """)
    result = run_cli("run", ".", "-c", "../evalrun.yaml", "--output-dir", "out", cwd=tmp_path / "suites")
    assert result.returncode == 3, result.stdout + result.stderr
    case = report_of(tmp_path / "suites")["cases"][0]
    assert case["status"] == "unscored"
    assert [(c["status"], c["explanation"]) for c in case["checks"]] == [
        ("passed", "the id is in the answer"),
        ("unscored", "unscored: function 'team.judges:broken': it raised RuntimeError: bug in the team's check")]
    assert "Traceback" not in result.stdout  # the trace is in the report, not a crash


def test_validate_rejects_a_malformed_function_reference(tmp_path):
    write(tmp_path / "s.yaml", """
        id: c1
        starting_sentence: hi
        checks: [{type: python, function: "team/judges.py"}]
        """)
    result = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert result.returncode == 4
    assert result.stdout.startswith("s.yaml:3:35: error: checks[0].function: 'team/judges.py' does not match ")
