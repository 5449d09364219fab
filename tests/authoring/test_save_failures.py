"""`run --save-failures FILE`: the failed and errored cases as one suite, unchanged but for the
transcript paths, which rerun alone from another folder with the same verdicts."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from runner.suite.load import load_file
from tests.helpers.cli_helpers import REPO, run_cli, write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    write(tmp_path / "suites" / "failing" / "broken.yaml", """
        id: missing-recording
        tags: [broken]
        goal_details:
          - {type: text, name: answer, keywords: [hello]}
        transcript: transcripts/not-there.json
        """)
    return tmp_path


def verdicts(report: Path) -> dict[str, tuple[str, list[str], str]]:
    cases = json.loads(report.read_text())["cases"]
    return {c["id"]: (c["status"], c["failures"], (c["error"] or "").split(": ", 1)[0]) for c in cases}


def test_failed_and_errored_cases_rerun_alone_from_anywhere_with_the_same_verdicts(project: Path) -> None:
    first = run_cli("run", "suites/failing", "suites/hr", "--output-dir", "first", "--save-failures",
                    "elsewhere/failures.yaml", cwd=project)
    assert first.returncode == 3  # one case errored
    saved_file = project / "elsewhere" / "failures.yaml"
    config = (project / "suites" / "evalrun.yaml").resolve()
    assert ("saved 8 cases that did not pass to elsewhere/failures.yaml: evalrun run elsewhere/failures.yaml "
            "--config suites/evalrun.yaml (elsewhere/failures.yaml lies outside the folder of suites/evalrun.yaml, "
            "so a rerun does not find it by itself)") in first.stderr
    before = verdicts(project / "first" / "report.json")
    not_passed = {i for i, (status, _, _) in before.items() if status in ("failed", "error")}
    assert len(not_passed) == 8 and len(before) > 8  # suites/failing: 4 mistakes, 3 bank states, 1 broken

    saved, _diagnostics, _ = load_file(saved_file)
    assert {c.id for c in saved} == not_passed
    originals = {c.id: c for path in (project / "suites" / "failing").glob("*.yaml") for c in load_file(path)[0]}
    for case in saved:  # everything as written, but where the recording is
        keep = {"id", "tags", "goals", "goal_details", "forbid_extra_calls", "starting_sentence", "agent"}
        assert case.model_dump(include=keep) == originals[case.id].model_dump(include=keep)
    text = saved_file.read_text()
    assert text.splitlines()[1] == f"# Rerun them alone: evalrun run elsewhere/failures.yaml --config {config}"
    assert ("  # failed: goal 'get_assignment_id': called get_assignment_id_hr_agent 1 time(s), never with matching "
            "arguments;") in text
    assert "  # error: transcript file not found: " in text
    # copied, as it lies outside the file's folder, under a name of its own: the id and a hash of it
    assert re.search(r"\n    transcript: failures\.transcripts/wrong-argument-[0-9a-f]{10}\.json\n", text)

    shutil.move(str(project / "elsewhere"), str(project / "moved"))
    rerun = run_cli("run", "failures.yaml", "--config", str(config), "--output-dir", "again", cwd=project / "moved")
    assert rerun.returncode == 3
    # the recorded cases replay anywhere with the same verdicts, and the live ones (the bank agent's) are played
    # by the agent the run's evalrun.yaml declares, which the rerun command names
    assert verdicts(project / "moved" / "again" / "report.json") == {i: before[i] for i in not_passed}


def test_a_recording_inside_the_files_folder_is_referenced_not_copied(project: Path) -> None:
    run_cli("run", "suites/failing", "--save-failures", "suites/failures.yaml", cwd=project)
    text = (project / "suites" / "failures.yaml").read_text()
    assert "    transcript: failing/transcripts/wrong-order.json\n" in text
    assert not (project / "suites" / "failures.transcripts").exists()


def test_nothing_failed_nothing_written(project: Path) -> None:
    ran = run_cli("run", "suites/hr", "--save-failures", "failures.yaml", cwd=project)
    assert ran.returncode == 0
    assert "--save-failures: no case failed or ended in error; failures.yaml was not written" in ran.stderr
    assert not (project / "failures.yaml").exists()


def test_a_file_that_cannot_be_written_is_said_and_the_runs_verdict_stands(project: Path) -> None:
    write(project / "taken", "a file, not a folder\n")
    ran = run_cli("run", "suites/failing", "--save-failures", "taken/failures.yaml", cwd=project)
    assert ran.returncode == 3
    assert "--save-failures: cannot write taken/failures.yaml: " in ran.stderr
