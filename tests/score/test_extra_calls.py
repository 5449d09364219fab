"""Calls no goal asked for: a passing case names them on its line and in every report, evalrun.yaml can
forbid them for a whole project (a file's or case's own value wins), and `evalrun init` shows how.
Also the tests that planted bugs once slipped through: several forbid patterns, and majority ties."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json
from tests.helpers.html_page import page_data
from tests.helpers.score_case import Convo, make_case, tool

CONVERSATION = [
    {"role": "user", "content": "Where is my order A-1042?"},
    *tool_call_messages("get_order_status", {"order_id": "A-1042"}, '{"status": "shipped"}', "c1"),
    *tool_call_messages("cancel_order", {"order_id": "A-1042"}, "cancelled", "c2"),
    *tool_call_messages("issue_refund", {"order_id": "A-1042"}, "refunded", "c3"),
    {"role": "assistant", "content": "It has shipped."},
]
SUITE = """
    id: order-status
    starting_sentence: Where is my order A-1042?
    transcript: t.json
    goal_details:
      - {type: tool_call, name: lookup, tool_name: get_order_status, args: {order_id: A-1042}}
    """
SAID = "2 extra calls: cancel_order, issue_refund"


def project(root, config="", suite=SUITE):
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n" + config)
    write_json(root / "suites" / "t.json", CONVERSATION)
    write(root / "suites" / "case.yaml", suite)


def test_a_passing_case_names_its_extra_calls_on_its_line_and_in_every_report(tmp_path):
    project(tmp_path)
    done = run_cli("suites", "--output-dir", "out", "--format", "junit", "--format", "md", "--format", "html",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PASS  order-status [replayed]  completion 1.00, precision 0.33, recall 1.00; {SAID}" in done.stdout.splitlines()
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert (case["status"], case["extra_calls"]) == ("passed", ["cancel_order", "issue_refund"])
    system_out = next(ET.parse(tmp_path / "out" / "junit.xml").getroot().iter("system-out")).text
    assert SAID in system_out.splitlines()
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert ("### Passed, with calls no goal asked for\n\n| case | extra calls |\n|---|---|\n| order-status | "
            "2 extra calls: cancel\\_order, issue\\_refund |") in summary  # markdown-escaped
    page = (tmp_path / "out" / "report.html").read_text()
    data = page_data(page)  # the page's embedded cases, decoded as its script does
    assert data["index"][0]["extra_calls"] == data["cases"][0]["extra_calls"] == ["cancel_order", "issue_refund"]
    assert "function extraCalls(c)" in page


def test_extra_calls_text_counts_repeats():
    from runner.report.saved import extra_calls_text

    assert extra_calls_text([]) == ""
    assert extra_calls_text(["get_order"]) == "1 extra call: get_order"
    assert extra_calls_text(["get_order", "cancel_order", "get_order"]) == "3 extra calls: get_order ×2, cancel_order"


def test_extra_calls_are_the_calls_that_achieve_no_goal():
    case = make_case(goal_details=[tool("get_id", user="n")])
    scored = Convo().call("get_id", user="x").call("search", q="1").call("get_id", user="n").call("get_id", user="n") \
        .score(case)
    assert scored.passed
    assert scored.extra_calls == ["get_id", "search", "get_id"]  # wrong arguments, another tool, a repeat
    ignored = make_case(failed_calls="ignore", goal_details=[tool("get_id", user="n")])
    assert Convo().call("search", error=True, q="1").call("get_id", user="n").score(ignored).extra_calls == []
    unreadable = Convo().call("get_id", raw="{not json").call("get_id", user="n").score(case)
    assert unreadable.passed and unreadable.extra_calls == ["get_id"]  # arguments that cannot be read ask for nothing
    failing = Convo().call("get_id", user="x").call("get_id", raw="{not json").call("search", q="1").score(case)
    assert not failing.passed
    assert failing.extra_calls == ["search"]  # the two tries at get_id are its attempts, explained by its failure


def test_the_project_forbids_extra_calls_and_a_files_own_value_wins(tmp_path):
    project(tmp_path, "forbid_extra_calls: [cancel_*, issue_refund]\n")
    done = run_cli("suites", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    case = json.loads((tmp_path / "out" / "report.json").read_text())["cases"][0]
    assert case["failures"] == ['forbidden call: cancel_order({"order_id": "A-1042"}) at message 4 achieves no goal',
                                'forbidden call: issue_refund({"order_id": "A-1042"}) at message 6 achieves no goal']
    project(tmp_path, "forbid_extra_calls: true\n", SUITE.replace("goal_details:", "forbid_extra_calls: false\n"
                                                                    "    goal_details:"))  # the case's own wins
    assert run_cli("suites", "--output-dir", "out2", cwd=tmp_path).returncode == 0
    project(tmp_path, "forbid_extra_calls: false\n", """
        forbid_extra_calls: [cancel_*]
        cases:
          - id: order-status
            starting_sentence: Where is my order A-1042?
            transcript: t.json
            goal_details:
              - {type: tool_call, name: lookup, tool_name: get_order_status, args: {order_id: A-1042}}
        """)  # the file's default wins over the project's
    done = run_cli("suites", "--output-dir", "out3", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  order-status" in done.stdout


def test_init_shows_forbid_extra_calls_and_uncommented_it_works(tmp_path):
    done = run_cli("init", "proj", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    config = (tmp_path / "proj" / "evalrun.yaml").read_text()
    assert "# forbid_extra_calls: [cancel_*, issue_refund]\n" in config
    assert "A file's or case's own\n# `forbid_extra_calls` wins." in config
    (tmp_path / "proj" / "evalrun.yaml").write_text(config.replace("# forbid_extra_calls: [cancel_*, issue_refund]",
                                                                   "forbid_extra_calls: true"))
    assert run_cli("validate", "proj/suites", cwd=tmp_path).returncode == 0
    assert run_cli("proj/suites", "--output-dir", "out", cwd=tmp_path).returncode == 0  # the example makes no extra call


# ------------------------------------------------------------------ planted bugs that once went unnoticed

def test_a_call_matching_only_the_second_forbidden_pattern_fails_the_case():
    case = make_case(forbid_extra_calls=["cancel_*", "issue_refund", "delete_*"], goal_details=[])
    for name in ("issue_refund", "delete_account", "cancel_order"):
        scored = Convo().call(name, id="A").score(case)
        assert not scored.passed and [c.role for c in scored.calls] == ["forbidden"], name
    assert Convo().call("get_order", id="A").score(case).passed


@pytest.mark.parametrize("statuses, status", [
    (["passed", "failed"], "failed"),  # 1 of 2: a tie is not a majority
    (["passed", "passed", "failed", "failed"], "failed"),  # 2 of 4
    (["failed", "passed", "passed", "passed"], "passed"),  # 3 of 4
    (["passed", "passed"], "passed"),
    (["passed", "error"], "error"),
    (["passed", "skipped", "failed"], "failed"),  # skipped runs do not count: 1 of 2
])
def test_majority_needs_more_than_half_of_an_even_number_of_runs(statuses, status):
    from runner.results.summary import repeated_status

    assert repeated_status(statuses, "majority") == status
