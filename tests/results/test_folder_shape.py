"""A suites folder is taken by the shape of its files: broken transcripts, agent definitions, configs
and reports that live beside the suites never block a run; files named on the command line stay strict."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner import __version__
from runner.suite.load import load_suites
from tests.helpers.cli_helpers import run_cli, write, write_json
from tests.helpers.shared_data import require_shared

SUITE = """\
starting_sentence: hi
goal_details:
  - {type: text, name: greet, keywords: [hello]}
transcript: transcripts/t.json
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("content", [b'[{"role": "user", "cont', b"", b"\xff\xfe not utf-8", b"{}"])
def test_a_bad_transcript_inside_the_suites_folder_does_not_block_validate(project, content):
    write(project / "suites" / "a.yaml", SUITE)
    (project / "suites" / "transcripts").mkdir()
    (project / "suites" / "transcripts" / "t.json").write_bytes(content)
    done = run_cli("validate", "suites", cwd=project, timeout=60)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout


def test_a_truncated_transcript_is_that_cases_error_at_run_time(project):
    write(project / "suites" / "a.yaml", SUITE)
    write(project / "suites" / "b.yaml", SUITE.replace("transcripts/t.json", "transcripts/good.json"))
    write(project / "suites" / "transcripts" / "t.json", '[{"role": "user", "cont')
    write_json(project / "suites" / "transcripts" / "good.json",
               [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    done = run_cli("suites", "--output-dir", "out", cwd=project, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr  # one case in error, not a usage error (4)
    report = json.loads((project / "out" / "report.json").read_text(encoding="utf-8"))
    statuses = {c["id"]: c["status"] for c in report["cases"]}
    assert statuses == {"a": "error", "b": "passed"}


def test_other_files_are_passed_over_with_one_note(project):
    write(project / "suites" / "a.yaml", SUITE.replace("transcript: transcripts/t.json\n", ""))
    write(project / "suites" / "agent.yaml", "spec_version: v1\nkind: native\nname: hr_agent\ntools: [a, b]\n")
    write(project / "suites" / "config.yaml", "test_paths: [a.json]\noutput_dir: out\n")
    write_json(project / "suites" / "report.json", {"version": 1, "evalrun_version": __version__,
                                                     "started_at": "2025-01-01", "config": {}, "cases": [], "summary": {}})
    write(project / "suites" / "results.jsonl", '{"id": "a"}\n')
    result = load_suites([Path("suites")])
    assert [c.id for c in result.cases] == ["a"]
    assert [str(d) for d in result.diagnostics] == [
        "suites:1:1: warning: passed over 3 files that are not a suite: suites/agent.yaml (a watsonx Orchestrate "
        "agent or tool definition); suites/config.yaml (a watsonx Orchestrate evaluation config); "
        "suites/report.json (an evalrun report)"]


def test_a_broken_file_that_names_suite_keys_is_still_reported(project):
    write(project / "suites" / "a.yaml", "goal_details:\n  - {type: text, name: x\n")
    assert [d.code for d in load_suites([Path("suites")]).diagnostics] == ["yaml-syntax"]


def test_files_named_on_the_command_line_stay_strict(project):
    write(project / "agent.yaml", "spec_version: v1\nname: hr_agent\n")
    write(project / "empty.yaml", "")
    codes = [d.code for d in load_suites([Path("agent.yaml"), Path("empty.yaml")]).diagnostics]
    assert codes == ["unknown-key", "unknown-key", "empty"]


def test_the_watsonx_evaluate_folder_as_it_is(project):
    """watsonx's examples/evaluations/evaluate/: datasets, a sub-folder of datasets, an agent definition
    and the tools' code, and a config of its own; the recorded runs sit in a folder of their own."""
    examples = require_shared("watsonx-examples")
    folder = project / "evaluate"
    (folder / "data_no_summary").mkdir(parents=True)
    shutil.copy(examples / "evaluate__data_simple.json", folder / "data_simple.json")
    shutil.copy(examples / "evaluate__data_complex.json", folder / "data_complex.json")
    shutil.copy(examples / "evaluate__data_no_summary__data_simple.json", folder / "data_no_summary" / "data_simple.json")
    write_json(folder / "agent_tools" / "hr_agent.json",
               {"spec_version": "v1", "style": "default", "name": "hr_agent", "llm": "watsonx/x",
                "description": "An HR agent", "instructions": "Use the tools.", "collaborators": [],
                "tools": ["get_assignment_id_hr_agent", "get_timeoff_schedule_hr_agent"]})
    write(folder / "agent_tools" / "tools.py", "def get_assignment_id_hr_agent(username): ...\n")
    shutil.copy(examples / "analysis__config.yml", folder / "config.yml")
    done = run_cli("validate", "evaluate", cwd=project, timeout=60)
    assert done.returncode == 0, done.stdout
    assert done.stdout == ("evaluate:1:1: warning: passed over 2 files that are not a suite: "
                           "evaluate/agent_tools/hr_agent.json (a watsonx Orchestrate agent or tool definition); "
                           "evaluate/config.yml (a watsonx Orchestrate evaluation config)\n")
    result = load_suites([Path("evaluate")])
    assert sorted(str(c.source) for c in result.cases) == [
        "evaluate/data_complex.json:1:1", "evaluate/data_no_summary/data_simple.json:1:1", "evaluate/data_simple.json:1:1"]
