"""The docs' Final state page (how-to/final-state.md) runs: its three files, written where their first lines say, give the
console output it shows (but for the time taken)."""
from __future__ import annotations

import re

import yaml

from runner.suite.load import load_file
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.docs_pages import page

SECTION = page("how-to/final-state.md")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", SECTION, flags=re.S)


def test_the_final_state_example_runs_as_shown(tmp_path):
    files = [block for block in blocks("python") + blocks("yaml") if re.match(r"# [\w/.]+\.(py|yaml)\b", block)]
    assert len(files) == 3
    for block in files:
        name = block.split()[1].rstrip(":")
        write(tmp_path / name, block)
    shown = blocks("console")[0].splitlines()
    assert shown[0] == "$ evalrun suites/"
    result = run_cli("suites/", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr

    def steady(lines):
        lines = [re.sub(r" in \d+\.\d+s$", " in TIME", line) for line in lines if not line.startswith("report: ")]
        finished = lines.index("")  # cases run side by side: their result lines come in the order they finish
        return sorted(lines[:finished]) + lines[finished:]

    assert steady(result.stdout.splitlines()) == steady(shown[1:])


def test_the_effects_example_validates(tmp_path):
    snippet = next(b for b in blocks("yaml") if b.startswith("initial_state:"))
    case = {"id": "pay", "starting_sentence": "Pay B-2 30 from A-1.", **yaml.safe_load(snippet)}
    cases, diagnostics, _ = load_file(write(tmp_path / "pay.yaml", yaml.safe_dump(case)))
    assert diagnostics == [] and cases[0].tool_goals()[0].effects[1].arg == "*"
