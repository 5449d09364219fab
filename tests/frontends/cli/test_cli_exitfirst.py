"""`-x/--exitfirst`: the run stops after the first failed or errored case, says so, and lists what did not run."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json


def suite(tmp_path, outcomes: str) -> None:
    """One case per letter, in order: p passes, f fails, e ends in error (no transcript)."""
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    cases = []
    for n, kind in enumerate(outcomes):
        who = "nken" if kind == "f" else "nwaters"
        transcript = "t/nowhere.json" if kind == "e" else "t/t.json"
        cases.append(f"""
          - id: c{n}-{kind}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: {who}}}}}
            transcript: {transcript}""")
    write(tmp_path / "suites" / "s.yaml", "cases:" + "".join(cases) + "\n")
    write_json(tmp_path / "suites" / "t" / "t.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])


def test_stops_after_the_first_failure_and_lists_the_rest(tmp_path):
    suite(tmp_path, "ppfpfp")
    done = run_cli("suites", "-x", "-j", "1", "--output-dir", "out", "--format", "junit", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert (summary["passed"], summary["failed"], summary["not_run"]) == (2, 1, ["c3-p", "c4-f", "c5-p"])
    assert summary["stop_reason"] == "-x/--exitfirst: 'c2-f' failed"
    assert summary["interrupted"] is False
    reason = "stopped after the first failure (-x/--exitfirst: 'c2-f' failed), 3 case(s) not run; 1 case(s) failed: exit 1"
    assert summary["exit_reason"] == reason
    assert reason in done.stdout.splitlines()
    assert "not run: 3 case(s): c3-p, c4-f, c5-p" in done.stdout.splitlines()
    skipped = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite[@name='not run']")
    assert [c.get("name") for c in skipped.findall("testcase")] == ["c3-p", "c4-f", "c5-p"]


def test_an_error_stops_the_run_with_the_error_exit(tmp_path):
    suite(tmp_path, "pep")
    done = run_cli("suites", "--exitfirst", "-j", "1", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 3
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert (summary["error"], summary["not_run"]) == (1, ["c2-p"])
    assert summary["exit_reason"] == ("stopped after the first failure (-x/--exitfirst: 'c1-e' error), 1 case(s) "
                                      "not run; 1 case(s) ended in error: exit 3")


def test_without_a_failure_everything_runs(tmp_path):
    suite(tmp_path, "ppp")
    done = run_cli("suites", "-x", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert (summary["passed"], summary["not_run"], summary["stop_reason"]) == (3, [], None)
