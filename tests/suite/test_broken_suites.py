"""A broken suite in a suites folder is an error, never passed over: misspelt keys, `case:` for `cases:`,
a bare `id`, a file that is not UTF-8. Files that are clearly another tool's still get one note."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from tests.helpers.cli_helpers import run_cli, write, write_json

WHY = "if it is not one, list it under `exclude` in evalrun.yaml"


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "suites" / "good.yaml", "id: good\nstarting_sentence: hi\nforbid_extra_calls: true\n")
    return tmp_path


def validate(root):
    return run_cli("validate", "suites", cwd=root)


def test_a_file_whose_keys_are_all_misspelt_is_an_error_with_did_you_mean(project):
    write(project / "suites" / "typo.yaml", """
        id: refund
        starting_sentance: I want my money back.
        goal_detail:
          - {type: text, name: x, keywords: [refund]}
        """)
    done = validate(project)
    assert done.returncode == 4
    assert done.stdout.splitlines() == [
        "suites/typo.yaml:2:1: error: unknown key 'starting_sentance' in the top level (did you mean 'starting_sentence'?)",
        f"suites/typo.yaml:2:1: warning: this file is checked as a suite because 'starting_sentance' looks like the suite "
        f"key 'starting_sentence'; {WHY}",
        "suites/typo.yaml:3:1: error: unknown key 'goal_detail' in the top level (did you mean 'goal_details'?)"]
    run = run_cli("suites", "--output-dir", "out", cwd=project)
    assert run.returncode == 4 and "nothing was run" in run.stderr


def test_case_for_cases_is_an_error(project):
    write(project / "suites" / "many.yaml", "case:\n  - {id: a, starting_sentence: hi, forbid_extra_calls: true}\n")
    done = validate(project)
    assert done.returncode == 4
    assert done.stdout.splitlines()[0] == "suites/many.yaml:1:1: error: unknown key 'case' in the top level (did you mean 'cases'?)"


def test_a_file_with_an_id_is_a_suite(project):
    write(project / "suites" / "bare.yaml", "id: draft\ndescription: to be written\n")
    done = validate(project)
    assert done.returncode == 4
    assert f"suites/bare.yaml:1:1: warning: this file is checked as a suite because it has an `id`; {WHY}" in done.stdout


def test_a_latin1_suite_is_an_error_naming_the_byte_and_line(project):
    (project / "suites" / "latin1.yaml").write_bytes(
        "id: cafe\nstarting_sentence: Un café, s'il vous plaît\nforbid_extra_calls: true\n".encode("latin-1"))
    done = validate(project)
    assert (done.returncode, done.stdout) == (4, (
        "suites/latin1.yaml:2:26: error: the file is not UTF-8 text: byte 0xE9 at line 2, column 26 is not valid UTF-8 "
        "(in Latin-1 it would be 'é': the file may have been saved as Latin-1); save the file as UTF-8\n"))
    assert run_cli("suites", "--output-dir", "out", cwd=project).returncode == 4


def test_a_utf16_file_is_an_error(project):
    (project / "suites" / "wide.json").write_bytes('{"id": "w"}'.encode("utf-16"))
    done = validate(project)
    assert (done.returncode, done.stdout) == (4, "suites/wide.json:1:1: error: the file is UTF-16 text, not UTF-8; "
                                                 "save it as UTF-8\n")


def test_a_misspelt_key_in_a_file_that_does_not_parse_is_reported(project):
    write(project / "suites" / "broken.yaml", "starting_sentance: hi\ngoal_detail: [unclosed\n")
    done = validate(project)
    assert done.returncode == 4 and done.stdout.startswith("suites/broken.yaml:3:1: error: YAML syntax error")


def test_other_tools_files_are_still_passed_over_with_one_note(project):
    folder = project / "suites"
    write(folder / "agent.yaml", "spec_version: v1\nkind: native\nname: hr_agent\ndescription: An HR agent\n")
    write_json(folder / "weather.evalset.json", {"eval_set_id": "w", "name": "weather", "eval_cases": []})
    write_json(folder / "old.test.json", [{"query": "hi", "expected_tool_use": [], "reference": "hello"}])  # quiet
    write_json(folder / "test_config.json", {"criteria": {"tool_trajectory_avg_score": 1.0}})
    write_json(folder / "nested" / "eval_config.json", {"criteria": {"response_match_score": 0.8}})
    write_json(folder / "schema.json", {"$schema": "https://json-schema.org/draft/2020-12/schema", "id": "x"})
    write_json(folder / "reply.json", {"id": "chatcmpl-1", "object": "chat.completion", "choices": []})
    write_json(folder / "report.json", {"evalrun_version": "0.1", "started_at": "x", "cases": [], "summary": {}})
    write(folder / "tool.yaml", "name: lookup\nparameters: {type: object}\n")
    done = validate(project)
    assert done.returncode == 0, done.stdout
    # ADK's eval sets are read (an empty one holds no case) and its eval configs apply to them: neither is noted
    assert done.stdout == (
        "suites:1:1: warning: passed over 5 files that are not a suite: suites/agent.yaml (a watsonx Orchestrate agent "
        "or tool definition); suites/reply.json (a model's reply); suites/report.json (an evalrun report); "
        "suites/schema.json (a JSON Schema); suites/tool.yaml (no suite keys such as goal_details or cases)\n")


# ------------------------------------------------------------------ "one edit away", against brute force

def _one_edit(word: str, alphabet: str) -> set[str]:
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in splits if b} | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b[1:] for a, b in splits if b for c in alphabet} | {a + c + b for a, b in splits for c in alphabet}
            | {word})


@given(st.text("abc", max_size=5), st.text("abc", max_size=5))
def test_one_edit_apart_agrees_with_brute_force(a, b):
    from runner.suite.shape import one_edit_apart

    assert one_edit_apart(a, b) == (a in _one_edit(b, "abc"))


@given(st.text("abc", max_size=6), st.data())
def test_one_edit_apart_agrees_with_brute_force_near_the_word(b, data):
    """Words one or two edits from `b` (swaps of neighbours and of letters further apart included), which
    independent strings rarely are."""
    from runner.suite.shape import one_edit_apart

    def edited(word):
        candidates = sorted(_one_edit(word, "abc") | {word[:i] + word[j] + word[i + 1:j] + word[i] + word[j + 1:]
                                                      for i in range(len(word)) for j in range(i + 2, len(word))})
        return data.draw(st.sampled_from(candidates))

    a = edited(edited(b)) if data.draw(st.booleans()) else edited(b)
    assert one_edit_apart(a, b) == (a in _one_edit(b, "abc"))


def test_suite_keys_in_capitals_are_suite_like():
    from runner.suite.shape import suite_like_key

    assert [suite_like_key(k) for k in ("GOAL_DETAILS", "Starting_Sentence", "STORY", "CASE")] == [
        "goal_details", "starting_sentence", "story", "cases"]


def test_adk_file_names_are_read_as_adk_files_whatever_their_keys(project):
    # An eval set is read by its name (evalrun reads ADK's formats): one that is not an eval set is a broken
    # suite, not another tool's file; an eval config's stray keys are ignored, as ADK ignores them, and said
    for name in ("weather.test.json", "weather.evalset.json", "test_config.json", "eval_config.json"):
        write_json(project / "suites" / name, {"id": "x", "name": "weather"})
    done = validate(project)
    shapes = ("is not an eval set: ADK and Agentflow eval sets are an object with `eval_set_id` and `eval_cases`, or "
              "ADK's older list of turns ({query, expected_tool_use, reference}) or of sessions ({name, data})")
    assert (done.returncode, done.stdout.splitlines()) == (4, [
        "suites/eval_config.json:2:2: warning: 'id' is not a key of an eval config; ADK ignores it and so does evalrun",
        "suites/eval_config.json:3:2: warning: 'name' is not a key of an eval config; ADK ignores it and so does "
        "evalrun",
        "suites/test_config.json:2:2: warning: 'id' is not a key of an eval config; ADK ignores it and so does evalrun",
        "suites/test_config.json:3:2: warning: 'name' is not a key of an eval config; ADK ignores it and so does "
        "evalrun",
        f"suites/weather.evalset.json:1:1: error: weather.evalset.json {shapes}",
        f"suites/weather.test.json:1:1: error: weather.test.json {shapes}"])


def test_suite_like_keys():
    from runner.suite.shape import suite_like_key

    found = {key: suite_like_key(key) for key in ("starting_sentance", "goal_detail", "case", "Cases", "goal_detials",
                                                  "storyy", "transcripts", "name", "tools", "description", "kind")}
    assert found == {"starting_sentance": "starting_sentence", "goal_detail": "goal_details", "case": "cases",
                     "Cases": "cases", "goal_detials": "goal_details", "storyy": "story", "transcripts": "transcript",
                     "name": None, "tools": None, "description": None, "kind": None}
    assert all(suite_like_key(a + b) is None for a, b in itertools.product(("xy", "zz"), ("goal_details", "cases")))
