"""`validate` (and a run that refuses to start) reports every problem at once, sorted by line: an undeclared
agent and a duplicate id too, in a file that has other errors. Tabs in indentation are named as such."""
from __future__ import annotations

import pytest

from tests.helpers.cli_helpers import run_cli, write

CONFIG = "agents:\n  hr_agent: {type: replay}\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "evalrun.yaml", CONFIG)
    write(tmp_path / "suites" / "b.yaml", "id: timeoff\nstarting_sentence: hi\nforbid_extra_calls: true\n")
    write(tmp_path / "suites" / "a.yaml", """
        id: timeoff
        agent: hr_agnet
        starting_sentence: hi
        goal_details:
          - {type: text, name: answer, keywords: [January], respons: x}
        """)
    return tmp_path


EXPECTED = [
    "suites/a.yaml:1:1: error: case 'timeoff': agent 'hr_agnet' is not declared in evalrun.yaml (did you mean "
    "'hr_agent'?) (declared: hr_agent)",
    "suites/a.yaml:1:1: error: duplicate case id 'timeoff': also defined at suites/b.yaml:1:1; set a unique `id`",
    "suites/a.yaml:5:53: error: unknown key 'respons' in goal_details[0] (did you mean 'response'?)",
    "suites/b.yaml:1:1: error: duplicate case id 'timeoff': also defined at suites/a.yaml:1:1; set a unique `id`",
]


def test_validate_reports_the_agent_and_the_duplicate_with_the_files_other_errors(project):
    done = run_cli("validate", "suites", cwd=project)
    assert (done.returncode, done.stdout.splitlines()) == (4, EXPECTED)


def test_a_run_reports_them_all_before_refusing_to_start(project):
    done = run_cli("suites", "--output-dir", "out", cwd=project)
    assert done.returncode == 4
    assert [line for line in done.stderr.splitlines() if line.startswith("suites/")] == EXPECTED


def test_duplicate_ids_inside_a_file_with_errors(tmp_path):
    write(tmp_path / "m.yaml", """
        cases:
          - {id: same, starting_sentence: hi, forbid_extra_calls: true}
          - {id: same, starting_sentence: hi, forbid_extra_calls: true, max_user_turns: 0}
        """)
    done = run_cli("validate", "m.yaml", cwd=tmp_path)
    assert done.stdout.splitlines() == [
        "m.yaml:2:5: error: duplicate case id 'same': also defined at m.yaml:3:5; set a unique `id`",
        "m.yaml:3:5: error: duplicate case id 'same': also defined at m.yaml:2:5; set a unique `id`",
        "m.yaml:3:81: error: cases[1].max_user_turns is 0, but it must be at least 1"]


@pytest.mark.parametrize("text, position", [
    ("id: t\nstarting_sentence: hi\ngoal_details:\n\t- {type: text, name: x, keywords: [a]}\n", "4:1"),
    ("id: t\nstarting_sentence: hi\ngoal_details:\n  - type: text\n    name: x\n\tkeywords: [a]\n", "6:1"),
    ("id: t\nstarting_sentence: hi\ngoal_details:\n  - type: text\n    name: x\n    keywords:\n    -\ta\n", "7:6"),
    ("id: t\nstarting_sentence: hi\ngoal_details:\n  - type: text\n    name: x\n \t keywords: [a]\n", "6:2"),
])
def test_tabs_in_indentation_are_named_at_the_tab(tmp_path, text, position):
    (tmp_path / "t.yaml").write_text(text, encoding="utf-8")
    done = run_cli("validate", "t.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (4, f"t.yaml:{position}: error: tabs cannot indent YAML: use spaces\n")


def test_a_tab_inside_a_value_is_still_text(tmp_path):
    (tmp_path / "t.yaml").write_text('id: t\nstarting_sentence: "a\tb"\nforbid_extra_calls: true\n', encoding="utf-8")
    assert run_cli("validate", "t.yaml", cwd=tmp_path).returncode == 0
