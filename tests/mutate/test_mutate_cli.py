"""`evalrun mutate` as a user runs it: the survivors and the suite lines that let them through on the weak suites
and the bundled ones, the kill rate after the suggested fixes, the report files, hostile agent text, the exit
codes (in-process; as a real process for the CI gate and for a stop by a real signal)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner.frontends.cli import main
from tests.helpers.cli_helpers import cli_env, write

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "data" / "mutate"


def _run(tmp_path: Path, *args: str, name: str = "report") -> tuple[int, dict]:
    out = tmp_path / name
    code = main(["mutate", *args, "-o", str(out), "-j", "1", "--no-cache"])
    return code, json.loads((out / "mutate.json").read_text(encoding="utf-8"))


def _survivors(report: dict) -> dict[str, set[tuple[str, str]]]:
    return {case["id"]: {(m["line"], m["detail"]) for m in case["mutants"] if m["status"] == "survived"}
            for case in report["cases"]}


def test_the_weak_suites_name_their_survivors_and_the_lines_responsible(tmp_path, monkeypatch):
    monkeypatch.chdir(DATA)
    code, report = _run(tmp_path, "weak", "--mutants-per-case", "200")
    assert code == 0
    lines = {case: {line for line, _ in found} for case, found in _survivors(report).items()}
    assert lines == {"weak-ignored-arguments": {"weak/ignored_arguments.yaml:12", "weak/ignored_arguments.yaml:16"},
                     "weak-loose-keywords": {"weak/loose_keywords.yaml:25"},
                     "weak-missing-order": {"weak/missing_order.yaml:2"}}
    found = {detail for survivors in _survivors(report).values() for _, detail in survivors}
    assert ("goal 'look_up' does not list `customer` in `args`, so it accepted dropping it: add `customer: ann` to "
            "its `args`") in found
    assert ("`args: {IGNORE: null}` of goal 'transfer' compares no argument and accepted -50 for 50 in `amount`: list "
            "the arguments that matter instead") in found
    assert ("text goal 'confirm' (keywords ['done']) accepted a negated answer: add a keyword for the fact that must "
            "be said, or a `not_contains` check for the wrong one") in found
    assert ("`goals` puts no order between 'look_up' and 'transfer', so swapping them passed: add `look_up: "
            "[transfer]` to `goals` if the order matters") in found
    assert ("extra calls are allowed, so an extra call to transfer_funds passed: consider `forbid_extra_calls: true`, "
            "or `forbid_extra_calls: [transfer_funds]`") in found


def test_after_the_suggested_fixes_the_kill_rate_rises_to_at_least_0_9(tmp_path, monkeypatch):
    monkeypatch.chdir(DATA)
    _, weak = _run(tmp_path, "weak", name="weak")
    code, fixed = _run(tmp_path, "fixed", "--min-kill-rate", "0.9", name="fixed")
    assert code == 0 and not fixed["gate_failed"]
    assert weak["totals"]["kill_rate"] < 0.85
    assert fixed["totals"]["kill_rate"] >= 0.9
    for case in fixed["cases"]:
        assert case["kill_rate"] >= 0.9, case["id"]
    assert main(["mutate", "weak", "--min-kill-rate", "0.9", "-o", str(tmp_path / "gate"), "-j", "1"]) == 1


def test_the_bundled_suites_name_their_survivors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    code, report = _run(tmp_path, "suites")
    assert code == 0
    cases = {case["id"]: case for case in report["cases"]}
    assert {c for c, case in cases.items() if case["mutated"]} == {
        "airline-refuse-cancel", "airline-cancel-within-24h", "direct_reports", "hr-timeoff-basic", "hr-timeoff-checks"}
    assert cases["live-unknown-user"]["reason"] == ("no recording to mutate: the case is played live; give --replay "
                                                    "RUN_DIR of a run that played it, or a `transcript:`")
    survivors = _survivors(report)
    assert ("suites/hr/timeoff.yaml:35", "text goal 'summarize' (keywords ['January 5']) accepted a negated answer: add "
            "a keyword for the fact that must be said, or a `not_contains` check for the wrong one"
            ) in survivors["hr-timeoff-basic"]
    assert ("suites/airline/cancellations.yaml:6", "`forbid_extra_calls` does not cover get_reservation_details, so an "
            "extra call to it passed: add `get_reservation_details` to the list") in survivors["airline-refuse-cancel"]
    equivalent = [m for m in cases["airline-cancel-within-24h"]["mutants"] if m["status"] == "equivalent"]
    assert equivalent and {m["detail"] for m in equivalent} == {
        "the call's result was an error and the case says `failed_calls: ignore`"}
    printed = capsys.readouterr().out
    assert "suites/hr/timeoff.yaml: kill rate 85% (17 killed, 3 survived)" in printed
    assert printed.endswith(f"kill rate {report['totals']['kill_rate']:.0%}\n")


def test_a_replayed_run_folder_is_mutated_from_its_saved_conversations(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["run", "suites/live/timeoff.yaml", "-k", "live-timeoff-scripted", "--output-dir",
                 str(tmp_path / "run"), "-q"]) == 0
    code, report = _run(tmp_path, "suites/live/timeoff.yaml", "-k", "live-timeoff-scripted", "--replay",
                        str(tmp_path / "run"))
    assert code == 0
    [case] = report["cases"]
    assert case["mutated"] and case["killed"] + case["survived"] == 20


def test_report_files_escape_hostile_agent_text(tmp_path, capsys):
    """An argument the suite does not list carries markup, a table pipe and a terminal escape: its survivors
    show it escaped in every format."""
    folder = tmp_path / "s"
    shutil.copytree(DATA / "fixed", folder)
    transcript = json.loads((folder / "transfer.json").read_text(encoding="utf-8"))
    call = transcript["messages"][4]["tool_calls"][0]["function"]
    call["arguments"] = json.dumps({**json.loads(call["arguments"]), "memo": "<script>alert(1)</script>|x|\x1b[31m"})
    (folder / "transfer.json").write_text(json.dumps(transcript), encoding="utf-8")
    code, report = _run(tmp_path, str(folder / "loose_keywords.yaml"), "--mutants-per-case", "200")
    assert code == 0
    assert any(m["status"] == "survived" and m["arg_path"] == "memo" for m in report["cases"][0]["mutants"])
    page = (tmp_path / "report" / "mutate.html").read_text(encoding="utf-8")
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    markdown = (tmp_path / "report" / "mutate.md").read_text(encoding="utf-8")
    assert "\\<script\\>alert(1)\\</script\\>\\|x\\|" in markdown and "\x1b" not in markdown
    assert "\x1b" not in capsys.readouterr().out


def test_nothing_to_mutate_and_usage_errors_have_their_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert main(["mutate", "suites/bank", "-o", str(tmp_path / "bank"), "-j", "1"]) == 5
    assert "evalrun mutate: nothing to mutate: no selected case passes on a recording" in capsys.readouterr().err
    assert main(["mutate", "suites", "--min-kill-rate", "2"]) == 4
    assert "must be between 0 and 1, got 2" in capsys.readouterr().err
    assert main(["mutate", "suites", "--replay", str(tmp_path / "absent")]) == 4
    assert f"--replay {tmp_path / 'absent'}: no such folder" in capsys.readouterr().err
    write(tmp_path / "bad" / "bad.yaml", "id: bad\ngoal_detail: []\n")
    assert main(["mutate", str(tmp_path / "bad"), "-o", str(tmp_path / "b")]) == 4
    assert "bad.yaml:2:1: error: unknown key 'goal_detail'" in capsys.readouterr().err
    failing = tmp_path / "failing"
    shutil.copytree(REPO / "suites" / "failing", failing)
    assert main(["mutate", str(failing / "mistakes.yaml"), "-o", str(tmp_path / "f"), "-j", "1"]) == 5
    report = json.loads((tmp_path / "f" / "mutate.json").read_text(encoding="utf-8"))
    assert all(case["reason"].startswith("it does not pass on its recording (failed: ") for case in report["cases"])


@pytest.mark.process
def test_the_ci_gate_exits_1_naming_the_weakest_cases_as_a_real_process(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "runner", "mutate", "weak", "--min-kill-rate", "0.85",
                                "-o", str(tmp_path / "out")], cwd=DATA, env=cli_env(), capture_output=True,
                               text=True, timeout=300)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.splitlines()[-1] == ("FAILED --min-kill-rate 0.85: weakest: weak-ignored-arguments, "
                                                 "weak-missing-order")


STOPPER = """
import multiprocessing, os, signal

def stop(case, options):
    if case.id == "c3":  # the third case: two have finished, the rest have not started (-j 1)
        target = os.getppid() if multiprocessing.parent_process() is not None else os.getpid()
        os.kill(target, getattr(signal, options["signal"]))
    return True
"""


@pytest.mark.process
@pytest.mark.parametrize("signame, jobs", [("SIGINT", "1"), ("SIGTERM", "1"), ("SIGINT", "2")])
def test_a_stop_keeps_what_finished_in_a_valid_report_and_exits_2(tmp_path, signame, jobs):
    folder = tmp_path / "s"
    shutil.copytree(DATA / "fixed", folder)
    (folder / "stopper.py").write_text(STOPPER, encoding="utf-8")
    case = (folder / "missing_order.yaml").read_text(encoding="utf-8")
    for n in range(1, 7):
        text = case.replace("id: fixed-missing-order", f"id: c{n}").replace(
            "checks:\n", f"checks:\n  - {{type: python, function: \"stopper:stop\", options: {{signal: {signame}}}}}\n")
        (folder / f"c{n}.yaml").write_text(text, encoding="utf-8")
    for name in ("ignored_arguments.yaml", "loose_keywords.yaml", "missing_order.yaml"):
        (folder / name).unlink()
    completed = subprocess.run([sys.executable, "-m", "runner", "mutate", ".", "-j", jobs, "-o", "out", "--cache",
                                "off"], cwd=folder, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert completed.returncode == 2, completed.stderr
    report = json.loads((folder / "out" / "mutate.json").read_text(encoding="utf-8"))
    finished = [c["id"] for c in report["cases"]]
    assert "c6" not in finished and len(finished) < 6
    if jobs == "1":
        assert finished == ["c1", "c2"]
        assert "interrupted: 2 of 6 cases were mutated before the stop; the others were not" in report["notes"]
    assert all(c["mutated"] and c["killed"] == 20 for c in report["cases"])
    assert "evalrun mutate: interrupted" in completed.stderr


def test_a_secret_in_a_mutated_argument_is_masked_in_every_format(tmp_path, monkeypatch, capsys):
    """The value of a variable evalrun.yaml names in `api_key_env` never reaches a report file or the console,
    whole or cut (survivor descriptions cut long values: the redactor runs first)."""
    secret = "sk-mutate-" + "7" * 70
    monkeypatch.setenv("MUTATE_TEST_KEY", secret)
    folder = tmp_path / "s"
    shutil.copytree(DATA / "fixed", folder)
    (folder / "evalrun.yaml").write_text((folder / "evalrun.yaml").read_text(encoding="utf-8") + (
        "judge: {model: openai/gpt-4o-mini, api_key_env: MUTATE_TEST_KEY}\n"), encoding="utf-8")
    transcript = json.loads((folder / "transfer.json").read_text(encoding="utf-8"))
    call = transcript["messages"][4]["tool_calls"][0]["function"]
    call["arguments"] = json.dumps({**json.loads(call["arguments"]), "memo": secret})
    transcript["messages"][-1]["content"] += f" Reference {secret}"
    (folder / "transfer.json").write_text(json.dumps(transcript), encoding="utf-8")
    code, report = _run(tmp_path, str(folder / "loose_keywords.yaml"), "--mutants-per-case", "200")
    assert code == 0
    assert [m for m in report["cases"][0]["mutants"] if m["status"] == "survived" and m["arg_path"] == "memo"]
    printed = capsys.readouterr()
    for text in [*(p.read_text(encoding="utf-8") for p in (tmp_path / "report").iterdir()), printed.out, printed.err]:
        assert "sk-mutate-777" not in text and "7777777777" not in text


def test_without_output_the_report_goes_to_the_projects_reports_folder_and_format_picks_what_is_printed(
        tmp_path, capsys):
    folder = tmp_path / "weak"
    shutil.copytree(DATA / "weak", folder)
    assert main(["mutate", str(folder / "missing_order.yaml"), "-j", "1", "--format", "json"]) == 0
    [written] = list((folder / ".evalrun" / "reports").glob("mutate-*/mutate.json"))
    printed = capsys.readouterr()
    assert json.loads(printed.out) == json.loads(written.read_text(encoding="utf-8"))
    assert printed.err.splitlines()[-1] == f"report: {written.parent}"
    assert {p.name for p in written.parent.iterdir()} == {"mutate.json", "mutate.md", "mutate.html"}
