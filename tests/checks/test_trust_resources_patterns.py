"""A tool schema's `pattern` runs with a time limit (issue 26, item 18): an argument that makes it backtrack for
ever leaves `valid_tool_calls` (and a `json_schema` check) unscored, naming the pattern and the argument; never a
pass, never a hang. Through the real CLI in a subprocess, whose run must end well before Python's `re` would (it
would take longer than this test session on these inputs)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import cli_env, write, write_json

# the process's timeout bounds a run that, should the pattern limit break, would
# outlast the test session: in this process nothing could cut it short
pytestmark = pytest.mark.process

EVIL = "^(a|aa)+$"  # backtracks exponentially on a run of a's that does not end the text
HOSTILE = "a" * 48 + "!"  # Python's re needs hours for this one; the check must not wait for it
RUN_LIMIT_S = 120  # generous: the run itself waits about one pattern's time limit (1 s) per check


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], cwd=root, env=cli_env(),
                          capture_output=True, text=True, timeout=RUN_LIMIT_S)


def case_of(root: Path) -> dict:
    return json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))["cases"][0]


def calls(*arguments: dict) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": "Look up my order."}]
    for n, args in enumerate(arguments, 1):
        messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}", "type": "function",
                      "function": {"name": "lookup", "arguments": json.dumps(args)}}]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": "ok"}]
    return messages + [{"role": "assistant", "content": "Done."}]


def project(root: Path, parameters: dict, messages: list[dict], check: str = "{type: valid_tool_calls}") -> None:
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": parameters}}]
    write(root / "suites" / "s.yaml", f"""
        id: hostile
        transcript: t.json
        tools: {json.dumps(tools)}
        checks: [{check}]
        """)
    write_json(root / "suites" / "t.json", messages)


def test_a_pattern_that_backtracks_on_an_argument_leaves_the_check_unscored(tmp_path):
    parameters = {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}}
    project(tmp_path, parameters, calls(*[{"code": HOSTILE}] * 20))  # twenty such calls wait for one limit only
    done = run(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    case = case_of(tmp_path)
    assert case["status"] == "unscored"
    assert case["unscored_reason"] == (
        f"check 'valid_tool_calls': unscored: call #1 (message 2) lookup: $.code is not checked: the pattern /{EVIL}/ "
        f"took longer than 1 s on the value '{HOSTILE}' and was stopped (nested repeats such as (a+)+ backtrack) "
        "(the schema of 'lookup')")


def test_a_breach_found_elsewhere_still_fails_the_check(tmp_path):
    parameters = {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL},
                                                   "n": {"type": "integer"}}}
    project(tmp_path, parameters, calls({"code": HOSTILE}, {"code": "aa", "n": "two"}))
    done = run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    check = case_of(tmp_path)["checks"][0]
    assert (check["status"], check["score"]) == ("failed", 0.5)
    assert "call #2 (message 4) lookup: $.n: 'two' is not of type 'integer'" in check["explanation"]


def test_pattern_properties_and_additional_properties_are_bounded_too(tmp_path):
    parameters = {"type": "object", "patternProperties": {"^x(a|aa)+$": {"type": "integer"}},
                  "additionalProperties": False}
    project(tmp_path, parameters, calls({"x" + HOSTILE: 1}))
    done = run(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert case_of(tmp_path)["unscored_reason"] == (
        f"check 'valid_tool_calls': unscored: call #1 (message 2) lookup: $['x{HOSTILE}'] is not checked: the pattern "
        f"/^x(a|aa)+$/ took longer than 1 s on the key 'x{HOSTILE}' and was stopped (nested repeats such as (a+)+ "
        "backtrack) (the schema of 'lookup')")


def test_bounded_patterns_still_decide_ordinary_arguments(tmp_path):
    parameters = {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}},
                  "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}
    project(tmp_path, parameters, calls({"code": "aaa", "xa": 1}, {"code": "ab"}, {"code": "aa", "xb": "1", "y": 2}))
    done = run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    check = case_of(tmp_path)["checks"][0]
    assert check["explanation"] == (
        "1 of 3 tool call(s) valid against the tools of case 'hostile'; call #2 (message 4) lookup: $.code: 'ab' does "
        f"not match '{EVIL}'; call #3 (message 6) lookup: $: 'y' is not allowed: not among the properties, and "
        "matching none of the patternProperties ('^x'), $.xb: '1' is not of type 'integer' (score 0.333 < threshold "
        "1)")


def test_a_json_schema_checks_pattern_on_the_agents_answer_is_bounded(tmp_path):
    messages = [{"role": "user", "content": "Your code?"}, {"role": "assistant", "content": json.dumps({"code": HOSTILE})}]
    project(tmp_path, {"type": "object"}, messages,
            check=json.dumps({"type": "json_schema", "schema": {"properties": {"code": {"pattern": EVIL}}}}))
    done = run(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert case_of(tmp_path)["unscored_reason"] == (
        f"check 'json_schema': unscored: at code, the pattern /{EVIL}/ took longer than 1 s on the value '{HOSTILE}' "
        "and was stopped (nested repeats such as (a+)+ backtrack); simplify the schema's pattern")
