"""`evalrun list`: each case a run would collect, with where it is and what would play it; the same
selection as `run` (exclude, -k, --tag), checked against what a run then reports."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import REPO, run_cli, write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    return tmp_path


def test_the_listing_names_each_case_its_place_format_tags_player_and_turns(project: Path) -> None:
    listed = run_cli("list", "suites", "-k", "timeoff", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "hr-timeoff-basic          suites/hr/timeoff.yaml:4         yaml  hr,smoke   replay transcripts/hr-timeoff-basic.json  1 turn",
        "hr-timeoff-checks         suites/hr/timeoff_checks.yaml:7  yaml  hr,checks  replay transcripts/hr-timeoff-basic.json  1 turn",
        "live-timeoff-scripted     suites/live/timeoff.yaml:7       yaml  hr,live    agent hr_agent                            2 turns",
        "live-timeoff-one-message  suites/live/timeoff.yaml:31      yaml  hr,live    agent hr_agent                            1 turn",
    ]
    assert listed.stderr.splitlines()[-1] == "4 cases"


@pytest.mark.parametrize("selection", [[], ["-k", "live"], ["--tag", "smoke"], ["-k", "air*", "--tag", "policy"],
                                       ["suites/failing"]])
def test_list_shows_exactly_the_cases_a_run_runs(project: Path, selection: list[str]) -> None:
    paths = [a for a in selection if a.startswith("suites/")] or ["suites"]
    options = [a for a in selection if not a.startswith("suites/")]
    listed = run_cli("list", *paths, *options, "--format", "json", cwd=project)
    run_cli("run", *paths, *options, "--output-dir", "out", cwd=project)
    report = json.loads((project / "out" / "report.json").read_text())
    assert [c["id"] for c in json.loads(listed.stdout)] == [c["id"] for c in report["cases"]]


def test_an_invalid_suite_is_reported_and_nothing_is_listed(project: Path) -> None:
    write(project / "suites" / "bad.yaml", "starting_sentence: hi\ngoal_details: [{type: text, nme: x}]\n")
    listed = run_cli("list", "suites", cwd=project)
    assert listed.returncode == 4
    assert listed.stdout == ""
    assert listed.stderr.startswith("suites/bad.yaml:2:")


def test_no_selected_case_exits_5(project: Path) -> None:
    listed = run_cli("list", "suites", "-k", "no-such-case", cwd=project)
    assert listed.returncode == 5
    assert listed.stderr.splitlines() == ["no cases collected (check -k/--tag)"]


def test_json_listing_has_every_field(project: Path) -> None:
    listed = run_cli("list", "suites/live/timeoff.yaml", "-k", "scripted", "--format", "json", cwd=project)
    assert json.loads(listed.stdout) == [{
        "id": "live-timeoff-scripted", "source": "suites/live/timeoff.yaml:7", "format": "yaml", "tags": ["hr", "live"],
        "agent": "hr_agent", "transcript": None, "turns": 2, "simulated": False}]


def test_a_foreign_eval_set_is_listed_with_its_format(project: Path) -> None:
    listed = run_cli("list", "suites/adk_weather", "--format", "json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert [(c["id"], c["format"], c["agent"]) for c in json.loads(listed.stdout)] == [
        ("paris_then_london", "ADK eval set", "weather_agent"), ("compare_in_celsius", "ADK eval set", "weather_agent")]
