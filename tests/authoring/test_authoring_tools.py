"""Tool loading (runner/authoring/tools/load.py): Python modules, OpenAPI documents, lists of definitions, an agent's
tools in evalrun.yaml and a real MCP server over stdio; every way it fails is a ToolsError that says where."""
from __future__ import annotations

import re
import shlex
import sys

import pytest

from runner.authoring.tools.load import ToolsError, load_mcp_tools, load_tools, parse_docstring
from runner.config.load import load_config
from tests.helpers.cli_helpers import REPO, write, write_json

MCP_SERVER = REPO / "tests" / "data" / "tools" / "mcp_weather_server.py"


def functions(tools: list[dict]) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in tools}


def test_a_python_module_gives_json_schemas_from_type_hints_and_docstrings(tmp_path):
    write(tmp_path / "tools.py", '''
        from datetime import date
        from typing import Literal, Optional

        from helper import UNIT  # a module beside it imports


        def book_room(guest: str, nights: int, arrival: date, view: Literal["sea", "garden"] = "sea",
                      note: Optional[str] = None, *args, **kwargs) -> str:
            """Book a hotel room.

            Args:
                guest: The guest's full name.
                nights: How many nights,
                    at least one.
                arrival: The day of arrival.

            Returns:
                The booking reference.
            """
            return "R1"


        def _private(x: int) -> int:
            return x
        ''')
    write(tmp_path / "helper.py", "UNIT = 'C'\n")
    [tool] = load_tools(str(tmp_path / "tools.py"))
    function = tool["function"]
    assert (tool["type"], function["name"], function["description"]) == ("function", "book_room", "Book a hotel room.")
    assert function["parameters"] == {
        "additionalProperties": False, "type": "object",
        "properties": {"guest": {"type": "string", "description": "The guest's full name."},
                       "nights": {"type": "integer", "description": "How many nights, at least one."},
                       "arrival": {"type": "string", "format": "date", "description": "The day of arrival."},
                       "view": {"enum": ["sea", "garden"], "type": "string", "default": "sea"},
                       "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "required": ["guest", "nights", "arrival"]}


def test_the_bundled_hr_tools_module():
    tools = functions(load_tools(str(REPO / "suites" / "live" / "hr_tools.py")))
    assert sorted(tools) == ["get_assignment_id_hr_agent", "get_timeoff_schedule_hr_agent"]
    assert tools["get_timeoff_schedule_hr_agent"]["parameters"]["properties"]["start_date"]["format"] == "date"


def test_reST_param_lines_are_read_too():
    assert parse_docstring("Send mail.\n\n:param to: The address.\n:param str body: The text.") == (
        "Send mail.", {"to": "The address.", "body": "The text."})


@pytest.mark.parametrize("source, message", [
    ("import nowhere_to_be_found\n", "importing it failed: ModuleNotFoundError: No module named 'nowhere_to_be_found'"),
    ("raise SystemExit(3)\n", "importing it failed: SystemExit: 3"),
    ("X = 1\n", "defines no public function to use as a tool"),
    ("def f(x: 'Undefined') -> None:\n    pass\n", "f: cannot read its type hints: name 'Undefined' is not defined"),
])
def test_a_module_that_cannot_give_tools_says_why(tmp_path, source, message):
    path = write(tmp_path / "bad.py", source)
    with pytest.raises(ToolsError) as caught:
        load_tools(str(path))
    assert str(caught.value).endswith(message), str(caught.value)


OPENAPI = """
openapi: 3.0.0
info: {title: Pets, version: "1"}
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, schema: {type: string}, description: The pet's id}
    get:
      operationId: getPet
      summary: One pet
      parameters:
        - {name: verbose, in: query, schema: {type: boolean}}
        - {name: session, in: cookie, schema: {type: string}}
    delete:
      summary: Remove a pet
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
components:
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        owner: {$ref: "#/components/schemas/Owner"}
    Owner:
      type: object
      properties: {pets: {type: array, items: {$ref: "#/components/schemas/Pet"}}}
"""


def test_an_openapi_document_gives_one_tool_per_operation(tmp_path):
    tools = functions(load_tools(str(write(tmp_path / "api.yaml", OPENAPI))))
    assert sorted(tools) == ["addPet", "delete_pets_petId", "getPet"]
    assert tools["getPet"] == {"name": "getPet", "description": "One pet", "parameters": {
        "type": "object", "required": ["petId"],
        "properties": {"petId": {"type": "string", "description": "The pet's id"}, "verbose": {"type": "boolean"}}}}
    assert tools["delete_pets_petId"]["description"] == "Remove a pet"
    add = tools["addPet"]["parameters"]
    assert add["required"] == ["name"] and add["properties"]["name"] == {"type": "string"}
    # the recursive $ref (Pet -> Owner -> Pet) is cut, not followed for ever
    assert add["properties"]["owner"]["properties"]["pets"]["items"]["type"] == "object"


def test_lists_of_definitions_in_json_and_yaml_and_under_tools(tmp_path):
    definitions = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}, {"name": "b"}]
    assert sorted(functions(load_tools(str(write_json(tmp_path / "t.json", definitions))))) == ["a", "b"]
    assert sorted(functions(load_tools(str(write_json(tmp_path / "u.yaml", {"tools": definitions}))))) == ["a", "b"]


@pytest.mark.parametrize("name, text, message", [
    ("t.json", "[{\"name\": \"a\", \"parameters\": {\"type\": \"strng\"}}]",
     "t.json: tools[0].parameters.type: not a valid JSON Schema: 'strng' is not a JSON type"),
    ("t.json", "{not json", "t.json: not valid JSON"),
    ("t.yaml", "a: 1\n", "t.yaml: neither an OpenAPI document (no `openapi:` key) nor a list of tool definitions"),
    ("t.yaml", "[]\n", "t.yaml: defines no tools"),
    ("o.yaml", "openapi: 3.0.0\npaths: {}\n", "o.yaml: the OpenAPI document has no `paths`"),
])
def test_bad_tool_files_are_refused_with_the_place(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(ToolsError) as caught:
        load_tools(str(tmp_path / name))
    assert message in str(caught.value)


def test_an_agents_tools_in_evalrun_yaml(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        agents:
          bot: {type: http, url: "http://localhost:1/x", tools: [{name: lookup}]}
          bare: {type: python, entrypoint: "m:f"}
        """)
    loaded, _ = load_config(tmp_path / "evalrun.yaml")
    assert list(functions(load_tools("agent:bot", config=loaded))) == ["lookup"]
    with pytest.raises(ToolsError, match=r"agent:bott: no such agent \(did you mean 'bot'\?\) \(declared: bot, bare\)"):
        load_tools("agent:bott", config=loaded)
    with pytest.raises(ToolsError, match=re.escape("the agent has no `tools:` in evalrun.yaml")):
        load_tools("agent:bare", config=loaded)


def test_a_missing_file_names_what_may_be_given():
    with pytest.raises(ToolsError, match=r"no such file .give a \.py module, an OpenAPI document"):
        load_tools("nowhere.py")


def test_a_real_mcp_server_over_stdio_lists_its_tools():
    tools = functions(load_mcp_tools(f"{shlex.quote(sys.executable)} {shlex.quote(str(MCP_SERVER))}"))
    assert sorted(tools) == ["get_alerts", "get_forecast"]
    forecast = tools["get_forecast"]
    assert forecast["description"] == "The weather forecast for a city."
    assert forecast["parameters"]["required"] == ["city"]
    assert forecast["parameters"]["properties"]["unit"] == {"default": "C", "enum": ["C", "F"], "type": "string"}


@pytest.mark.parametrize("command, reason", [
    ("/nonexistent/server --stdio", "no such program: /nonexistent/server"),
    (f"{sys.executable} -c 'print(1)'", "could not list the server's tools: "),
    (f"{sys.executable} -c 'import sys; sys.exit(2)'", "could not list the server's tools: "),
])
def test_an_unreachable_mcp_server_is_a_clear_error(command, reason):
    with pytest.raises(ToolsError) as caught:
        load_mcp_tools(command, timeout_s=20)
    assert f"--tools-mcp {command!r}" in str(caught.value) and reason in str(caught.value)


def test_a_silent_mcp_server_times_out():
    command = f"{sys.executable} -c 'import sys, time; sys.stdin.read()'"
    with pytest.raises(ToolsError, match="it did not answer in time"):
        load_mcp_tools(command, timeout_s=0.3)  # what matters is that it fires
