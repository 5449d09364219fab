"""The JSON Schema and `validate` agree, as an editor shows it: every suite `validate` accepts has no error
in the real yaml-language-server (the server VS Code's YAML extension runs) under schemas/suite.schema.json,
and every suite the server underlines is one `validate` refuses. Over the bundled suites, the test data,
watsonx's example datasets and edge cases: numbers, booleans and dates where text is expected, and
genuinely invalid files, which both must flag on the same line.

`validate` may refuse more than the schema can say (a goal order that names no goal, a cycle): those
files are only held to the second rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.suite.load import load_file, load_suites
from tests.helpers.shared_data import shared_files
from tests.helpers.yaml_language_server import REPO, LanguageServer, require_server

SCHEMA = REPO / "schemas" / "suite.schema.json"
ADK_SCHEMA = REPO / "schemas" / "adk-evalset.schema.json"
ADK_SET_GLOBS = ["*.evalset.json", "*.test.json"]
GOAL = "goal_details:\n  - {type: text, name: say, keywords: [hello]}\n"

# name -> (text, whether it is a valid suite)
EDGE_CASES = {
    # numbers where text is expected: read as the number's text
    "numeric_id": ("id: 42\nstarting_sentence: hi\n" + GOAL, True),
    "numeric_tags_and_keywords": ("id: t\ntags: [2025, smoke]\nstarting_sentence: hi\ngoal_details:\n"
                                  "  - {type: text, name: total, keywords: [1500, 1.50, 007]}\n", True),
    "numeric_texts": ("id: 1e3\ndescription: 3.14\nstory: 2025\nstarting_sentence: 100\nuser_prompts: [1, 2.5]\n"
                      "forbid_extra_calls: [404]\ngoals: {7: [8]}\ngoal_details:\n"
                      "  - {type: tool_call, name: 7, tool_name: 123, description: 9, args: {n: 1},\n"
                      "     arg_matching: {n: {regex: 1, ignore_chars: 12}}}\n"
                      "  - {type: text, name: 8, response: 2, keywords: [3]}\n"
                      "file_upload: {file_path: 12, file_id: 1, content_type: 2}\n", True),
    "hex_and_leading_zero_ids": ("cases:\n  - {id: 0x1F, starting_sentence: hi, forbid_extra_calls: true}\n"
                                 "  - {id: 0042, starting_sentence: hi, forbid_extra_calls: true}\n", True),
    # dates and YAML 1.1 booleans where text is expected: text for both
    "dates_as_text": ("id: 2025-01-01\ntags: [2025-01-01]\ndescription: 2025-01-01T10:00:00Z\nstarting_sentence: hi\n"
                      "goal_details:\n  - {type: text, name: date, keywords: [2025-01-05]}\n", True),
    "yes_no_as_text": ("id: t\ntags: [yes, no, on, off]\nstory: no\nstarting_sentence: off\nskip: yes\n"
                       "goal_details:\n  - {type: text, name: agree, keywords: [yes, n]}\n", True),
    "json_numbers": ('{"id": 42, "tags": [2025], "starting_sentence": "hi", "goal_details": '
                     '[{"type": "text", "name": "t", "keywords": [1500]}]}\n', True),
    # genuinely invalid: both must say so, on the same line
    "json_boolean_tag": ('{"id": "j", "tags": [true], "starting_sentence": "hi", "forbid_extra_calls": true}\n', False),
    "misspelt_key": ("id: t\nstarting_sentence: hi\n" + GOAL + "forbid_extra_call: true\n", False),
    "boolean_id": ("id: true\nstarting_sentence: hi\n" + GOAL, False),
    "scalar_tags": ("id: t\ntags: 2025\nstarting_sentence: hi\n" + GOAL, False),
    "mapping_keywords": ("id: t\nstarting_sentence: hi\ngoal_details:\n  - {type: text, name: t, keywords: {a: 1}}\n",
                         False),
    "quoted_number_for_turns": ("id: t\nmax_user_turns: \"8\"\nstarting_sentence: hi\n" + GOAL, False),
    "zero_turns": ("id: t\nmax_user_turns: 0\nstarting_sentence: hi\n" + GOAL, False),
    "negative_timeout": ("id: t\ntimeout_s: -1\nstarting_sentence: hi\n" + GOAL, False),
    "skip_no": ("id: t\nskip: no\nstarting_sentence: hi\n" + GOAL, False),
    "skip_quoted_false": ("id: t\nskip: \"false\"\nstarting_sentence: hi\n" + GOAL, False),
    "skip_off": ("id: t\nskip: off\nstarting_sentence: hi\n" + GOAL, False),
    "skip_number": ("id: t\nskip: 1\nstarting_sentence: hi\n" + GOAL, False),
    "empty_story": ("id: t\nstory:\nstarting_sentence: hi\n" + GOAL, False),
    "list_id": ("id: [a]\nstarting_sentence: hi\n" + GOAL, False),
    "goal_type_typo": ("id: t\nstarting_sentence: hi\ngoal_details:\n  - {type: tool_cal, name: t, tool_name: x}\n",
                       False),
    "bad_mode": ("id: t\nstarting_sentence: hi\ngoal_details:\n  - type: tool_call\n    name: t\n    tool_name: x\n"
                 "    args: {a: 1}\n    arg_matching: {a: fuzy}\n", False),
    "check_option_typo": ("id: t\nstarting_sentence: hi\nchecks:\n  - {type: contains, valeu: x}\n", False),
    "boolean_keyword": ("id: t\nstarting_sentence: hi\ngoal_details:\n  - {type: text, name: t, keywords: [true]}\n",
                        False),
    "tab_indentation": ("id: t\nstarting_sentence: hi\ngoal_details:\n\t- {type: text, name: t, keywords: [a]}\n",
                        False),
    "duplicate_key": ("id: t\nid: u\nstarting_sentence: hi\n" + GOAL, False),
    # an ADK eval set, under its own schema: a conversation that is not a list of invocations
    "adk_conversation.evalset": ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": "hi"}]}\n',
                                 False),
    "adk_valid.evalset": ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [{"invocation_id": '
                          '"i", "user_content": {"parts": [{"text": "hi"}]}}]}]}\n', True),
    "unknown_top_level_in_cases_file": ("shared: 1\ncases:\n  - {id: a, starting_sentence: hi, forbid_extra_calls: "
                                        "true}\n", False),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("editor")
    language_server = LanguageServer(require_server(), root)
    # ADK's eval sets, which evalrun reads as they are, under their own schema (as the README's settings map them)
    language_server.associate({SCHEMA: ["*.yaml", "*.yml", "*.json", f"!{ADK_SET_GLOBS[0]}", f"!{ADK_SET_GLOBS[1]}"],
                               ADK_SCHEMA: ADK_SET_GLOBS})
    yield language_server
    language_server.close()


@pytest.fixture(scope="module")
def edge_cases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edge")
    for name, (text, _) in EDGE_CASES.items():
        (folder / edge_case_file(name)).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def editor(server, edge_cases) -> dict[Path, list[tuple[int, str]]]:
    """What the editor underlines in every file of this module's tests, the files opened at once (one wait for the
    server's validation pause instead of one per file)."""
    paths = suite_files() + [edge_cases / edge_case_file(name) for name in EDGE_CASES]
    return {path: editor_errors(found) for path, found in server.diagnostics_of_all(paths).items()}


def edge_case_file(name: str) -> str:
    return f"{name}.{'json' if EDGE_CASES[name][0].startswith('{') else 'yaml'}"


def editor_errors(diagnostics: list[dict]) -> list[tuple[int, str]]:
    """(line, message) of what the editor underlines as an error (severity 1), lines from 1."""
    return [(d["range"]["start"]["line"] + 1, d["message"]) for d in diagnostics if d.get("severity") == 1]


def validate_errors(path: Path) -> list[tuple[int, str]]:
    _, diagnostics, _ = load_file(path)
    return [(d.line, d.message) for d in diagnostics if d.severity == "error"]


def suite_files() -> list[Path]:
    """The suites `validate` finds under the bundled suites/ and the test data, and watsonx's datasets."""
    found = load_suites([REPO / "suites", REPO / "tests" / "data" / "suites"]).files
    return [Path(f).resolve() for f in found] + shared_files("watsonx-examples", "*.json")


def test_the_corpus_is_the_whole_of_it():
    files = [p.relative_to(REPO).as_posix() for p in suite_files() if REPO in p.parents]
    assert {"suites/hr/timeoff.yaml", "suites/hr/timeoff_checks.yaml", "suites/live/timeoff.yaml",
            "suites/failing/mistakes.yaml", "suites/hr/direct_reports.json",
            "tests/data/suites/multi_defaults.yaml"} <= set(files)


@pytest.mark.parametrize("path", suite_files(), ids=lambda p: p.name)
def test_the_editor_and_validate_agree_on_real_suites(editor, path):
    editor, ours = editor[path], validate_errors(path)
    if not ours:
        assert editor == [], f"{path}: validate accepts it, the editor underlines {editor}"
    if editor:
        assert ours, f"{path}: the editor underlines {editor}, validate accepts it"


@pytest.mark.parametrize("name", EDGE_CASES)
def test_the_editor_and_validate_agree_on_edge_cases(editor, edge_cases, name):
    _, valid = EDGE_CASES[name]
    path = edge_cases / edge_case_file(name)
    editor, ours = editor[path], validate_errors(path)
    if valid:
        assert (ours, editor) == ([], []), name
    else:
        assert ours and editor, f"{name}: validate {ours}, editor {editor}"
        assert {line for line, _ in editor} <= {line for line, _ in ours}, f"{name}: validate {ours}, editor {editor}"
