"""mypy over runner/ with the project's configuration (pyproject.toml [tool.mypy]) finds nothing, and the public
API (runner's names: evaluate, aevaluate, evaluate_file, Report, EvaluationFailed) hands a type checker real
types, not Any. One mypy run checks both: the package and a user's file beside it. CI runs mypy itself too."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers.external import missing

ROOT = Path(__file__).resolve().parents[1]

USER_FILE = '''
import runner
from runner import EvaluationFailed, aevaluate, evaluate, evaluate_file

report = evaluate("suites", agent=None, config={"agents": {}}, repeats=1)
reveal_type(report)
reveal_type(evaluate_file("evalset.json"))
reveal_type(report.passed)
reveal_type(report.exit_code)
reveal_type(report.cases)
reveal_type(report.case("c1"))
reveal_type(report.metrics)
reveal_type(report.explain())
reveal_type(report.verdict)
reveal_type(report.summary)
reveal_type(report.raise_for_failures())
reveal_type(EvaluationFailed(report).report)


async def main() -> None:
    reveal_type(await aevaluate(["suites"]))
'''

REVEALED = [
    "runner.frontends.python.Report",
    "runner.frontends.python.Report",
    "bool",
    "int",
    "list[runner.results.models.CaseResult]",
    "runner.results.models.CaseResult",
    "dict[str, float | None]",
    "str",
    "runner.results.verdict.Verdict",
    "runner.results.models.Summary | None",
    "runner.frontends.python.Report",
    "runner.frontends.python.Report",
    "runner.frontends.python.Report",
]


def test_mypy_finds_nothing_in_runner_and_the_public_api_has_real_types(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        missing("mypy is not installed here (it comes with the dev extra)", "EVALRUN_REQUIRE_MYPY")
    user = tmp_path / "uses_evalrun.py"
    user.write_text(USER_FILE)
    done = subprocess.run([sys.executable, "-m", "mypy", "runner", str(user)], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    lines = done.stdout.splitlines()
    problems = [line for line in lines if ": error:" in line or line.startswith("pyproject.toml")]
    revealed = [line.split('Revealed type is "', 1)[1].rstrip('"') for line in lines if "Revealed type is" in line]
    assert problems == [], done.stdout
    assert revealed == REVEALED
    assert (done.returncode, re.sub(r"\d+", "N", lines[-1])) == (0, "Success: no issues found in N source files"), \
        done.stdout + done.stderr
