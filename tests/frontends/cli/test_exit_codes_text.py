"""The exit codes are defined once, with their meanings (runner.layout.EXIT_CODES): `evalrun --help`
and report.json's schema print that definition, so they cannot drift from what a run decides (issue 30: --help
said exit 5 is "no cases collected" while a run whose every case was skipped exits 5 too)."""
from __future__ import annotations

import json
import re

from runner.frontends.cli import main
from runner.layout import EXIT_CODES, EXIT_NO_CASES
from runner.results.verdict import decide
from tests.helpers.cli_helpers import REPO


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_help_gives_every_exit_code_its_one_meaning(capsys):
    assert main(["--help"]) == 0
    shown = _one_line(capsys.readouterr().out)
    assert [c.code for c in EXIT_CODES] == [0, 1, 2, 3, 4, 5]
    for code in EXIT_CODES:
        assert f" {code.code} {_one_line(code.meaning)}" in shown, f"--help does not say what exit {code.code} means"
    assert " 5 nothing was checked: no cases collected, or every case was skipped" in shown


def test_exit_5_means_what_a_run_decides_it_for():
    class Tally:  # every selected case finished skipped
        counts = {"passed": 0, "failed": 0, "error": 0, "unscored": 0, "skipped": 3}
        finished = selected = ["a", "b", "c"]
        judge_fallback_cases = 0
        pass_rate = None

    verdict = decide(Tally())
    assert verdict.exit_code == EXIT_NO_CASES
    assert verdict.reason == "every case was skipped (3): nothing was checked: exit 5"
    assert "every case was skipped" in {c.code: c.meaning for c in EXIT_CODES}[EXIT_NO_CASES]


def test_the_report_schema_names_the_exit_codes_as_defined():
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    description = schema["$defs"]["Summary"]["properties"]["exit_code"]["description"]
    assert description.startswith("As pytest: " + ", ".join(f"{c.code} {c.name}" for c in EXIT_CODES))
