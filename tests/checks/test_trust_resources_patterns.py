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


def calls(*arguments: dict) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": "Look up my order."}]
    for n, args in enumerate(arguments, 1):
        messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}", "type": "function",
                      "function": {"name": "lookup", "arguments": json.dumps(args)}}]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": "ok"}]
    return messages + [{"role": "assistant", "content": "Done."}]


def case(root: Path, name: str, parameters: dict, messages: list[dict], check: str = "{type: valid_tool_calls}") -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": parameters}}]
    write(root / "suites" / f"{name}.yaml", f"""
        id: {name}
        transcript: {name}.json
        tools: {json.dumps(tools)}
        checks: [{check}]
        """)
    write_json(root / "suites" / f"{name}.json", messages)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """Every test's case in one project, run once (an interpreter's start and imports a run, not one a test):
    (the run, its cases by id). Each case is decided by its own check; the run's exit code is the worst's."""
    root = tmp_path_factory.mktemp("patterns")
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    evil = {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}}
    case(root, "backtracks", evil, calls(*[{"code": HOSTILE}] * 20))  # twenty such calls wait for one limit only
    case(root, "breach", {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL},
                                                           "n": {"type": "integer"}}},
         calls({"code": HOSTILE}, {"code": "aa", "n": "two"}))
    case(root, "keys", {"type": "object", "patternProperties": {"^x(a|aa)+$": {"type": "integer"}},
                        "additionalProperties": False}, calls({"x" + HOSTILE: 1}))
    case(root, "ordinary", {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}},
                            "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
         calls({"code": "aaa", "xa": 1}, {"code": "ab"}, {"code": "aa", "xb": "1", "y": 2}))
    case(root, "answer", {"type": "object"},
         [{"role": "user", "content": "Your code?"}, {"role": "assistant", "content": json.dumps({"code": HOSTILE})}],
         check=json.dumps({"type": "json_schema", "schema": {"properties": {"code": {"pattern": EVIL}}}}))
    done = subprocess.run([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], cwd=root, env=cli_env(),
                          capture_output=True, text=True, timeout=RUN_LIMIT_S)
    report = json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))
    return done, {c["id"]: c for c in report["cases"]}


def test_the_run_ends_unscored_with_every_case_decided(run):
    done, cases = run
    assert done.returncode == 3, done.stdout + done.stderr  # unscored cases: exit 3, whatever else failed
    assert {name: c["status"] for name, c in cases.items()} == {
        "backtracks": "unscored", "breach": "failed", "keys": "unscored", "ordinary": "failed", "answer": "unscored"}


def test_a_pattern_that_backtracks_on_an_argument_leaves_the_check_unscored(run):
    case = run[1]["backtracks"]
    assert case["status"] == "unscored"
    assert case["unscored_reason"] == (
        f"check 'valid_tool_calls': unscored: call #1 (message 2) lookup: $.code is not checked: the pattern /{EVIL}/ "
        f"took longer than 1 s on the value '{HOSTILE}' and was stopped (nested repeats such as (a+)+ backtrack) "
        "(the schema of 'lookup')")


def test_a_breach_found_elsewhere_still_fails_the_check(run):
    case = run[1]["breach"]
    assert case["status"] == "failed"  # failed, not unscored: alone in a run it exits 1
    check = case["checks"][0]
    assert (check["status"], check["score"]) == ("failed", 0.5)
    assert "call #2 (message 4) lookup: $.n: 'two' is not of type 'integer'" in check["explanation"]


def test_pattern_properties_and_additional_properties_are_bounded_too(run):
    assert run[1]["keys"]["unscored_reason"] == (
        f"check 'valid_tool_calls': unscored: call #1 (message 2) lookup: $['x{HOSTILE}'] is not checked: the pattern "
        f"/^x(a|aa)+$/ took longer than 1 s on the key 'x{HOSTILE}' and was stopped (nested repeats such as (a+)+ "
        "backtrack) (the schema of 'lookup')")


def test_bounded_patterns_still_decide_ordinary_arguments(run):
    case = run[1]["ordinary"]
    assert case["status"] == "failed"  # alone in a run it exits 1
    assert case["checks"][0]["explanation"] == (
        "1 of 3 tool call(s) valid against the tools of case 'ordinary'; call #2 (message 4) lookup: $.code: 'ab' does "
        f"not match '{EVIL}'; call #3 (message 6) lookup: $: 'y' is not allowed: not among the properties, and "
        "matching none of the patternProperties ('^x'), $.xb: '1' is not of type 'integer' (score 0.333 < threshold "
        "1)")


def test_a_json_schema_checks_pattern_on_the_agents_answer_is_bounded(run):
    assert run[1]["answer"]["unscored_reason"] == (
        f"check 'json_schema': unscored: at code, the pattern /{EVIL}/ took longer than 1 s on the value '{HOSTILE}' "
        "and was stopped (nested repeats such as (a+)+ backtrack); simplify the schema's pattern")
