"""`--baseline` and `--max-regression` on a real run, and `evalrun compare OLD NEW`: exit codes and the
one line that says why, through the real CLI in a subprocess."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from runner.util.resources import schema_path
from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json

ASK = {"role": "user", "content": "hi"}


def call(tool: str, user: str = "nwaters", call_id: str = "c1") -> list[dict]:
    return tool_call_messages(tool, {"username": user}, call_id=call_id)


def project(tmp_path: Path) -> None:
    """Three cases scored on --replay folders: one and two have one goal, three has two goals."""
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: one
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
          - id: two
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
          - id: three
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
              - {type: tool_call, name: get_off, tool_name: get_timeoff, args: {username: nwaters}}
        """)


def recordings(tmp_path: Path, name: str, *, one: bool, two: bool, three: int) -> str:
    """A --replay folder: `one`/`two` pass or fail; `three` achieves that many of its two goals."""
    folder = tmp_path / name
    for case, good in (("one", one), ("two", two)):
        write_json(folder / f"{case}.json", [ASK, *call("get_assignment_id", "nwaters" if good else "nken")])
    calls = [*call("get_assignment_id", "nwaters" if three >= 1 else "nken"),
             *call("get_timeoff", "nwaters" if three >= 2 else "nken", call_id="c2")]
    write_json(folder / "three.json", [ASK, *calls])
    return name


def run(tmp_path: Path, replay: str, out: str, *extra: str):
    return run_cli("suites", "--replay", replay, "--output-dir", out, *extra, cwd=tmp_path)


def summary(tmp_path: Path, out: str) -> dict:
    report = json.loads((tmp_path / out / "report.json").read_text())
    jsonschema.validate(report, json.loads(schema_path("report").read_text()))
    return report["summary"]


def test_a_case_that_passed_in_the_baseline_and_now_fails_exits_1_and_is_named(tmp_path):
    project(tmp_path)
    base = run(tmp_path, recordings(tmp_path, "a", one=True, two=True, three=2), "base")
    assert base.returncode == 0, base.stdout + base.stderr
    worse = recordings(tmp_path, "b", one=False, two=True, three=2)
    done = run(tmp_path, worse, "new", "--baseline", "base/report.json", "--min-pass-rate", "0.5", "--format", "md",
               "--format", "html")
    assert done.returncode == 1, done.stdout + done.stderr
    got = summary(tmp_path, "new")
    assert got["baseline"]["newly_failing"] == ["one"] and got["baseline"]["newly_passing"] == []
    assert got["baseline"]["compared"] == 3 and got["baseline"]["p_value"] == 1.0
    reason = ("baseline base/report.json: 1 case(s) that passed in the baseline now fail (one); mean "
              "journey_completion dropped 0.333 (1.000 → 0.667, allowed 0.000); mean tool_call_precision dropped "
              "0.333 (1.000 → 0.667, allowed 0.000); mean tool_call_recall dropped 0.333 (1.000 → 0.667, allowed "
              "0.000); min_pass_rate 0.50 reached (0.67) although 1 case(s) failed: exit 1")
    assert got["exit_reason"] == reason
    assert reason in done.stdout.splitlines()
    assert "Baseline base/report.json: 1 newly failing, 0 newly passing of 3 compared (exact McNemar p = 1)" in \
        (tmp_path / "new" / "summary.md").read_text()
    assert ('<div id="baseline">Baseline base/report.json: 1 newly failing, 0 newly passing of 3 compared '
            '(exact McNemar p = 1)</div>') in (tmp_path / "new" / "report.html").read_text()


def test_the_baseline_may_be_a_run_folder_and_an_unchanged_run_passes_and_says_so(tmp_path):
    project(tmp_path)
    same = recordings(tmp_path, "a", one=True, two=False, three=2)
    assert run(tmp_path, same, "base").returncode == 1
    done = run(tmp_path, same, "new", "--baseline", "base", "--min-pass-rate", "0.6")
    assert done.returncode == 0, done.stdout + done.stderr
    reason = ("min_pass_rate 0.60 reached (0.67) although 1 case(s) failed; no regression against baseline base "
              "(0 newly passing, 3 compared): exit 0")
    assert summary(tmp_path, "new")["exit_reason"] == reason
    assert reason in done.stdout.splitlines()


def test_a_metric_mean_that_drops_more_than_allowed_exits_1_without_any_case_flipping(tmp_path):
    project(tmp_path)
    # three fails in both runs, but achieves one goal of two in the baseline and none now
    assert run(tmp_path, recordings(tmp_path, "a", one=True, two=True, three=1), "base").returncode == 1
    now = recordings(tmp_path, "b", one=True, two=True, three=0)
    strict = run(tmp_path, now, "strict", "--baseline", "base", "--min-pass-rate", "0.6",
                 "--max-regression", "0.1")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    got = summary(tmp_path, "strict")
    assert got["baseline"]["newly_failing"] == []
    assert got["baseline"]["metric_deltas"]["journey_completion"] == -0.166667
    assert "mean journey_completion dropped 0.167 (0.833 → 0.667, allowed 0.100)" in got["exit_reason"]
    lenient = run(tmp_path, now, "lenient", "--baseline", "base", "--min-pass-rate", "0.6",
                  "--max-regression", "0.2")
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert summary(tmp_path, "lenient")["baseline"]["regressions"] == []


def test_a_run_that_errors_keeps_its_own_exit_code_and_the_comparison_is_still_recorded(tmp_path):
    project(tmp_path)
    assert run(tmp_path, recordings(tmp_path, "a", one=True, two=True, three=2), "base").returncode == 0
    broken = recordings(tmp_path, "b", one=True, two=True, three=2)
    (tmp_path / broken / "two.json").unlink()  # no recording: the case ends in error
    done = run(tmp_path, broken, "new", "--baseline", "base")
    assert done.returncode == 3
    got = summary(tmp_path, "new")
    assert got["baseline"]["newly_failing"] == ["two"]
    assert got["exit_reason"] == "1 case(s) ended in error: exit 3"


def test_a_baseline_that_is_not_a_report_is_a_usage_error_before_anything_runs(tmp_path):
    project(tmp_path)
    replay = recordings(tmp_path, "a", one=True, two=True, three=2)
    (tmp_path / "nothing").mkdir()
    done = run(tmp_path, replay, "new", "--baseline", "nothing")
    assert done.returncode == 4
    assert "evalrun run: error: --baseline: nothing holds no report.json" in done.stderr
    assert not (tmp_path / "new" / "report.json").exists()
    assert run(tmp_path, replay, "new", "--max-regression", "2").returncode == 4


def test_compare_lists_flips_metric_deltas_and_the_mcnemar_verdict(tmp_path):
    project(tmp_path)
    assert run(tmp_path, recordings(tmp_path, "a", one=True, two=True, three=1), "old").returncode == 1
    assert run(tmp_path, recordings(tmp_path, "b", one=False, two=True, three=2), "new").returncode == 1
    done = run_cli("compare", "old", "new/report.json", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "compared 3 case(s): old → new/report.json"
    assert lines[1:3] == ["newly failing: 1",
                          "  one: passed → failed (now: goal 'get_id': called get_assignment_id 1 time(s), never with "
                          "matching arguments; closest at message 2: `username` (strict, decided by exact): expected "
                          "'nwaters', got 'nken')"]
    assert lines[3] == "newly passing: 1"
    assert lines[4].startswith("  three: failed → passed (was: goal 'get_off': called get_timeoff 1 time(s)")
    # one: 1 -> 0, two: 1 -> 1, three: 0.5 -> 1
    assert "  journey_completion: 0.833 → 0.667 (-0.167, 3 cases)  (regression)" in lines
    assert lines[-1] == ("exact McNemar test on the 2 case(s) that flipped (1 newly failing, 1 newly passing): "
                         "p = 1: the difference could be chance (p >= 0.05)")
    assert done.stderr.startswith("1 case(s) that passed in the baseline now fail (one); mean journey_completion "
                                  "dropped 0.167 (0.833 → 0.667, allowed 0.000);")
    assert done.stderr.strip().endswith(": exit 1")

    md = run_cli("compare", "old", "new", "--format", "md", cwd=tmp_path)
    assert md.returncode == 1
    assert "| one | passed | failed |" in md.stdout
    assert "| three | failed | passed |" in md.stdout
    assert "| journey_completion | 0.833 | 0.667 | -0.167 ⚠ | 3 |" in md.stdout
    assert "| case | was | now | why it fails now |" in md.stdout

    same = run_cli("compare", "old", "old", cwd=tmp_path)
    assert same.returncode == 0 and same.stderr.strip() == "no regression: exit 0"
    assert same.stdout.splitlines()[-1] == "no case changed outcome: nothing to test"
    assert run_cli("compare", "old", "missing", cwd=tmp_path).returncode == 4
