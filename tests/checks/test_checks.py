"""Semantic checks: what the schema cannot say, each reported at the exact line and column."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from runner.suite.load import load_file


@pytest.fixture
def lint(tmp_path, monkeypatch):
    """Write `text` to a suite file in a temporary working directory; return its diagnostics as text."""
    monkeypatch.chdir(tmp_path)

    def run(text: str, name: str = "s.yaml") -> list[str]:
        Path(name).write_text(text, encoding="utf-8")
        cases, diagnostics, _ = load_file(Path(name))
        if any(d.severity == "error" for d in diagnostics):
            assert cases == []
        return [str(d) for d in diagnostics]

    return run


def test_goal_names_are_unique(lint):
    text = """\
goal_details:
  - {type: text, name: greet, keywords: [hi]}
  - {type: tool_call, name: look, tool_name: t}
  - {type: text, name: greet, keywords: [bye]}
"""
    assert lint(text) == [
        "s.yaml:4:24: error: goal name 'greet' is used twice (first at line 2); goal names must be unique"]


def test_goals_keys_and_values_must_name_goals(lint):
    text = """\
goals:
  lookup: [tell]
  lookp: [tel]
goal_details:
  - {type: tool_call, name: lookup, tool_name: t}
  - {type: text, name: tell, keywords: [x]}
"""
    assert lint(text) == [
        "s.yaml:3:3: error: goal 'lookp' is listed in goals but has no goal_details entry (did you mean 'lookup'?)",
        "s.yaml:3:11: error: goal 'tel' is listed in goals but has no goal_details entry (did you mean 'tell'?)",
    ]


def test_unknown_goal_without_a_close_name(lint):
    text = "goals:\n  a: [zzz]\ngoal_details:\n  - {type: text, name: a, keywords: [x]}\n"
    assert lint(text) == ["s.yaml:2:7: error: goal 'zzz' is listed in goals but has no goal_details entry"]


def test_cycle_is_reported_with_its_path(lint):
    text = """\
goals:
  a: [b]
  b: [c]
  c: [a]
goal_details:
  - {type: text, name: a, keywords: [x]}
  - {type: text, name: b, keywords: [x]}
  - {type: text, name: c, keywords: [x]}
"""
    assert lint(text) == [
        "s.yaml:2:3: error: goals form a cycle: a -> b -> c -> a; no order of calls can satisfy it"]


def test_two_goal_cycle_and_self_loop(lint):
    text = """\
goals:
  first: [second]
  second: [first]
  alone: [alone]
goal_details:
  - {type: text, name: first, keywords: [x]}
  - {type: text, name: second, keywords: [x]}
  - {type: text, name: alone, keywords: [x]}
"""
    assert lint(text) == [
        "s.yaml:2:3: error: goals form a cycle: first -> second -> first; no order of calls can satisfy it",
        "s.yaml:4:3: error: goals form a cycle: alone -> alone; no order of calls can satisfy it",
    ]


def test_a_diamond_is_not_a_cycle(lint):
    text = """\
goals: {a: [b, c], b: [d], c: [d]}
goal_details:
  - {type: text, name: a, keywords: [x]}
  - {type: text, name: b, keywords: [x]}
  - {type: text, name: c, keywords: [x]}
  - {type: text, name: d, keywords: [x]}
"""
    assert lint(text) == []


def test_arg_matching_must_name_an_argument(lint):
    text = """\
goal_details:
  - type: tool_call
    name: book
    tool_name: book_flight
    args: {origin: JFK, address: {zip: "10001", street: Main}, passengers: [{name: A}]}
    arg_matching:
      address.zip: {regex: "^\\\\d{5}$"}
      address: fuzzy
      passengers.0.name: fuzzy
      orign: fuzzy
      address.zp: ignore
"""
    assert lint(text) == [
        "s.yaml:10:7: error: arg_matching names 'orign', which is not an argument of goal 'book' "
        "(did you mean 'origin'?)",
        "s.yaml:11:7: error: arg_matching names 'address.zp', which is not an argument of goal 'book' "
        "(did you mean 'address.zip'?)",
    ]


def test_text_goal_needs_response_or_keywords(lint):
    text = """\
goal_details:
  - type: text
    name: say
  - {type: text, name: answer, response: ok}
  - {type: text, name: words, keywords: [ok]}
  - {type: text, name: empty, response: "", keywords: []}
"""
    assert lint(text) == [
        "s.yaml:2:5: error: text goal 'say' needs a `response`, `keywords`, or both",
        "s.yaml:6:5: error: text goal 'empty' needs a `response`, `keywords`, or both",
    ]


def test_tool_call_needs_tool_name(lint):
    assert lint("goal_details:\n  - type: tool_call\n    name: look\n") == [
        "s.yaml:2:5: error: goal_details[0] is missing the required key 'tool_name'"]


def test_bad_regex(lint):
    text = """\
goal_details:
  - type: tool_call
    name: a
    tool_name: t
    args: {code: X1}
    arg_matching:
      code: {regex: "([A-Z]"}
"""
    assert lint(text) == [
        "s.yaml:7:21: error: invalid regular expression '([A-Z]': missing ) at position 6"]


def test_conflicting_rules(lint):
    text = """\
goal_details:
  - type: tool_call
    name: a
    tool_name: t
    args: {w: 1, x: 2, y: 3, z: 4, v: 5}
    arg_matching:
      w: {one_of: [1, 2], regex: "\\\\d"}
      x: {regex: "\\\\d", mode: fuzzy}
      y: {threshold: 0.5}
      z: {mode: fuzzy, threshold: 0.5, optional: true}
      v: {one_of: [5], mode: optional}
"""
    assert lint(text) == [
        "s.yaml:7:10: error: use one of one_of, regex and tolerance per argument, not one_of and regex",
        "s.yaml:8:31: error: mode 'fuzzy' cannot be combined with regex; remove the mode",
        "s.yaml:9:22: error: threshold only applies with `mode: fuzzy`",
    ]


def test_ignore_sentinels_are_accepted(lint):
    text = """\
goal_details:
  - {type: tool_call, name: upload, tool_name: upload_file, args: {IGNORE: null}}
  - {type: tool_call, name: send, tool_name: send, args: {to: ann, id: "<IGNORE>"}, arg_matching: {id: ignore}}
"""
    assert lint(text) == []


def test_arg_matching_beside_ignore_all_is_a_warning(lint):
    text = """\
goal_details:
  - type: tool_call
    name: upload
    tool_name: upload_file
    args: {IGNORE: null}
    arg_matching: {name: fuzzy}
"""
    assert lint(text) == ["s.yaml:6:20: warning: arg_matching 'name' has no effect: args is {IGNORE: null}, "
                          "which skips every argument"]


def test_empty_forbidden_tool_name(lint):
    assert lint("forbid_extra_calls: [cancel_*, '  ']\ngoal_details: []\n") == [
        "s.yaml:1:32: error: an empty tool name matches nothing"]


def test_checks_run_per_case_in_a_multi_case_file(lint):
    text = """\
cases:
  - id: one
    goal_details:
      - {type: text, name: a, keywords: [x]}
  - id: two
    goals: {a: [b]}
    goal_details:
      - {type: text, name: a}
"""
    assert lint(text) == [
        "s.yaml:6:17: error: goal 'b' is listed in goals but has no goal_details entry",
        "s.yaml:8:9: error: text goal 'a' needs a `response`, `keywords`, or both",
    ]


def test_checks_survive_values_of_the_wrong_type(lint):
    # the schema reports these; the semantic checks must pass over them without a traceback
    text = """\
forbid_extra_calls: [true, [x]]
goals: [a, b]
goal_details:
  - just text
  - {type: text, name: [a], keywords: [x]}
  - {type: tool_call, name: b, tool_name: t, args: [1, 2], arg_matching: {x: fuzzy}}
  - {type: tool_call, name: c, tool_name: t, args: {x: 1}, arg_matching: [x]}
"""
    assert lint(text) == [
        "s.yaml:1:22: error: forbid_extra_calls[0] must be text, got the boolean true",
        "s.yaml:1:28: error: forbid_extra_calls[1] must be text, got a list [\"x\"]",
        "s.yaml:2:8: error: goals must be a map of goal name → goals that come after it (a list of goal names); "
        "here it is a list [\"a\", \"b\"]",
        "s.yaml:4:5: error: goal_details[0] must be a mapping, got the text 'just text'",
        "s.yaml:5:24: error: goal_details[1].name must be text, got a list [\"a\"]",
        "s.yaml:6:52: error: goal_details[2].args must be a map of argument name → expected value; here it is a "
        "list [1, 2]",
        "s.yaml:7:74: error: goal_details[3].arg_matching must be a map of argument name → how to compare it (a "
        "mode such as fuzzy, or a rule); here it is a list [\"x\"]",
    ]


def test_goals_values_of_the_wrong_type(lint):
    text = "goals: {a: b, c: [{d: 1}]}\ngoal_details:\n  - {type: text, name: a, keywords: [x]}\n"
    assert lint(text) == [
        "s.yaml:1:12: error: goals.a must be a list, got the text 'b'",
        "s.yaml:1:15: error: goal 'c' is listed in goals but has no goal_details entry",
        "s.yaml:1:19: error: goals.c[0] must be text, got a mapping {\"d\": 1}",
    ]


def test_all_problems_of_a_file_at_once_sorted_by_position(lint):
    text = """\
id: everything-wrong
goal_detail: []
goals:
  lookup: [tell]
goal_details:
  - type: tool_call
    name: lookup
    tool_name: t
    args: {a: 1}
    arg_match: {a: fuzzy}
    arg_matching: {b: fuzzy}
  - type: text
    name: tell
  - type: tool
    name: q
story: [unterminated
"""
    # a YAML syntax error stops the file before the other checks
    assert lint(text) == [
        "s.yaml:17:1: error: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence)"]
    assert lint(text.replace("story: [unterminated\n", "story: [5]\n")) == [
        "s.yaml:2:1: error: unknown key 'goal_detail' in the top level (did you mean 'goal_details'?)",
        "s.yaml:10:5: error: unknown key 'arg_match' in goal_details[0] (did you mean 'arg_matching'?)",
        "s.yaml:11:20: error: arg_matching names 'b', which is not an argument of goal 'lookup'",
        "s.yaml:12:5: error: text goal 'tell' needs a `response`, `keywords`, or both",
        "s.yaml:14:11: error: goal_details[2].type: 'tool' is not one of tool_call, text, interaction, assert_llm "
        "(did you mean 'tool_call'?)",
        "s.yaml:16:8: error: story must be text, got a list [5]",
    ]


def test_a_misspelt_mode_is_reported_once(tmp_path):
    from runner.suite.load import load_file

    path = tmp_path / "m.yaml"
    path.write_text("goal_details:\n  - {type: tool_call, name: a, tool_name: t, args: {x: 1},"
                    " arg_matching: {x: {mode: fuzy}}}\n")
    _, diagnostics, _ = load_file(path)
    assert [d.message for d in diagnostics] == [
        "goal_details[0].arg_matching.x.mode: 'fuzy' is not one of strict, exact, optional, ignore, fuzzy "
        "(did you mean 'fuzzy'?)"]


# ------------------------------------------------------------------ review fixes

def _chain(n: int, *, cycle: bool) -> str:
    names = [f"g{i}" for i in range(n)]
    order = "".join(f"  {a}: [{b}]\n" for a, b in itertools.pairwise(names))
    if cycle:
        order += f"  {names[-1]}: [{names[0]}]\n"
    details = "".join(f"  - {{type: text, name: {name}, keywords: [x]}}\n" for name in names)
    return f"goals:\n{order}goal_details:\n{details}"


def test_a_long_chain_of_goals_is_checked_without_recursion(lint):
    assert lint(_chain(3000, cycle=False)) == []


def test_a_long_cycle_is_reported_once_at_its_first_goal(lint):
    names = " -> ".join(f"g{i}" for i in range(3000))
    assert lint(_chain(3000, cycle=True)) == [
        f"s.yaml:2:3: error: goals form a cycle: {names} -> g0; no order of calls can satisfy it"]


def test_cycles_keep_their_message_and_position(lint):
    text = """\
goals:
  a: [b, c]
  b: [a]
  c: [c]
goal_details:
  - {type: text, name: a, keywords: [x]}
  - {type: text, name: b, keywords: [x]}
  - {type: text, name: c, keywords: [x]}
"""
    assert lint(text) == [
        "s.yaml:2:3: error: goals form a cycle: a -> b -> a; no order of calls can satisfy it",
        "s.yaml:4:3: error: goals form a cycle: c -> c; no order of calls can satisfy it",
    ]


def test_modes_that_a_rule_would_silently_drop(lint):
    text = """\
goal_details:
  - type: tool_call
    name: a
    tool_name: t
    args: {p: 1, q: 2, r: 3, s: 4, t: 5, u: 6, v: 7, w: 8}
    arg_matching:
      p: {mode: exact, tolerance: 0.5}
      q: {mode: strict, tolerance: 0.5}
      r: {mode: ignore, tolerance: 0.5}
      s: {mode: ignore, one_of: [4]}
      t: {mode: ignore, threshold: 0.5}
      u: {mode: optional, tolerance: 0.5}
      v: {mode: fuzzy, tolerance: 0.5}
      w: {tolerance: 0.5, optional: true}
"""
    assert lint(text) == [
        "s.yaml:7:17: error: mode 'exact' cannot be combined with tolerance; remove the mode",
        "s.yaml:8:17: error: mode 'strict' cannot be combined with tolerance; remove the mode",
        "s.yaml:9:17: error: mode 'ignore' cannot be combined with tolerance; remove the mode",
        "s.yaml:10:17: error: mode 'ignore' cannot be combined with one_of; remove the mode",
        "s.yaml:11:36: error: threshold only applies with `mode: fuzzy`",
    ]


def test_an_empty_keyword_is_an_error(lint):
    text = """\
goal_details:
  - {type: text, name: a, keywords: [refund, ""]}
  - type: text
    name: b
    keywords:
      - "   "
"""
    assert lint(text) == [
        "s.yaml:2:46: error: an empty keyword matches every message; remove it",
        "s.yaml:6:9: error: an empty keyword matches every message; remove it",
    ]


# ---------------------------------------------------------------- what people mean (issue 7)

def _loaded(text: str, name: str = "s.yaml"):
    Path(name).write_text(text, encoding="utf-8")
    return load_file(Path(name))


def test_numbers_where_text_is_expected_are_taken_as_written(lint):
    text = """\
id: 42
tags: [7, hr]
agent: 3
goals: {1: [2]}
goal_details:
  - {type: tool_call, name: 1, tool_name: 12, args: {id: 15778303}}
  - type: text
    name: 2
    keywords: [15778303, 1.50, 1e3]
    response: 15778303
"""
    assert lint(text) == []
    (case,), _, _ = load_file(Path("s.yaml"))
    assert (case.id, case.tags, case.agent, case.goals) == ("42", ["7", "hr"], "3", {"1": ["2"]})
    tool, said = case.goal_details
    assert (tool.name, tool.tool_name, tool.args) == ("1", "12", {"id": 15778303})  # arguments keep their type
    assert (said.name, said.keywords, said.response) == ("2", ["15778303", "1.50", "1e3"], "15778303")


def test_numbers_in_a_json_dataset_are_taken_as_written(lint):
    text = '{"id": 7, "goal_details": [{"type": "text", "name": "s", "keywords": [2.50, 15778303]}]}'
    assert lint(text, "d.json") == []
    (case,), _, _ = load_file(Path("d.json"))
    assert (case.id, case.goal_details[0].keywords) == ("7", ["2.50", "15778303"])


def test_a_date_split_by_the_flow_comma_is_taken_as_text_with_a_warning(lint):
    text = "goal_details:\n  - type: text\n    name: s\n    keywords: [January 5, 2025]\n"
    assert lint(text) == [
        "s.yaml:4:16: warning: keywords: 'January 5' and 2025 look like one date split by YAML's comma; "
        "write [\"January 5, 2025\"]"]
    (case,), _, _ = load_file(Path("s.yaml"))
    assert case.goal_details[0].keywords == ["January 5", "2025"]


def test_a_word_before_a_year_is_not_a_split_date(lint):
    assert lint("goal_details:\n  - {type: text, name: s, keywords: [total 5, 2025]}\n") == []


def test_numbers_stay_errors_where_text_is_not_expected(lint):
    assert lint("goal_details:\n  - {type: text, name: s, keywords: [x], scope: 1}\n") == [
        "s.yaml:2:49: error: goal_details[0].scope must be text, got the number 1",
        "s.yaml:2:49: error: goal_details[0].scope: 1 is not one of any, final"]


def test_a_case_with_nothing_to_check_is_an_error(lint):
    assert lint("story: hi\ngoal_details: []\n") == [
        "s.yaml:2:1: error: case 's' has nothing to check: no goals and no forbidden calls, so it would pass "
        "whatever the agent does; add goal_details, or `forbid_extra_calls: true` for \"the agent must refuse and "
        "change nothing\" (a case with only a starting sentence or story is for `evalrun quick`)"]
    assert lint("cases:\n  - story: a\n  - {story: b, forbid_extra_calls: true}\n")[0].startswith(
        "s.yaml:2:5: error: case 's-1' has nothing to check")


@pytest.mark.parametrize("text", [
    "goal_details: []\nforbid_extra_calls: true\n",  # the agent must refuse and change nothing
    "forbid_extra_calls: [cancel_*]\ncases:\n  - story: a\n",  # a file default counts
    "goal_details: []\ntermination: [user_stop]\n",
    "goal_details: []\nskip: not written yet\n",
])
def test_refusals_endings_and_drafts_have_something_to_check(lint, text):
    assert lint(text) == []


def test_the_watsonx_quick_eval_file_is_refused(lint):
    text = '{"agent": "hr_agent", "goals": {}, "goal_details": [], "story": "s", "starting_sentence": "hi"}'
    assert [d.split(": error: ")[0] for d in lint(text, "q.json")] == ["q.json:1:36"]


def test_goal_keys_indented_under_args_are_warned_about(lint):
    text = """\
goal_details:
  - type: tool_call
    name: book
    tool_name: book_flight
    args:
      date: 2025-01-05
      arg_matching:
        date: fuzzy
      extra_args: forbid
      output: booked
"""
    assert lint(text) == [
        f"s.yaml:{line}:7: warning: '{key}' is indented under `args`, so it is an expected argument of the call; "
        f"if it is goal 'book's own `{key}`, move it out to the level of `args`"
        for line, key in ((7, "arg_matching"), (9, "extra_args"), (10, "output"))]


def test_arguments_named_like_goal_keys_with_ordinary_values_are_fine(lint):
    text = """\
goal_details:
  - type: tool_call
    name: register
    tool_name: register_tool
    description: registers a tool
    output: ok
    arg_matching: {tool_name: fuzzy}
    args: {tool_name: weather, description: Gets the weather, arg_matching: {a: 1}, extra_args: sometimes}
"""
    assert lint(text) == []


def test_watsonx_record_datasets_are_read(lint):  # lint: runs in a temporary folder
    text = json.dumps({
        "agent": "hr_agent", "dataset_name": None, "summary": "The user asked for time off.",
        "response_summary_version": "v1", "story": "s", "starting_sentence": "hi",
        "goals": {"lookup": ["say"]},
        "goal_details": [
            {"type": "tool_call", "name": "lookup", "tool_name": "get_id", "args": None, "keywords": None,
             "response": None, "description": None},
            {"type": "text", "name": "say", "response": "Your id is 7", "keywords": None, "args": None,
             "tool_name": None},
            {"type": "interaction", "name": "greet", "response": "Hello"},
            {"type": "assert_llm", "name": "polite", "description": "The agent stays polite"},
        ]})
    (case,), diagnostics, _ = _loaded(text, "r.json")
    assert diagnostics == []
    assert (case.summary, case.response_summary_version, case.dataset_name) == ("The user asked for time off.", "v1", None)
    lookup, say, _greet, _polite = case.goal_details
    assert (lookup.args, say.keywords) == ({}, [])
    assert [(g.type, g.name) for g in case.unscored_goals()] == [("interaction", "greet"), ("assert_llm", "polite")]


@pytest.mark.parametrize("value, ok", [(30, True), (0.5, True), (0, False), (-1, False)])
def test_timeout_s_is_a_positive_number_and_a_file_default(lint, value, ok):
    text = f"timeout_s: {value}\nforbid_extra_calls: true\ncases:\n  - story: a\n"
    problems = lint(text)
    assert (problems == []) is ok
    if ok:
        (case,), _, _ = load_file(Path("s.yaml"))
        assert case.timeout_s == value
