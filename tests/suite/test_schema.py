"""The JSON Schemas: generated from the models, committed, documented, strict; their errors as diagnostics."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from runner.authoring import schema
from runner.checks.run import check_problem
from runner.suite import schema_check
from runner.suite.reader import read_document

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"

# The one object that accepts keys it does not list: Goal dispatches on `type` to ToolCallGoal /
# TextGoal (which are closed) with if/then.
OPEN_OBJECTS = {("suite", "Goal"), ("suite", "Check")}  # dispatchers on `type`: each branch is closed


@pytest.mark.parametrize("kind", schema.KINDS)
def test_committed_schema_is_up_to_date(kind):
    committed = (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert committed == schema.render(kind), (
        f"schemas/{kind}.schema.json differs from the models; run `python -m runner.authoring.schema --write`")


@pytest.mark.parametrize("kind", schema.KINDS)
def test_committed_schema_is_a_valid_draft_2020_12_schema(kind):
    document = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == f"https://evalrun.dev/schemas/{kind}.schema.json"


def _object_schemas(document: dict) -> list[tuple[str, dict]]:
    return [("(root)", document), *document.get("$defs", {}).items()]


@pytest.mark.parametrize("kind", [
    "suite",
    "config",
])
def test_every_property_has_title_description_and_examples(kind):
    document = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    missing = []
    for owner, node in _object_schemas(document):
        for name, prop in node.get("properties", {}).items():
            for attribute in ("title", "description", "examples"):
                if attribute not in prop:
                    missing.append(f"{owner}.{name}: no {attribute}")
                elif attribute == "examples" and not (isinstance(prop["examples"], list) and prop["examples"]):
                    missing.append(f"{owner}.{name}: empty examples")
    assert not missing, f"{kind} schema properties without editor help:\n" + "\n".join(missing)


@pytest.mark.parametrize("kind", ["suite", "config"])
def test_every_object_forbids_unknown_keys(kind):
    document = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    open_objects = [owner for owner, node in _object_schemas(document)
                    if (node.get("type") == "object" or "properties" in node)
                    and node.get("additionalProperties") is not False and (kind, owner) not in OPEN_OBJECTS]
    assert open_objects == []


def test_the_open_objects_are_the_known_ones():
    document = json.loads((SCHEMAS / "suite.schema.json").read_text(encoding="utf-8"))
    assert document["$defs"]["FileUpload"]["additionalProperties"] is False
    goal = document["$defs"]["Goal"]
    assert [branch["then"]["$ref"] for branch in goal["allOf"]] == [
        "#/$defs/ToolCallGoal", "#/$defs/TextGoal", "#/$defs/UnscoredGoal", "#/$defs/UnscoredGoal"]


def test_enums_for_modes_and_goal_types():
    document = json.loads((SCHEMAS / "suite.schema.json").read_text(encoding="utf-8"))
    defs = document["$defs"]
    modes = ["strict", "exact", "optional", "ignore", "fuzzy"]
    assert defs["ArgRule"]["properties"]["mode"]["enum"] == modes
    alternatives = defs["ToolCallGoal"]["properties"]["arg_matching"]["additionalProperties"]["anyOf"]
    assert {"enum": modes, "type": "string"} in alternatives
    assert {"$ref": "#/$defs/ArgRule"} in alternatives
    assert defs["Goal"]["properties"]["type"]["enum"] == ["tool_call", "text", "interaction", "assert_llm"]
    assert defs["ToolCallGoal"]["properties"]["type"]["const"] == "tool_call"
    assert defs["TextGoal"]["properties"]["type"]["const"] == "text"
    assert defs["TextGoal"]["properties"]["scope"]["enum"] == ["any", "final"]
    assert defs["CaseFields"]["properties"]["failed_calls"]["enum"] == ["count", "ignore"]
    assert document["properties"]["extra_args"]["enum"] == ["allow", "forbid"]
    for holder in (document, defs["CaseFields"]):
        assert holder["properties"]["goal_details"]["items"] == {"$ref": "#/$defs/Goal"}


def test_suite_schema_allows_editor_and_watsonx_keys():
    properties = json.loads((SCHEMAS / "suite.schema.json").read_text(encoding="utf-8"))["properties"]
    for key in ("$schema", "cases", "runtime_context", "file_upload", "goals", "goal_details", "story",
                "starting_sentence", "agent"):
        assert key in properties


@pytest.fixture(scope="module")
def renders_under_two_hash_seeds() -> list[dict[str, str]]:
    """Every kind rendered by two fresh interpreters with different hash seeds (one interpreter per seed
    renders all the kinds: what varies with the seed is set and dict order, not which kind came first)."""
    import subprocess
    import sys

    from tests.helpers.cli_helpers import REPO, cli_env

    code = ("import json, sys; from runner.authoring import schema; "
            "json.dump({kind: schema.render(kind) for kind in schema.KINDS}, sys.stdout)")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=REPO, env=cli_env(PYTHONHASHSEED=seed),
                           capture_output=True, text=True, timeout=120) for seed in ("1", "2")]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    return [json.loads(r.stdout) for r in runs]


@pytest.mark.parametrize("kind", schema.KINDS)
def test_build_schema_is_deterministic(kind, renders_under_two_hash_seeds):
    """Rendered by two fresh interpreters with different hash seeds: set and dict order that depends on
    the seed would differ between them (two renders in one process would always agree)."""
    first, second = (renders[kind] for renders in renders_under_two_hash_seeds)
    assert first == second == schema.render(kind)


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown schema kind 'nope'"):
        schema.build_schema("nope")


def test_write_refreshes_the_files(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "resource_dir", lambda name: tmp_path)
    assert schema.main(["--write"]) == 0
    for kind in schema.KINDS:
        assert (tmp_path / f"{kind}.schema.json").read_text(encoding="utf-8") == schema.render(kind)
    assert schema.main([]) == 2


# ---------------------------------------------------------------- schema errors as diagnostics

def check(tmp_path: Path, text: str, kind: str = "suite") -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    doc = read_document(path, "s.yaml")
    assert doc.diagnostics == []
    schema_check.check_document(doc, kind)
    return sorted(str(d) for d in doc.diagnostics)


def test_unknown_top_level_key_with_did_you_mean(tmp_path):
    assert check(tmp_path, "goal_detail: []\n") == [
        "s.yaml:1:1: error: unknown key 'goal_detail' in the top level (did you mean 'goal_details'?)"]


def test_unknown_goal_key_with_did_you_mean(tmp_path):
    text = "goal_details:\n  - type: tool_call\n    name: a\n    tool_name: t\n    arg_match: {x: fuzzy}\n"
    assert check(tmp_path, text) == [
        "s.yaml:5:5: error: unknown key 'arg_match' in goal_details[0] (did you mean 'arg_matching'?)"]


def test_unknown_key_without_a_close_match(tmp_path):
    assert check(tmp_path, "colour: red\n") == ["s.yaml:1:1: error: unknown key 'colour' in the top level"]


def test_unknown_key_in_text_goal_and_in_a_case(tmp_path):
    text = "cases:\n  - id: a\n    goal_details:\n      - {type: text, name: t, keyword: [x]}\n    storey: s\n"
    assert check(tmp_path, text) == [
        "s.yaml:4:31: error: unknown key 'keyword' in cases[0].goal_details[0] (did you mean 'keywords'?)",
        "s.yaml:5:5: error: unknown key 'storey' in cases[0] (did you mean 'story'?)",
    ]


def test_type_errors(tmp_path):
    text = "id: true\ntags: hr\nskip: 3\nforbid_extra_calls: maybe\ngoals: {a: b}\ngoal_details: {}\n"
    assert check(tmp_path, text) == [
        "s.yaml:1:5: error: id must be text, got the boolean true",
        "s.yaml:2:7: error: tags must be a list of tags; here it is the text 'hr'",
        "s.yaml:3:7: error: skip must be true or false or text, got the number 3",
        "s.yaml:4:21: error: forbid_extra_calls must be a list or true or false, got the text 'maybe'",
        "s.yaml:5:12: error: goals.a must be a list, got the text 'b'",
        "s.yaml:6:15: error: goal_details must be a list of goals, each a map with `type` and `name`; here it is a mapping {}",
    ]


def test_enum_errors_suggest_the_close_value(tmp_path):
    text = ("failed_calls: ignor\ngoal_details:\n  - type: tool_call\n    name: a\n    tool_name: t\n"
            "    args: {x: 1}\n    arg_matching: {x: fuzy}\n  - type: tool\n    name: b\n")
    assert check(tmp_path, text) == [
        "s.yaml:1:15: error: failed_calls: 'ignor' is not one of count, ignore (did you mean 'ignore'?)",
        "s.yaml:7:23: error: goal_details[0].arg_matching.x: 'fuzy' is not one of strict, exact, optional, ignore, "
        "fuzzy (did you mean 'fuzzy'?)",
        "s.yaml:8:11: error: goal_details[1].type: 'tool' is not one of tool_call, text, interaction, assert_llm "
        "(did you mean 'tool_call'?)",
    ]


def test_rule_object_errors(tmp_path):
    text = ("goal_details:\n  - type: tool_call\n    name: a\n    tool_name: t\n    args: {x: 1, y: 2}\n"
            "    arg_matching:\n      x: {mod: fuzzy}\n      y: {mode: fuzzy, threshold: 1.5}\n")
    assert check(tmp_path, text) == [
        "s.yaml:7:11: error: unknown key 'mod' in goal_details[0].arg_matching.x (did you mean 'mode'?)",
        "s.yaml:8:35: error: goal_details[0].arg_matching.y.threshold is 1.5, but it must be at most 1",
    ]


def test_missing_required_keys(tmp_path):
    text = "goal_details:\n  - type: tool_call\n    name: a\n  - name: b\n  - type: text\n    response: r\n"
    assert check(tmp_path, text) == [
        "s.yaml:2:5: error: goal_details[0] is missing the required key 'tool_name'",
        "s.yaml:4:5: error: goal_details[1] is missing the required key 'type'",
        "s.yaml:5:5: error: goal_details[2] is missing the required key 'name'",
    ]


def test_empty_and_range_errors(tmp_path):
    text = "max_user_turns: 0\ncases: []\ngoal_details:\n  - {type: tool_call, name: a, tool_name: ''}\n"
    assert check(tmp_path, text) == [
        "s.yaml:1:17: error: max_user_turns is 0, but it must be at least 1",
        "s.yaml:2:8: error: cases needs at least 1 item(s)",
        "s.yaml:4:43: error: goal_details[0].tool_name must not be empty",
    ]


def test_config_schema_errors(tmp_path):
    text = "similarity_threshold: 2\nexclud: [x]\njudge: {model: m, temprature: 0}\n"
    assert check(tmp_path, text, "config") == [
        "s.yaml:1:23: error: similarity_threshold is 2, but it must be at most 1",
        "s.yaml:2:1: error: unknown key 'exclud' in the top level (did you mean 'exclude'?)",
        "s.yaml:3:19: error: unknown key 'temprature' in judge (did you mean 'temperature'?)",
    ]


def test_valid_example_passes_the_schema(tmp_path):
    text = ("$schema: schemas/suite.schema.json\nid: a\nstarting_sentence: hi\ngoal_details:\n"
            "  - {type: tool_call, name: a, tool_name: t, args: {d: 2025-01-01}, arg_matching: {d: fuzzy}}\n"
            "  - {type: text, name: b, keywords: [x], scope: final}\n")
    assert check(tmp_path, text) == []


@pytest.mark.parametrize("kind", schema.KINDS)
def test_runtime_validator_judges_like_the_shipped_schema(kind):
    # validator() inlines the $refs for speed; it must accept and reject exactly what the file does
    plain = Draft202012Validator(schema_check.load_shipped(kind))
    fast = schema_check.validator(kind)
    samples = {
        "suite": [
            {"goal_details": [{"type": "tool_call", "name": "a", "tool_name": "t", "args": {"x": 1},
                               "arg_matching": {"x": {"mod": "fuzzy"}, "y": "fuzy"}}], "tags": "x"},
            {"cases": [{"goal_details": [{"type": "text", "name": "b", "keywords": [1]}, {"name": "c"}]}, 3]},
            {"file_upload": {"file_id": 1}, "skip": 2, "goals": {"a": "b"}},
            json.loads((ROOT / "suites" / "hr" / "direct_reports.json").read_text(encoding="utf-8")),
        ],
        "config": [{"judge": {"model": 1, "x": 2}, "embeddings": {"enabled": "yes"}, "similarity_threshold": 3},
                   {"exclude": ["failing"], "min_pass_rate": 0.5}],
        "report": [{}, {"version": 1}],
        "adk-evalset": [{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
                            {"user_content": {"parts": [{"text": "hi", "txt": 1}]}, "intermediate_data": {
                                "tool_uses": [{"name": 3}]}}]}]},
                        [{"query": "hi", "expected_tool_use": [{"tool_name": "t"}]}], {"eval_cases": 1}],
        "adk-eval-config": [{"criteria": {"tool_trajectory_avg_score": {"match_type": "IN_ORDER"},
                                          "response_match_score": "high"}}, {"criteria": []}],
    }[kind]
    for instance in samples:
        def key(errors):
            return sorted((tuple(map(str, e.absolute_path)), e.validator, e.message) for e in errors)
        assert key(fast.iter_errors(instance)) == key(plain.iter_errors(instance))


@pytest.mark.parametrize("document", [
    {"goal_details": []},
    {"story": None, "goal_details": []},
    {"max_user_turns": 3.0, "goal_details": []},
    {"max_user_turns": True, "goal_details": []},
    {"tags": [1], "goal_details": []},
    {"goal_details": [{"type": "tool_call", "name": "a", "tool_name": "t", "args": {"x": None},
                       "arg_matching": {"x": {"mode": "fuzzy", "threshold": 1}}, "output": None}]},
    {"goal_details": [{"type": "tool_call", "name": "a", "tool_name": "t", "arg_matching": {"x": {"mode": None}}}]},
    {"goal_details": [{"type": "text", "name": "a", "response": None}]},
    {"goal_details": [{"type": "text", "name": "a", "keywords": ["k"], "scope": "last"}]},
    {"cases": [{"goal_details": [], "skip": None}]},
    {"forbid_extra_calls": ["a", 1], "goal_details": []},
    {"$schema": "x", "file_upload": {"file_path": "a", "file_id": None}},
])
def test_the_models_fast_path_never_accepts_what_the_shipped_schema_rejects(document):
    # The loader trusts `conforms` to skip jsonschema. It may be stricter than the schema (3.0 for an
    # integer; a number where text is expected, which the loader turns into its text before either
    # runs): then jsonschema runs and finds nothing, and the case is built as usual.
    schema_errors = list(schema_check.validator("suite").iter_errors(document))
    if schema_check.conforms(document, check_problem):
        assert schema_errors == []
    stricter = [{"max_user_turns": 3.0, "goal_details": []}, {"tags": [1], "goal_details": []},
                {"forbid_extra_calls": ["a", 1], "goal_details": []}]
    assert schema_check.conforms(document, check_problem) == (schema_errors == []) or document in stricter


def test_type_errors_on_known_fields_describe_the_field_in_peoples_words(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("goals: [a, b]\ngoal_details:\n  - {type: tool_call, name: a, tool_name: t, args: [1]}\n"
                    "  - {type: text, name: b, keywords: x}\n", encoding="utf-8")
    from runner.suite.load import load_file

    assert [d.message for d in load_file(path)[1]] == [
        'goals must be a map of goal name → goals that come after it (a list of goal names); here it is a list ["a", "b"]',
        "goal_details[0].args must be a map of argument name → expected value; here it is a list [1]",
        "goal_details[1].keywords must be a list of words or phrases the answer must contain; here it is the text 'x'",
    ]
