"""Schemas whose `$ref`s fan out (issue 26, item 19): a 3.7 KB OpenAPI document whose references multiply to 8^9
nodes becomes tools whose schemas are shared under `$defs`, not written out until memory runs out; and a tool
schema whose references fan out while validating (anyOf of references to anyOf of references) leaves
`valid_tool_calls` unscored instead of validating for hours. Real subprocesses, with an address-space limit so
that an unbounded expansion fails fast instead of taking the machine's memory."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import REPO, cli_env, write, write_json
from tests.helpers.peak_memory import run_measured

ADDRESS_SPACE = 3 * 1024 ** 3  # what the subprocess may map: the 8^9 expansion needs tens of GB
MiB = 1024 * 1024


def fan_out_document(levels: int = 9, width: int = 8) -> dict:
    """S0 has `width` properties, each a $ref to S1, which has `width` properties, each a $ref to S2, ..."""
    schemas = {f"S{i}": {"type": "object", "properties": {f"p{j}": {"$ref": f"#/components/schemas/S{i + 1}"}
                                                          for j in range(width)}} for i in range(levels)}
    schemas[f"S{levels}"] = {"type": "string"}
    return {"openapi": "3.0.0", "info": {"title": "fan", "version": "1"},
            "paths": {"/things": {"post": {"operationId": "make_thing", "summary": "Make a thing.", "requestBody": {
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}},
            "components": {"schemas": schemas}}


def run_limited(args: list[str], cwd: Path, timeout: float = 300) -> tuple[subprocess.CompletedProcess, int]:
    """A subprocess under the address-space limit; its result and its own peak memory (tests/helpers/peak_memory.py)."""
    return run_measured(args, cwd, cli_env(), timeout=timeout, address_space=ADDRESS_SPACE)


def test_the_fan_out_document_is_as_small_as_the_issues():
    assert len(json.dumps(fan_out_document())) < 4000  # and its references would write out 8^9 nodes


@pytest.mark.process  # an address-space limit and the process's own peak memory
def test_generate_with_an_openapi_document_whose_refs_fan_out_shares_them(tmp_path):
    shutil.copy(REPO / "suites" / "live" / "hr_stories.csv", tmp_path / "stories.csv")
    write_json(tmp_path / "spec.json", fan_out_document())
    with FakeOpenAI(default=lambda request: "{not the answer}") as fake:
        write(tmp_path / "evalrun.yaml", f"generator: {{model: openai/fake-writer, api_base: '{fake.base_url}', "
                                         "max_retries: 0, reply_retries: 0}\n")
        done, _ = run_limited([sys.executable, "-m", "runner", "generate", "--stories", "stories.csv", "--tools",
                               "spec.json", "-n", "1", "-o", "out"], tmp_path)
        asked = list(fake.requests)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 1, done.stdout + done.stderr  # the story's answer is refused: the tools were read
    prompt = json.dumps(asked[0])
    assert '"$ref": "#/$defs/S1"' in prompt.replace('\\"', '"')  # each schema once, shared where it is used


LOAD = ("import json, sys; from runner.authoring.tools.load import load_tools; "
        "print(json.dumps(load_tools(sys.argv[1])))")


def load_in_a_subprocess(tmp_path: Path, document: dict) -> list:
    write_json(tmp_path / "spec.json", document)
    done, peak = run_limited([sys.executable, "-c", LOAD, "spec.json"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert peak < 300 * MiB, f"peak memory {peak / MiB:.0f} MiB"
    return json.loads(done.stdout)


def test_the_shared_schemas_are_exact_and_a_small_document_is_still_written_out(tmp_path):
    [tool] = load_in_a_subprocess(tmp_path, fan_out_document())
    parameters = tool["function"]["parameters"]
    assert parameters["properties"] == {f"p{j}": {"$ref": "#/$defs/S1"} for j in range(8)}
    assert sorted(parameters["$defs"]) == [f"S{i}" for i in range(1, 10)]
    assert parameters["$defs"]["S8"] == {"type": "object", "properties": {f"p{j}": {"$ref": "#/$defs/S9"}
                                                                          for j in range(8)}}
    assert parameters["$defs"]["S9"] == {"type": "string"}
    [small] = load_in_a_subprocess(tmp_path, fan_out_document(levels=2, width=2))  # 7 nodes: written out in place
    assert small["function"]["parameters"] == {"type": "object", "properties": {
        f"p{i}": {"type": "object", "properties": {f"p{j}": {"type": "string"} for j in range(2)}} for i in range(2)}}


def test_references_that_recurse_and_fan_out_are_shared_too(tmp_path):
    """Twelve schemas each referring to all the others: cutting each cycle on its path still leaves 11! paths."""
    names = [f"N{i}" for i in range(12)]
    document = fan_out_document(levels=1, width=1)
    document["components"]["schemas"] = {name: {"type": "object", "properties": {
        other: {"$ref": f"#/components/schemas/{other}"} for other in names if other != name}} for name in names}
    document["paths"]["/things"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/N0"}
    [tool] = load_in_a_subprocess(tmp_path, document)
    parameters = tool["function"]["parameters"]
    assert sorted(parameters["$defs"]) == sorted(names)  # N0 itself is referred to by the others
    assert parameters["$defs"]["N0"]["properties"]["N1"] == {"$ref": "#/$defs/N1"}


@pytest.mark.process  # an address-space limit and the process's own peak memory
def test_a_tool_schema_whose_references_fan_out_leaves_valid_tool_calls_unscored(tmp_path):
    defs = {f"S{i}": {"anyOf": [{"$ref": f"#/$defs/S{i + 1}"}] * 8} for i in range(9)}
    defs["S9"] = {"type": "integer"}
    tools = [{"type": "function", "function": {"name": "fan", "parameters": {
        "type": "object", "properties": {"v": {"$ref": "#/$defs/S0"}}, "$defs": defs}}}]
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", f"""
        id: fan
        transcript: t.json
        tools: {json.dumps(tools)}
        checks: [{{type: valid_tool_calls}}]
        """)
    write_json(tmp_path / "suites" / "t.json", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "fan", "arguments": json.dumps({"v": "not a number"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "Done."}])
    done, _ = run_limited([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], tmp_path, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["unscored_reason"] == (
        "check 'valid_tool_calls': unscored: call #1 (message 2) fan: the schema of 'fan' cannot be applied: validating "
        "the value follows more than 10,000 $refs (the schema's references fan out, as anyOf of references to anyOf "
        "of references); share fewer alternatives")
