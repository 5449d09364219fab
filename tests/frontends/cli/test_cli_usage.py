"""What a person types on the command line, through the real CLI: option errors as clean usage errors,
--tag without regard to case, --format json accepted, the --agent that played the cases recorded and
shown, and the project's .evalrun/ found from any folder of the project."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.cli_run import lookup_suite, report_of
from tests.helpers.run_live import LOOKUP_AGENT, live_project


@pytest.mark.parametrize("args, line", [
    (["-j", "0"], "evalrun run: error: argument -j/--concurrency: must be at least 1, got 0"),
    (["--concurrency", "two"], "evalrun run: error: argument -j/--concurrency: not a whole number: 'two'"),
    (["--repeat", "-2"], "evalrun run: error: argument --repeat: must be at least 1, got -2"),
    (["--agent", "nobody"], "evalrun run: error: --agent nobody: evalrun.yaml declares no agents; declare it under "
                            "`agents:`:"),
    (["--replay", "nowhere"], "evalrun run: error: --replay: no such folder: 'nowhere'"),
])
def test_an_option_error_is_a_usage_error_that_names_the_option(tmp_path, args, line):
    lookup_suite(tmp_path)
    done = run_cli("suites", "--output-dir", "out", *args, cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert line in done.stderr.splitlines()
    assert ":1:1:" not in done.stderr and not (tmp_path / "out").exists()


def test_tags_are_selected_without_regard_to_case(tmp_path):
    lookup_suite(tmp_path)  # tagged `hr`
    done = run_cli("suites", "--tag", "HR", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c["id"] for c in report_of(tmp_path)["cases"]] == ["lookup"]
    assert report_of(tmp_path)["selection"] == {"filters": [], "tags": ["HR"], "only": None}


def test_format_json_is_accepted_and_names_report_json_once(tmp_path):
    lookup_suite(tmp_path)
    done = run_cli("suites", "--output-dir", "out", "--format", "json", "--format", "md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["report: out/report.json", "summary.md: out/summary.md"]
    again = run_cli("report", "out", "--format", "json", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "out/report.json\n")
    copy = run_cli("report", "out", "--format", "json", "-o", "copy.json", cwd=tmp_path)
    assert (copy.returncode, copy.stdout) == (0, "copy.json\n")
    assert json.loads((tmp_path / "copy.json").read_text()) == report_of(tmp_path)


def test_the_agent_chosen_with_dash_dash_agent_is_recorded_and_shown(tmp_path):
    live_project(tmp_path, LOOKUP_AGENT, config_extra="""
          other:
            type: python
            entrypoint: agents.bot:respond""")
    done = run_cli("suites", "--agent", "other", "--output-dir", "out", "--format", "html", "--format", "md",
                   "--format", "junit", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agent: every live case was played by 'other' (--agent)" in done.stdout.splitlines()
    assert report_of(tmp_path)["agent"] == "other"
    assert ('<div id="agent">Every live case was played by agent <code>other</code> (--agent)</div>'
            in (tmp_path / "out" / "report.html").read_text())
    assert "**Agent:** every live case was played by other (--agent)\n" in (tmp_path / "out" / "summary.md").read_text()
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "out" / "junit.xml").iter("property")}
    assert props["agent"] == "other"
    plain = run_cli("suites", "--output-dir", "plain", cwd=tmp_path)
    assert json.loads((tmp_path / "plain" / "report.json").read_text())["agent"] is None
    assert not any(line.startswith("agent:") for line in plain.stdout.splitlines())


def test_the_projects_evalrun_folder_is_beside_its_config_whatever_folder_runs_it(tmp_path):
    project = tmp_path / "project"
    lookup_suite(project, username="nken")  # fails: something for --last-failed
    (project / ".git").mkdir()  # a repository: evalrun.yaml is found from any folder in it
    write(project / "docs" / "notes.md", "elsewhere in the project\n")
    first = run_cli("../suites", cwd=project / "docs")
    assert first.returncode == 1, first.stdout + first.stderr
    latest = project / ".evalrun" / "reports" / "latest" / "report.json"
    assert latest.is_file() and not (project / "docs" / ".evalrun").exists()
    assert first.stdout.splitlines()[-1].startswith("report: /")  # outside the current folder: shown whole
    again = run_cli("suites", "--lf", cwd=project)  # from the project's own folder: the same history
    assert again.returncode == 1, again.stdout + again.stderr
    assert again.stdout.splitlines()[-1].startswith("report: .evalrun/reports/")
    rescored = run_cli("rescore", str(project / ".evalrun" / "reports" / "latest"), "suites", "--output-dir", "re",
                       cwd=project)
    assert rescored.returncode == 1, rescored.stdout + rescored.stderr
    assert not (tmp_path / ".evalrun").exists()


def test_without_a_config_the_evalrun_folder_goes_to_the_repository_root(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "evals" / "suites" / "s.yaml", """
        id: hello
        goal_details: [{type: text, name: greet, keywords: [hello]}]
        transcript: t.json
        """)
    (tmp_path / "evals" / "suites" / "t.json").write_text(json.dumps([{"role": "assistant", "content": "hello"}]))
    done = run_cli("suites", cwd=tmp_path / "evals")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / ".evalrun" / "reports" / "latest" / "report.json").is_file()
    assert not (tmp_path / "evals" / ".evalrun").exists()
