"""valid_tool_calls: each call names one of the agent's tools and its arguments fit the tool's JSON Schema; each
breach named with the call, the tool and the JSON path. Tools from the case, its file, the agent in
evalrun.yaml or the model agent's own; schemas that are not valid are errors where they are written."""
from __future__ import annotations

import json

import pytest

from runner.checks.run import run_checks
from runner.config.load import LoadedConfig, load_config
from runner.run.agent_tools import tools_for
from runner.suite.load import load_file
from runner.suite.models import Case
from runner.suite.tool_specs import read_tools, tool_problems
from runner.transcripts.read import build_trajectory
from tests.helpers.cli_helpers import run_cli, write, write_json

BOOK = {"type": "function", "function": {"name": "book_flight", "description": "Book a seat.", "parameters": {
    "type": "object",
    "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]},
                   "date": {"type": "string", "format": "date"},
                   "seats": {"type": "integer"},
                   "contact": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}},
                               "required": ["email"]}},
    "required": ["city", "date"]}}}
SEARCH = {"name": "search_flights", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def call(call_id: str, name: str, arguments) -> list[dict]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "ok"}]


def check(messages: list[dict], tools=(BOOK, SEARCH), **options):
    case = Case.model_validate({"id": "c", "source": {"path": "c.yaml"},
                                "checks": [{"type": "valid_tool_calls", **options}]})
    toolset = read_tools(list(tools), "case 'c'") if tools is not None else None
    [result] = run_checks(case, build_trajectory([{"role": "user", "content": "hi"}, *messages]), tools=toolset)
    return result


def test_valid_calls_pass_with_the_count():
    result = check([*call("a", "search_flights", {"city": "Paris"}),
                    *call("b", "book_flight", {"city": "Rome", "date": "2025-03-01", "seats": 2,
                                               "contact": {"email": "a@b.org"}})])
    assert (result.status, result.score) == ("passed", 1.0)
    assert result.explanation == "2 of 2 tool call(s) valid against the tools of case 'c' (score 1 >= threshold 1)"


def test_every_breach_is_named_by_call_tool_and_path():
    result = check([*call("a", "search_flight", {"city": "Paris"}),
                    *call("b", "book_flight", {"city": "Pariss", "date": "tomorrow", "seats": "2",
                                               "contact": {"email": "nope"}})])
    assert (result.status, result.score) == ("failed", 0.0)
    assert result.explanation == (
        "0 of 2 tool call(s) valid against the tools of case 'c'; "
        "call #1 (message 2) search_flight: 'search_flight' is not one of the agent's tools (did you mean "
        "'search_flights'?); "
        "call #2 (message 4) book_flight: $.city: 'Pariss' is not one of ['Paris', 'Rome'], $.contact.email: 'nope' "
        "is not a 'email', $.date: 'tomorrow' is not a 'date', $.seats: '2' is not of type 'integer' "
        "(score 0 < threshold 1)")
    breached = [(b["call"], b["tool"]) for b in result.evidence["breaches"]]
    assert breached == [(1, "search_flight")] + [(2, "book_flight")] * 4


def test_a_missing_required_argument_and_unreadable_arguments():
    result = check([*call("a", "book_flight", {"city": "Paris"}), *call("b", "search_flights", "{not json")])
    assert "call #1 (message 2) book_flight: $: 'date' is a required property" in result.explanation
    assert "call #2 (message 4) search_flights: the arguments are not a JSON object" in result.explanation
    assert result.status == "failed"


def test_a_threshold_gives_partial_credit():
    result = check([*call("a", "search_flights", {"city": "Paris"}), *call("b", "nope", {})], threshold=0.5)
    assert (result.status, result.score) == ("passed", 0.5)


def test_no_calls_is_skipped_and_no_tools_unscored_never_a_pass():
    assert check([]).status == "skipped"
    result = check(call("a", "search_flights", {"city": "Paris"}), tools=None)
    assert result.status == "unscored"
    assert "no tools are known for this case" in result.explanation


def test_a_schema_jsonschema_cannot_apply_leaves_the_call_unscored_not_a_crash():
    broken = {"name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}}
    result = check(call("a", "f", {"x": 1}), tools=[broken])
    assert result.status == "unscored"
    assert "call #1 (message 2) f: the schema of 'f' cannot be applied" in result.explanation


@pytest.mark.parametrize("definitions, expected", [
    ([{"name": "f", "parameters": {"type": "strng"}}],
     [((0, "parameters", "type"), "not a valid JSON Schema: 'strng' is not a JSON type (did you mean 'string'?) "
                                  "(types: array, boolean, integer, null, number, object, string)")]),
    ([{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"minimum": "zero"}}}}}],
     [((0, "function", "parameters", "properties", "n", "minimum"), "not a valid JSON Schema: 'zero' is not of "
                                                                      "type 'number'")]),
    ([{"name": "f"}, {"name": "f"}], [((1, "name"), "tool 'f' is defined twice (first as tools[0])")]),
    ([{"parameters": {}}], [((0,), "the tool has no name: give it `name`")]),
    ([{"name": "f", "parameters": ["x"]}],
     [((0, "parameters"), "parameters must be a JSON Schema object (a mapping such as {type: object, "
                          "properties: {...}})")]),
    ({"name": "f"}, [((), "tools must be a list of tool definitions ({type: function, function: {name, "
                          "parameters}})")]),
])
def test_tool_problems_name_the_path(definitions, expected):
    assert list(tool_problems(definitions)) == expected


def test_an_invalid_schema_in_a_suite_is_a_validate_error_at_its_line_and_column(tmp_path):
    write(tmp_path / "s.yaml", """
        cases:
          - id: one
            starting_sentence: hi
          - id: two
            starting_sentence: hello
        tools:
          - type: function
            function:
              name: f
              parameters:
                type: object
                properties:
                  when: {type: strng}
        checks:
          - type: valid_tool_calls
        """)
    done = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    # the file's default tools are reported once, where they are written, not once per case
    assert done.stdout.splitlines() == [
        "s.yaml:13:24: error: not a valid JSON Schema: 'strng' is not a JSON type (did you mean 'string'?) "
        "(types: array, boolean, integer, null, number, object, string)"]


def test_an_invalid_schema_under_an_agent_is_a_config_error_with_its_place(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        agents:
          bot:
            type: python
            entrypoint: bot:respond
            tools:
              - name: f
                parameters: {type: object, required: yes}
        """)
    write(tmp_path / "s.yaml", "starting_sentence: hi\nchecks: [{type: valid_tool_calls}]\n")
    done = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert done.returncode == 4
    assert "evalrun.yaml:7:46: error: not a valid JSON Schema: 'yes' is not of type 'array'" in done.stdout, done.stdout


def test_the_tools_come_from_the_case_then_the_agent_and_always_the_model_agents_own(tmp_path):
    write_json(tmp_path / "model_tools.json", [BOOK])
    write(tmp_path / "evalrun.yaml", """
        agents:
          bot: {type: python, entrypoint: "bot:respond", tools: [{name: from_agent}]}
          llm: {type: model, model: openai/x, tools_file: model_tools.json}
        """)
    loaded, problems = load_config(tmp_path / "evalrun.yaml")
    assert problems == []
    own = {"id": "c", "source": {"path": "c.yaml"}, "tools": [SEARCH]}
    assert [s.name for s in tools_for(Case.model_validate({**own, "agent": "bot"}), loaded).specs] == ["search_flights"]
    bare = Case.model_validate({"id": "c", "source": {"path": "c.yaml"}, "agent": "bot"})
    found = tools_for(bare, loaded)
    assert ([s.name for s in found.specs], found.source) == (["from_agent"], "agent 'bot' (evalrun.yaml)")
    found = tools_for(Case.model_validate({**own, "agent": "llm"}), loaded)  # a model is sent its own tools
    assert ([s.name for s in found.specs], found.source) == (["book_flight"], "model agent 'llm' (model_tools.json)")
    assert tools_for(Case.model_validate({"id": "c", "source": {"path": "c.yaml"}}), LoadedConfig(
        config=loaded.config.model_copy(update={"agents": {}}))) is None


def test_a_multi_case_files_tools_are_each_cases_default(tmp_path):
    path = write(tmp_path / "s.yaml", """
        tools: [{name: a}]
        cases:
          - {id: one, starting_sentence: hi, checks: [{type: valid_tool_calls}]}
          - {id: two, starting_sentence: hi, tools: [{name: b}], checks: [{type: valid_tool_calls}]}
        """)
    cases, diagnostics, _ = load_file(path)
    assert diagnostics == []
    assert [c.tools for c in cases] == [[{"name": "a"}], [{"name": "b"}]]


def test_end_to_end_a_recorded_conversation_fails_with_the_breach_named(tmp_path):
    write_json(tmp_path / "t.json", [{"role": "user", "content": "Book Paris"},
                                     *call("a", "book_flight", {"city": "Paris", "date": "31/02/2025"}),
                                     {"role": "assistant", "content": "Booked."}])
    write(tmp_path / "s.yaml", f"""
        id: book
        starting_sentence: Book Paris
        transcript: t.json
        tools: {json.dumps([BOOK])}
        checks: [{{type: valid_tool_calls}}]
        """)
    done = run_cli("s.yaml", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("check 'valid_tool_calls': 0 of 1 tool call(s) valid against the tools of case 'book'; call #1 (message 2) "
            "book_flight: $.date: '31/02/2025' is not a 'date'") in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [check_result] = report["cases"][0]["checks"]
    assert check_result["evidence"]["breaches"] == [{"call": 1, "tool": "book_flight", "breach": "$.date: '31/02/2025' "
                                                     "is not a 'date'", "where": "call #1 (message 2) book_flight"}]
