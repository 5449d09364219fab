"""`skip:` holds true or a reason: the words YAML 1.1 reads as false are refused with the fix, and a run
in which every case was skipped says so and does not exit 0. Through the real CLI."""
from __future__ import annotations

import json

import pytest

from tests.helpers.cli_helpers import run_cli, write, write_json

CASE = """\
id: c1
skip: {skip}
starting_sentence: hi
transcript: t.json
goal_details:
  - {{type: text, name: greet, keywords: [hello]}}
"""
FIX = "is text, so it would skip the case with that word as the reason; write `skip: false`, or remove the key"


@pytest.mark.parametrize("written, shown", [("no", "'no'"), ('"false"', "'false'"), ("off", "'off'"),
                                            ("N", "'N'"), ("'OFF'", "'OFF'")])
def test_a_false_word_in_skip_is_an_error_with_the_fix(tmp_path, written, shown):
    write_json(tmp_path / "t.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    write(tmp_path / "s.yaml", CASE.format(skip=written))
    done = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (4, f"s.yaml:2:7: error: skip: {shown} {FIX}\n")
    run = run_cli("s.yaml", "--output-dir", "out", cwd=tmp_path)
    assert run.returncode == 4 and "nothing was run" in run.stderr


def test_every_yaml_1_1_spelling_of_false_is_refused(tmp_path):
    # YAML 1.1's bool type (yaml.org/type/bool.html): n|N|no|No|NO|false|False|FALSE|off|Off|OFF
    spellings = ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]
    for n, word in enumerate(spellings):
        written = f'"{word}"' if word.lower() == "false" else word  # unquoted, `false` is the boolean
        write(tmp_path / f"s{n}.yaml", CASE.format(skip=written).replace("transcript: t.json\n", "")
              .replace("id: c1", f"id: c{n}"))
    done = run_cli("validate", *(f"s{n}.yaml" for n in range(len(spellings))), cwd=tmp_path)
    assert sorted(done.stdout.splitlines()) == sorted(f"s{n}.yaml:2:7: error: skip: {word!r} {FIX}"
                                                      for n, word in enumerate(spellings))


def test_a_false_word_as_a_files_default_is_reported_where_it_is_written(tmp_path):
    write(tmp_path / "s.yaml", "skip: 'No'\ncases:\n  - {id: a, starting_sentence: x, forbid_extra_calls: true}\n"
                               "  - {id: b, skip: off, starting_sentence: x, forbid_extra_calls: true}\n")
    done = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert done.stdout.splitlines() == [f"s.yaml:1:7: error: skip: 'No' {FIX}", f"s.yaml:4:19: error: cases[1].skip: 'off' {FIX}"]


def test_true_and_real_reasons_still_skip():
    from runner.suite.models import SKIP_FALSE_WORDS, Case

    for value in (True, "waiting for the new HR API", "no API key in CI yet", "yes"):
        assert Case.model_validate({"id": "a", "source": {"path": "x"}, "skip": value}).skip == value
    for word in SKIP_FALSE_WORDS:
        with pytest.raises(ValueError, match="write `skip: false`"):
            Case.model_validate({"id": "a", "source": {"path": "x"}, "skip": word})


def test_a_run_where_every_case_was_skipped_says_so_and_exits_5(tmp_path):
    write_json(tmp_path / "t.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    write(tmp_path / "a.yaml", CASE.format(skip="true"))
    write(tmp_path / "b.yaml", CASE.format(skip='"flaky upstream"').replace("id: c1", "id: c2"))
    done = run_cli("a.yaml", "b.yaml", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 5, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "SKIP  c2  (flaky upstream)" in lines
    assert any(line.startswith("0 passed, 0 failed, 2 skipped in ") for line in lines)
    assert "every case was skipped (2): nothing was checked: exit 5" in lines
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert (summary["exit_code"], summary["exit_reason"]) == (5, "every case was skipped (2): nothing was checked: exit 5")


def test_a_run_with_skipped_and_passed_cases_exits_0_and_counts_the_skipped(tmp_path):
    write_json(tmp_path / "t.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    write(tmp_path / "a.yaml", CASE.format(skip="true"))
    write(tmp_path / "b.yaml", CASE.format(skip="false").replace("id: c1", "id: c2"))
    done = run_cli("a.yaml", "b.yaml", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["exit_reason"] == "all cases that ran passed (1 skipped): exit 0"
