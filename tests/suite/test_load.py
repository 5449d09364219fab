"""Collecting suite files into cases: multi-case files, defaults, ids, folders, and the shipped examples."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from runner.api import validate
from runner.suite.load import Exclusion, load_file, load_suites
from tests.helpers.shared_data import require_shared, shared_file, shared_files, shared_params

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "suites"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "suites"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: str, text: str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def texts(diagnostics) -> list[str]:
    return [str(d) for d in diagnostics]


# ---------------------------------------------------------------- one case, several cases

def test_single_case_id_defaults_to_the_file_stem(workdir):
    cases, diagnostics, is_suite = load_file(write("hr/time-off.yaml", "forbid_extra_calls: true\n"))
    assert (diagnostics, is_suite) == ([], True)
    assert [c.id for c in cases] == ["time-off"]
    assert str(cases[0].source) == "hr/time-off.yaml:1:1"


def test_multi_case_ids_default_to_stem_and_position(workdir):
    text = "cases:\n  - forbid_extra_calls: true\n  - id: named\n    forbid_extra_calls: true\n  - forbid_extra_calls: true\n"
    cases, diagnostics, _ = load_file(write("loans.yaml", text))
    assert diagnostics == []
    assert [c.id for c in cases] == ["loans-1", "named", "loans-3"]
    assert [str(c.source) for c in cases] == ["loans.yaml:2:5", "loans.yaml:3:5", "loans.yaml:5:5"]


def test_file_defaults_apply_to_each_case(workdir):
    text = """\
$schema: ../schemas/suite.schema.json
description: shared by the file, not a default
tags: [lib, smoke]
agent: library_agent
forbid_extra_calls: [renew_*]
failed_calls: ignore
extra_args: forbid
max_user_turns: 4
skip: not yet
tool_outputs: {hours: {open: 9}, map: x}
runtime_context: {branch: central, lang: en}
cases:
  - id: a
    tags: [extra, smoke]
    goal_details: []
  - id: b
    agent: other_agent
    forbid_extra_calls: true
    failed_calls: count
    extra_args: allow
    max_user_turns: 9
    skip: false
    tool_outputs: {map: y}
    runtime_context: {lang: fr}
    goal_details: []
"""
    cases, diagnostics, _ = load_file(write("lib.yaml", text))
    assert diagnostics == []
    a, b = cases
    assert a.tags == ["lib", "smoke", "extra"]  # merged, file tags first, no repeats
    assert (a.agent, a.forbid_extra_calls, a.failed_calls, a.extra_args, a.max_user_turns, a.skip) == (
        "library_agent", ["renew_*"], "ignore", "forbid", 4, "not yet")
    assert a.tool_outputs == {"hours": {"open": 9}, "map": "x"}
    assert a.runtime_context == {"branch": "central", "lang": "en"}
    assert a.description is None  # a file description describes the file
    assert b.tags == ["lib", "smoke"]
    assert (b.agent, b.forbid_extra_calls, b.failed_calls, b.extra_args, b.max_user_turns, b.skip) == (
        "other_agent", True, "count", "allow", 9, False)
    assert b.tool_outputs == {"hours": {"open": 9}, "map": "y"}
    assert b.runtime_context == {"branch": "central", "lang": "fr"}


def test_keys_that_cannot_be_shared(workdir):
    text = "id: x\nstory: s\nstarting_sentence: hi\ngoal_details: []\ncases:\n  - forbid_extra_calls: true\n"
    cases, diagnostics, _ = load_file(write("m.yaml", text))
    shared = ("agent, tags, forbid_extra_calls, failed_calls, extra_args, max_user_turns, tool_outputs, runtime_context, "
              "canaries, skip, termination, timeout_s, checks, session_input, tools, final_state, final_state_matching, "
              "initial_state, tool_effects")
    assert cases == []
    assert texts(diagnostics) == [
        f"m.yaml:{line}:1: error: '{key}' cannot be shared by all cases; move it into each case under `cases` "
        f"(keys that can be shared: {shared})"
        for line, key in ((1, "id"), (2, "story"), (3, "starting_sentence"), (4, "goal_details"))
    ]


def test_cases_items_are_checked_with_their_positions(workdir):
    text = "cases:\n  - 1\n  - id: x\n    bogus: 1\n"
    assert texts(load_file(write("m.yaml", text))[1]) == [
        "m.yaml:2:5: error: cases[0] must be a mapping, got the number 1",
        "m.yaml:4:5: error: unknown key 'bogus' in cases[1]",
    ]


def test_empty_cases(workdir):
    assert texts(load_file(write("m.yaml", "cases: []\n"))[1]) == ["m.yaml:1:8: error: cases needs at least 1 item(s)"]


@pytest.mark.parametrize("text", ["", "# nothing here\n", "---\n", "~\n"])
def test_empty_suite_file(workdir, text):
    assert texts(load_file(write("e.yaml", text))[1]) == [
        "e.yaml:1:1: error: the file is empty: a suite needs at least `goal_details` or `cases`"]


@pytest.mark.parametrize("text, what", [("- a\n- b\n", "a list"), ("hello\n", "a single value")])
def test_a_suite_must_be_a_mapping(workdir, text, what):
    assert texts(load_file(write("e.yaml", text))[1]) == [
        "e.yaml:1:1: error: a suite file must be a mapping of keys (a case, or `cases:` with a list); "
        f"this one is {what}"]


def test_schema_key_watsonx_context_and_file_upload_are_accepted(workdir):
    text = """\
$schema: ./suite.schema.json
runtime_context: {sap_username: nwaters}
file_upload: {file_path: id-card.jpg, file_id: "001", content_type: image/jpeg}
goal_details:
  - {type: tool_call, name: up, tool_name: upload, args: {IGNORE: null}}
  - {type: tool_call, name: get, tool_name: get_id, args: {file: "<IGNORE>", user: nwaters}}
"""
    cases, diagnostics, _ = load_file(write("w.yaml", text))
    assert diagnostics == []
    assert cases[0].runtime_context == {"sap_username": "nwaters"}
    assert cases[0].file_upload.file_path == "id-card.jpg"
    assert cases[0].tool_goals()[0].args == {"IGNORE": None}
    assert cases[0].tool_goals()[1].args["file"] == "<IGNORE>"


def test_unknown_file_upload_keys_are_errors_like_everywhere_else(workdir):
    text = 'file_upload: {file_path: id.jpg, uploaded_by: user}\nforbid_extra_calls: true\n'
    assert texts(load_file(write("w.yaml", text))[1]) == [
        "w.yaml:1:34: error: unknown key 'uploaded_by' in file_upload"]


def test_missing_transcript_is_a_warning_and_the_case_still_loads(workdir):
    cases, diagnostics, _ = load_file(write("t/s.yaml", "forbid_extra_calls: true\ntranscript: rec/none.json\n"))
    assert texts(diagnostics) == [
        "t/s.yaml:2:13: warning: transcript 'rec/none.json' does not exist (relative to t); "
        "the case will end in error when run"]
    assert [c.id for c in cases] == ["s"]


def test_values_keep_their_text(workdir):
    text = ("goal_details:\n  - type: tool_call\n    name: a\n    tool_name: t\n"
            "    args: {day: 2025-01-01, answer: no, code: 01234, flag: on, n: 3}\n")
    cases, diagnostics, _ = load_file(write("v.yaml", text))
    assert diagnostics == []
    assert cases[0].tool_goals()[0].args == {"day": "2025-01-01", "answer": "no", "code": "01234", "flag": "on", "n": 3}


# ---------------------------------------------------------------- many files

def test_case_ids_unique_across_files_both_places_reported(workdir):
    write("s/a.yaml", "id: same\nforbid_extra_calls: true\n")
    write("s/sub/b.yml", "cases:\n  - forbid_extra_calls: true\n  - id: same\n    forbid_extra_calls: true\n")
    write("s/c.json", '{"id": "other", "forbid_extra_calls": true}')
    result = load_suites([Path("s")])
    assert texts(result.diagnostics) == [
        "s/a.yaml:1:1: error: duplicate case id 'same': also defined at s/sub/b.yml:3:5; set a unique `id`",
        "s/sub/b.yml:3:5: error: duplicate case id 'same': also defined at s/a.yaml:1:1; set a unique `id`",
    ]
    assert [c.id for c in result.cases] == ["other"]  # files with errors yield no cases


def test_default_ids_can_collide_too(workdir):
    write("x/loans.yaml", "forbid_extra_calls: true\n")
    write("y/loans.json", '{"forbid_extra_calls": true}')
    assert texts(load_suites([Path("x"), Path("y")]).diagnostics) == [
        "x/loans.yaml:1:1: error: duplicate case id 'loans': also defined at y/loans.json:1:1; set a unique `id`",
        "y/loans.json:1:1: error: duplicate case id 'loans': also defined at x/loans.yaml:1:1; set a unique `id`",
    ]


def test_folders_are_searched_recursively_and_quietly_skip_non_suites(workdir):
    write("s/a.yaml", "forbid_extra_calls: true\n")
    write("s/deep/er/b.yml", "forbid_extra_calls: true\n")
    write("s/deep/c.json", '{"forbid_extra_calls": true}')
    write("s/transcripts/run.json", '[{"role": "user", "content": "hi"}]')
    write("s/transcripts/wrapped.json", '{"messages": [{"role": "user", "content": "hi"}]}')
    write("s/a.messages.json", '{"whatever": 1}')
    write("s/a.metrics.json", '{"whatever": 1}')
    write("s/.hidden/broken.yaml", "id: [\n")
    write("s/node_modules/broken.yaml", "id: [\n")
    write("s/notes.txt", "id: [\n")
    write("s/evalrun.yaml", "similarity_threshold: 0.5\n")
    result = load_suites([Path("s")])
    assert result.diagnostics == []
    assert sorted(c.id for c in result.cases) == ["a", "b", "c"]
    assert result.files == ["s/a.yaml", "s/deep/c.json", "s/deep/er/b.yml"]


def test_a_recording_named_explicitly_is_an_error(workdir):
    write("run.json", '[{"role": "user", "content": "hi"}]')
    write("wrapped.json", '{"messages": []}')
    assert texts(load_suites([Path("run.json"), Path("wrapped.json")]).diagnostics) == [
        "run.json:1:1: error: a suite file must be a mapping of keys (a case, or `cases:` with a list); "
        "this one is a list",
        "wrapped.json:1:2: error: unknown key 'messages' in the top level",
    ]


def test_a_yaml_list_in_a_folder_is_passed_over_with_a_note_but_named_it_is_an_error(workdir):
    write("s/list.yaml", "- a\n")
    assert texts(load_suites([Path("s")]).diagnostics) == [
        "s:1:1: warning: passed over 1 file that is not a suite: s/list.yaml (a list, not a mapping of suite keys)"]
    assert texts(load_suites([Path("s/list.yaml")]).diagnostics) == [
        "s/list.yaml:1:1: error: a suite file must be a mapping of keys (a case, or `cases:` with a list); "
        "this one is a list"]


def test_missing_path(workdir):
    assert texts(load_suites([Path("nope")]).diagnostics) == ["nope:1:1: error: no such file or folder"]


def test_explicit_evalrun_yaml_is_checked_as_the_config(workdir):
    write("evalrun.yaml", "similarity_threshold: 0.5\n")
    assert load_suites([Path("evalrun.yaml")]).diagnostics == []
    assert validate([Path("evalrun.yaml")]) == []
    write("evalrun.yaml", "similarity_treshold: 0.5\n")
    assert [d.message for d in validate([Path("evalrun.yaml")])] == [
        "unknown key 'similarity_treshold' in the top level (did you mean 'similarity_threshold'?)"]


def test_an_empty_config_is_all_defaults(workdir):
    write("evalrun.yaml", "# nothing configured yet\n")
    write("s.yaml", "forbid_extra_calls: true\n")
    assert validate([Path("s.yaml")]) == []


def test_exclusion_globs(workdir):
    write("s/keep.yaml", "forbid_extra_calls: true\n")
    write("s/failing/bad.yaml", "goal_details: [\n")
    write("s/drafts/x/bad.yaml", "goal_details: [\n")
    exclude = Exclusion(Path("s"), ["failing", "drafts/*"])
    assert [c.id for c in load_suites([Path("s")], exclude).cases] == ["keep"]
    # a path named explicitly is always collected
    assert len(load_suites([Path("s/failing/bad.yaml")], exclude).diagnostics) == 1


def test_problems_of_several_files_are_sorted_by_file_and_position(workdir):
    write("s/b.yaml", "forbid_extra_calls: true\nzzz: 1\naaa: 2\n")
    write("s/a.yaml", "goal_details: 1\n")
    assert texts(load_suites([Path("s")]).diagnostics) == [
        "s/a.yaml:1:15: error: goal_details must be a list of goals, each a map with `type` and `name`; here it is the number 1",
        "s/b.yaml:2:1: error: unknown key 'zzz' in the top level",
        "s/b.yaml:3:1: error: unknown key 'aaa' in the top level",
    ]


# ---------------------------------------------------------------- the shipped examples and fixtures

def _example_files() -> list[Path]:
    # Hidden folders are passed over as folder collection does: after the README's `evalrun suites/`,
    # suites/.evalrun/cache holds similarity scores as JSON, which are not suites.
    return sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json")
                  and p.name not in ("evalrun.yaml", "evalrun.yml", "test_config.json") and "transcripts" not in p.parts
                  and not any(part.startswith(".") for part in p.relative_to(EXAMPLES).parts))


def test_there_are_example_suites():
    names = {p.relative_to(EXAMPLES).as_posix() for p in _example_files()}
    assert {"hr/timeoff.yaml", "airline/cancellations.yaml", "failing/mistakes.yaml",
            "adk_weather/weather.evalset.json"} <= names


def test_the_example_eval_config_is_checked_and_holds_no_cases():
    assert load_file(EXAMPLES / "adk_weather" / "test_config.json") == ([], [], False)


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_every_example_suite_validates(path):
    quick = path.parent.name == "quick"  # cases for `evalrun quick`: nothing expected of them in advance
    cases, diagnostics, is_suite = load_file(path, referenceless=quick)
    assert is_suite and cases
    assert [str(d) for d in diagnostics] == []


def test_the_examples_folder_validates_with_its_config():
    # suites/evalrun.yaml excludes failing/, which is validated by name
    assert validate([EXAMPLES]) == []
    assert validate([EXAMPLES / "failing"]) == []


_MODELINE = re.compile(r"# yaml-language-server: \$schema=(\S+)\n")


@pytest.mark.parametrize("path", [p for p in _example_files() if p.suffix != ".json"] + [EXAMPLES / "evalrun.yaml"],
                         ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_example_yaml_starts_with_a_modeline_to_the_schema(path):
    first = path.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    found = _MODELINE.fullmatch(first)
    assert found, f"{path} must start with `# yaml-language-server: $schema=<relative path>`"
    kind = "config" if path.name == "evalrun.yaml" else "suite"
    target = (path.parent / found.group(1)).resolve()
    assert not os.path.isabs(found.group(1))
    assert target == (ROOT / "schemas" / f"{kind}.schema.json").resolve()


@pytest.mark.parametrize("path", [p for p in _example_files() if p.suffix == ".json"],
                         ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_example_json_schema_key_resolves(path):
    # JSON has no comments, so no modeline: a `$schema` key, when present, must point at the schema
    import json

    reference = json.loads(path.read_text(encoding="utf-8")).get("$schema")
    if reference is not None:
        assert (path.parent / reference).resolve() == (ROOT / "schemas" / "suite.schema.json").resolve()


def test_project_fixtures_validate():
    result = load_suites([FIXTURES])
    assert [str(d) for d in result.diagnostics] == []
    assert sorted(c.id for c in result.cases) == [
        "library-refuse-renewal", "multi_defaults-1", "watsonx_context", "watsonx_file_upload"]
    upload = next(c for c in result.cases if c.id == "watsonx_file_upload")
    assert upload.file_upload.content_type == "application/pdf"
    assert upload.tool_goals()[0].args == {"IGNORE": None}


def test_fixture_multi_case_defaults():
    cases, diagnostics, _ = load_file(FIXTURES / "multi_defaults.yaml")
    assert diagnostics == []
    first, refuse = cases
    assert first.tags == ["library", "smoke"] and refuse.tags == ["library"]
    assert (first.agent, refuse.agent) == ("library_agent", "strict_library_agent")
    assert (first.forbid_extra_calls, refuse.forbid_extra_calls) == (["renew_*"], True)
    assert first.runtime_context == {"branch": "central"}
    assert refuse.runtime_context == {"branch": "central", "member_level": "basic"}
    assert first.tool_goals()[1].args == {"isbn": "0441013597", "due": "2025-02-01", "member": "007"}


def test_the_watsonx_examples_are_there():
    """Fails where EVALRUN_REQUIRE_SHARED_DATA=1 (skips elsewhere) when the shared data is missing, so the
    tests below cannot vanish from a CI run unnoticed."""
    assert len(shared_files("watsonx-examples", "evaluate*__*.json")) >= 5 or require_shared("watsonx-examples")


@pytest.mark.parametrize("path", shared_params("watsonx-examples", "evaluate*__*.json"), ids=lambda p: p.name)
def test_watsonx_datasets_validate_unmodified(path):
    path = shared_file(path, "watsonx-examples", "evaluate*__*.json")
    cases, diagnostics, _ = load_file(path)
    assert [str(d) for d in diagnostics] == []
    assert len(cases) == 1 and cases[0].goal_details
