"""`--last-failed` / `--lf`: rerun only what did not pass in the latest report, through the real CLI."""
from __future__ import annotations

import json

from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json


def suite(root, outcomes: str) -> None:
    """One case per letter: p passes, f fails, e ends in error (its transcript is missing)."""
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    cases = []
    for n, kind in enumerate(outcomes):
        who = "nken" if kind == "f" else "nwaters"
        transcript = "nowhere.json" if kind == "e" else "t.json"
        cases.append(f"""
          - id: c{n}
            transcript: {transcript}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: {who}}}}}""")
    write(root / "suites" / "s.yaml", "cases:" + "".join(cases) + "\n")
    write_json(root / "suites" / "t.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])


def latest(root) -> dict:
    return json.loads((root / ".evalrun" / "reports" / "latest" / "report.json").read_text())


def test_reruns_only_the_failed_and_errored_cases_of_the_latest_report(tmp_path):
    suite(tmp_path, "pfpep")
    assert run_cli("suites", cwd=tmp_path).returncode == 3
    again = run_cli("suites", "--last-failed", cwd=tmp_path)
    assert again.returncode == 3, again.stdout + again.stderr
    assert [(c["id"], c["status"]) for c in latest(tmp_path)["cases"]] == [("c1", "failed"), ("c3", "error")]
    suite(tmp_path, "ppppp")  # both fixed
    fixed = run_cli("suites", "--lf", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert [c["id"] for c in latest(tmp_path)["cases"]] == ["c1", "c3"]
    assert "2 passed, 0 failed" in fixed.stdout


def test_a_latest_report_without_failures_leaves_nothing_to_rerun(tmp_path):
    suite(tmp_path, "pp")
    assert run_cli("suites", cwd=tmp_path).returncode == 0
    done = run_cli("suites", "--lf", cwd=tmp_path)
    assert done.returncode == 5
    assert "evalrun run: warning: --last-failed: no case to rerun: .evalrun/reports/latest/report.json has no failed, " \
           "errored or unscored case" in done.stderr


def test_without_a_latest_report_it_says_so(tmp_path):
    suite(tmp_path, "pf")
    done = run_cli("suites", "--last-failed", cwd=tmp_path)
    assert done.returncode == 4
    assert "evalrun run: error: --last-failed: there is no latest report in .evalrun/reports to take the failed cases " \
           "from: run the suites once without --last-failed" in done.stderr
    assert not (tmp_path / ".evalrun" / "reports" / "latest").exists()
