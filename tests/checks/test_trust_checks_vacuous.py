"""Checks that compare nothing (issue 26, item 3): `validate` names each at its line and column, and one that
gets past it (an ADK file, a case built in code) is unscored when it runs, never a pass. Also item 6: a
`termination:` ending the conversation engine does not know is a validate error with a did-you-mean."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings, strategies as st

from runner.checks import families
from runner.checks.run import run_checks
from runner.run.conversation import TERMINATION_REASONS
from runner.suite.load import load_file
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory
from tests.helpers.adk_files import content, eval_case, eval_set
from tests.helpers.cli_helpers import REPO, run_cli, write, write_json


@pytest.fixture
def lint(tmp_path, monkeypatch):
    """Write `text` to a suite file in a temporary working directory; its diagnostics as text."""
    monkeypatch.chdir(tmp_path)

    def run(text: str) -> list[str]:
        Path("s.yaml").write_text(text, encoding="utf-8")
        return [str(d) for d in load_file(Path("s.yaml"))[1]]

    return run


EVERY_SHAPE = """\
cases:
  - id: a
    starting_sentence: hi
    final_state: {}
  - id: b
    starting_sentence: hi
    final_state: {orders: [], when: x}
    final_state_matching: {orders: ignore, "*": ignore}
  - id: c
    forbid_extra_calls: []
    goal_details:
      - {type: text, name: t, response: "  "}
    turns:
      - user: hi
        checks: [{type: contains_all, values: [ok, ""]}]
    checks:
      - {type: contains, value: ""}
      - {type: contains_any, values: [refund, ""]}
      - {type: not_contains, value: ""}
      - {type: regex, pattern: ".*"}
      - {type: not_regex, pattern: "^"}
      - {type: regex, pattern: "(foo)?|bar"}
      - {type: trajectory}
      - {type: trajectory, expected: [], match: any_order}
      - {type: latency, max_s: .inf}
      - {type: response_match, reference: "!!!", threshold: 0}
      - {type: all, checks: [{type: not_exact, value: "  "}, {type: json_schema, schema: {}}]}
      - {type: no_leak}
      - {type: assert, statement: "  "}
      - {type: factual_accuracy, facts: [It is on Monday., " "]}
"""


def test_validate_names_every_check_that_compares_nothing_where_it_is_written(lint):
    assert lint(EVERY_SHAPE) == [
        's.yaml:4:18: error: final_state compares nothing: an empty expected state matches every state; give the '
        'values the state must hold, or write `extra_keys: forbid` on a final_state check for "the state must be '
        'empty"',
        "s.yaml:7:18: error: final_state compares nothing: every value of the expected state is ignored "
        "(final_state_matching, or IGNORE), so it matches every state; compare at least one value",
        "s.yaml:10:25: error: forbid_extra_calls: [] forbids no call; write `true` to forbid every call no goal "
        "expects, or list the tool names (globs) to forbid",
        "s.yaml:12:41: error: text goal 't' compares nothing: a response of only spaces is no answer to compare with; "
        "write the expected answer, or remove `response` and give `keywords`",
        "s.yaml:15:52: error: check turns[0].checks[0] (contains_all) compares nothing: the empty text is found in "
        "every answer, so it checks nothing; remove it",
        "s.yaml:17:33: error: check checks[0] (contains) compares nothing: the empty text is found in every answer, so "
        "contains would pass whatever the agent says; give the text to look for",
        "s.yaml:18:47: error: check checks[1] (contains_any) compares nothing: the empty text is found in every "
        "answer, so contains_any would pass whatever the agent says; remove it",
        "s.yaml:19:37: error: check checks[2] (not_contains) compares nothing: the empty text is found in every "
        "answer, so not_contains would fail whatever the agent says; give the text to look for",
        "s.yaml:20:32: error: check checks[3] (regex) compares nothing: the pattern /.*/ matches every text (it "
        "matches the empty text at the start of any answer), so regex would pass whatever the agent says; make it "
        "require some text",
        "s.yaml:21:36: error: check checks[4] (not_regex) compares nothing: the pattern /^/ matches every text (it "
        "matches the empty text at the start of any answer), so not_regex would fail whatever the agent says; make "
        "it require some text",
        "s.yaml:22:32: error: check checks[5] (regex) compares nothing: the pattern /(foo)?|bar/ matches every text "
        "(it matches the empty text at the start of any answer), so regex would pass whatever the agent says; make "
        "it require some text",
        "s.yaml:23:9: error: check checks[6] (trajectory) compares nothing in case 'c': it compares the agent's calls "
        "with the case's tool goals, and the case has none, which every conversation matches in mode in_order; give "
        "`expected:` calls, or `match: exact` for \"the agent makes no call\"",
        "s.yaml:24:38: error: check checks[7] (trajectory) compares nothing: no expected calls are matched by every "
        "conversation in mode any_order; list the calls, or write `match: exact` for \"the agent makes no call\"",
        "s.yaml:25:32: error: check checks[8] (latency) compares nothing: a limit of infinity is never exceeded, so "
        "latency always passes; give a finite limit, or remove the check",
        "s.yaml:26:43: error: check checks[9] (response_match) compares nothing: the reference '!!!' has no word "
        "ROUGE-1 can compare (it reads letters and digits), so every answer scores 0; write the expected answer out",
        "s.yaml:26:61: warning: check checks[9] (response_match): threshold: 0 passes response_match on any score, "
        "so it fails only when it cannot be decided; raise the threshold (1: everything must match), or write "
        "`gate: false` to record the score without deciding the case",
        "s.yaml:27:55: error: check checks[10].checks[0] (not_exact) compares nothing: an empty value equals no "
        "answer (an agent that sends no text fails the check), so not_exact would pass whatever the agent says; "
        "give the expected text",
        "s.yaml:27:90: warning: check checks[10].checks[1] (json_schema): a schema without constraints accepts any "
        "JSON value, so the check only tests that the answer parses as JSON; add what the value must be (`type`, "
        "`required`, ...)",
        "s.yaml:28:9: error: check checks[11] (no_leak) compares nothing in case 'c': the case plants no `canaries` "
        "and the check lists no `values`: there is no secret to look for",
        "s.yaml:29:35: error: check checks[12] (assert) compares nothing: a statement of only spaces gives the judge "
        "nothing to go by; write it out",
        "s.yaml:30:60: error: check checks[13] (factual_accuracy) compares nothing: a fact of only spaces gives the "
        "judge nothing to check; write it out or remove it",
    ]


def test_a_check_every_case_shares_is_reported_once_at_its_own_place(lint):
    text = "checks: [{type: contains, value: ''}]\ncases:\n  - {id: a, goal_details: [{type: text, name: t, " \
           "keywords: [x]}]}\n  - {id: b, goal_details: [{type: text, name: t, keywords: [y]}]}\n"
    assert lint(text) == [
        "s.yaml:1:34: error: check checks[0] (contains) compares nothing: the empty text is found in every answer, so "
        "contains would pass whatever the agent says; give the text to look for"]


@pytest.mark.parametrize("text", [
    "starting_sentence: hi\nfinal_state: {orders: []}\n",  # an empty list compares its length
    "starting_sentence: hi\nfinal_state: {holds: {}}\n",  # the key must be there
    "starting_sentence: hi\nfinal_state: {a: 1, b: 2}\nfinal_state_matching: {a: ignore}\n",
    "starting_sentence: hi\nfinal_state: {}\nchecks: [{type: final_state, extra_keys: forbid}]\n",  # must be empty
    "starting_sentence: hi\nchecks: [{type: trajectory, expected: [], match: exact}]\n",  # no call at all
    "starting_sentence: hi\nchecks: [{type: tool_name_f1, expected: []}]\n",
    "starting_sentence: hi\ncanaries: [SECRET-4242]\nchecks: [{type: no_leak}]\n",
    "starting_sentence: hi\nchecks: [{type: no_leak, canaries: false, values: [Acme billing prompt]}]\n",
    "starting_sentence: hi\nchecks: [{type: regex, pattern: '^.*$'}, {type: regex, pattern: '^(?!.*refund)'}, "
    "{type: regex, pattern: '\\bok\\b?'}, {type: not_regex, pattern: '(?<=a)b*'}, {type: regex, pattern: 'a*$b'}]\n",
    "starting_sentence: hi\nchecks: [{type: semantic_match, reference: 'Monday.', threshold: 0}]\n",  # judge decides
    "starting_sentence: hi\nchecks: [{type: json_schema, schema: {type: object}}, {type: latency, max_s: 30}]\n",
    "starting_sentence: hi\ngoal_details: [{type: tool_call, name: g, tool_name: t}]\nchecks: [{type: trajectory}]\n",
])
def test_checks_that_compare_something_are_left_alone(lint, text):
    assert lint(text) == []


def test_a_no_write_calls_that_allows_every_tool_compares_nothing(lint):
    assert lint("starting_sentence: hi\ntags: [redteam]\nchecks: [{type: no_write_calls, allow: [book_*, '?*']}]\n") == [
        "s.yaml:3:49: error: check checks[0] (no_write_calls) compares nothing: `?*` allows every tool, so no call "
        "could fail the check; list the write-like tools the case needs instead"]
    assert _one({"type": "no_write_calls", "allow": ["*"]}) == (
        "unscored", "unscored: no_write_calls compares nothing: `*` allows every tool, so no call could fail the "
        "check; list the write-like tools the case needs instead")


# ------------------------------------------------------------------ at run time: unscored, never a pass

def _one(spec: dict, answer: str = "The refund is done.", **case_fields) -> tuple[str, str]:
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "checks": [spec], **case_fields})
    trajectory = build_trajectory([{"role": "user", "content": "hi"}, {"role": "assistant", "content": answer}])
    [result] = run_checks(case, trajectory)
    return result.status, result.explanation


@pytest.mark.parametrize("spec, explanation", [
    ({"type": "contains", "value": ""}, "contains compares nothing: the empty text is found in every answer, so "
     "contains would pass whatever the agent says; give the text to look for"),
    ({"type": "not_contains", "value": ""}, "not_contains compares nothing: the empty text is found in every answer, "
     "so not_contains would fail whatever the agent says; give the text to look for"),
    ({"type": "contains_any", "values": ["", "refund"]}, "contains_any compares nothing: the empty text is found in "
     "every answer, so contains_any would pass whatever the agent says; remove it"),
    ({"type": "regex", "pattern": "x*"}, "regex compares nothing: the pattern /x*/ matches every text (it matches "
     "the empty text at the start of any answer), so regex would pass whatever the agent says; make it require some "
     "text"),
    ({"type": "not_exact", "value": " "}, "not_exact compares nothing: an empty value equals no answer (an agent that "
     "sends no text fails the check), so not_exact would pass whatever the agent says; give the expected text"),
    ({"type": "final_state", "expected": {}}, "final_state compares nothing: an empty expected state matches every "
     "state; give the values the state must hold, or write `extra_keys: forbid` on a final_state check for \"the "
     "state must be empty\""),
])
def test_a_check_that_compares_nothing_is_unscored_when_it_runs(spec, explanation):
    assert _one(spec) == ("unscored", f"unscored: {explanation}")


def test_a_final_state_from_the_case_that_compares_nothing_is_unscored():
    status, explanation = _one({"type": "final_state"}, final_state={"a": 1}, final_state_matching={"a": "ignore"})
    assert (status, explanation) == ("unscored", "unscored: final_state compares nothing: every value of the expected "
                                     "state is ignored (final_state_matching, or IGNORE), so it matches every state; "
                                     "compare at least one value")


def _adk_project(tmp_path: Path, case: dict, config: dict, state: dict | None = None) -> None:
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write_json(tmp_path / "eval" / "home.test.json", eval_set(case))
    write_json(tmp_path / "eval" / "test_config.json", config)
    messages = [{"role": "user", "content": "Turn off the lights."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "delete_every_device", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "deleted"},
                {"role": "assistant", "content": "Done."}]
    write_json(tmp_path / "replay" / "lights.json", {"messages": messages, **({"state": state} if state else {})})


def _turn(calls: list) -> dict:
    return {"invocation_id": "i1", "user_content": content("user", "Turn off the lights."),
            "final_response": content("model", "Done."),
            "intermediate_data": {"tool_uses": calls, "intermediate_responses": []}, "creation_timestamp": 1.0}


def test_an_adk_turn_expecting_no_calls_in_order_is_unscored_not_passed(tmp_path):
    _adk_project(tmp_path, eval_case("lights", _turn([])),
                 {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"}}})
    done = run_cli("run", "eval", "--replay", "replay", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert (case["status"], case["unscored_reason"]) == ("unscored", (
        "check 'tool_trajectory_avg_score': unscored: tool_trajectory_avg_score compares nothing: no turn expects a "
        "call, and every turn matches no expected calls in IN_ORDER; list the calls a turn expects, or use match_type "
        "EXACT for \"no call\""))


def test_an_adk_final_session_state_that_is_empty_is_unscored_not_passed(tmp_path):
    _adk_project(tmp_path, eval_case("lights", _turn([{"id": None, "args": {}, "name": "delete_every_device"}]),
                                     final_session_state={}),
                 {"criteria": {"tool_trajectory_avg_score": 1.0}}, state={"devices": []})
    done = run_cli("run", "eval", "--replay", "replay", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["status"] == "unscored"
    assert case["unscored_reason"] == (
        "check 'final_state': unscored: final_state compares nothing: an empty expected state matches every state; "
        "give the values the state must hold, or write `extra_keys: forbid` on a final_state check for \"the state "
        "must be empty\"")


# ------------------------------------------------------------------ patterns that match every text

_ATOMS = ["a", "b", ".", "\\d", "[ab]", "^", "$", "\\b", "\\A", "\\Z", "(?=a)", "(?!a)", "(?<=a)"]


@st.composite
def patterns(draw, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["atom", "atom", "seq", "alt", "rep", "group"] if depth < 3 else ["atom"]))
    if kind == "atom":
        return draw(st.sampled_from(_ATOMS))
    if kind == "seq":
        return draw(patterns(depth + 1)) + draw(patterns(depth + 1))
    if kind == "alt":
        return f"(?:{draw(patterns(depth + 1))}|{draw(patterns(depth + 1))})"
    if kind == "group":
        return f"({draw(patterns(depth + 1))})"
    return f"(?:{draw(patterns(depth + 1))}){draw(st.sampled_from(['*', '+', '?', '{0,2}', '{1,2}', '*?', '*+']))}"


_TEXTS = ["", "a", "b", "ab", "ba", "1", " ", "\n", "x\ny", "aab", "b1a", "!!", "é"]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(patterns())
def test_a_pattern_called_vacuous_matches_every_text(pattern):
    """Soundness against brute force: a pattern flagged as matching every text does, on every sample text."""
    from runner.checks.vacuity import matches_everything

    if matches_everything(pattern) is not None:
        assert all(regex.search(pattern, text) is not None for text in _TEXTS), pattern


@pytest.mark.parametrize("pattern, where", [
    (".*", "start"), ("", "start"), ("(?:)", "start"), ("^", "start"), ("\\A", "start"), ("$", "end"),
    ("\\Z", "end"), ("a?", "start"), ("(a|)", "start"), ("x{0,3}", "start"), ("(?>a*)", "start"),
    ("^.*$", None), ("a", None), ("\\b", None), ("(?!a)", None), ("^$", None),
])
def test_which_patterns_match_every_text(pattern, where):
    from runner.checks.vacuity import matches_everything

    assert matches_everything(pattern) == where


def test_every_check_type_says_what_makes_it_compare_nothing():
    from runner.checks.vacuity import RULES

    assert sorted(RULES) == sorted(family.type for family in families())


# ------------------------------------------------------------------ item 6: termination

def test_a_misspelt_ending_is_an_error_with_did_you_mean(lint):
    text = "starting_sentence: hi\ntermination: [agent_stop, user_stp]\ngoal_details: [{type: text, name: t, " \
           "keywords: [x]}]\n"
    assert lint(text) == [
        "s.yaml:2:27: error: termination[1]: 'user_stp' is not one of " + ", ".join(TERMINATION_REASONS) +
        " (did you mean 'user_stop'?)"]


def test_the_schema_lists_the_endings_the_engine_knows():
    schema = json.loads((REPO / "schemas" / "suite.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["termination"]["items"]["enum"] == list(TERMINATION_REASONS)


def test_validate_through_the_cli_refuses_an_unknown_ending(tmp_path):
    write(tmp_path / "s.yaml", "starting_sentence: hi\ntermination: [timed_out]\n")
    done = run_cli("validate", "s.yaml", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stdout.splitlines()[0].startswith("s.yaml:2:15: error: termination[0]: 'timed_out' is not one of ")
