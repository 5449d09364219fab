"""The first point where two conversations part (runner.view.divergence): constructed pairs, and two live runs of
the bundled bank agent with a change between them, compared as `evalrun view` compares them."""
from __future__ import annotations

import json

import pytest

from runner.view.divergence import first_divergence, steps
from tests.helpers.cli_helpers import tool_call_messages

USER = {"role": "user", "content": "Please send 50 from A-100 to B-200."}


def call(name: str, args: dict, call_id: str = "c1", result: str = "ok") -> list[dict]:
    return tool_call_messages(name, args, result=result, call_id=call_id)


def answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


BASE = [USER, *call("transfer_funds", {"from": "A-100", "to": "B-200", "amount": 50}), answer("Sent 50.")]


def test_identical_conversations_do_not_part():
    assert first_divergence(BASE, json.loads(json.dumps(BASE))) is None


def test_call_ids_and_argument_spelling_do_not_count():
    """A run makes new tool-call ids; arguments are compared as parsed JSON (key order, spacing, 50 and 50.0)."""
    other = [USER, *call("transfer_funds", {"amount": 50.0, "to": "B-200", "from": "A-100"}, call_id="zz9"),
             answer("Sent 50.")]
    other[1]["tool_calls"][0]["function"]["arguments"] = '{"amount": 50.0,   "to": "B-200", "from": "A-100"}'
    assert first_divergence(BASE, other) is None


def test_a_different_tool():
    other = [USER, *call("wire_money", {"from": "A-100", "to": "B-200", "amount": 50}), answer("Sent 50.")]
    found = first_divergence(BASE, other)
    assert (found["step"], found["kind"], found["what"]) == (1, "tool", "a different tool: transfer_funds / wire_money")
    assert (found["a"]["tool"], found["b"]["tool"], found["a"]["message"], found["b"]["message"]) == \
        ("transfer_funds", "wire_money", 2, 2)


def test_a_different_argument_names_its_path():
    other = [USER, *call("transfer_funds", {"from": "A-100", "to": "B-200", "amount": 51}), answer("Sent 50.")]
    found = first_divergence(BASE, other)
    assert (found["step"], found["kind"], found["arguments"]) == (1, "arguments", ["amount"])
    assert found["what"] == "transfer_funds called with different arguments: amount"
    assert (found["a"]["arguments"]["amount"], found["b"]["arguments"]["amount"]) == (50, 51)


def test_nested_and_missing_arguments():
    a = [USER, *call("book", {"trip": {"legs": [{"to": "NYC"}, {"to": "SFO"}]}, "seat": "A1"})]
    b = [USER, *call("book", {"trip": {"legs": [{"to": "NYC"}, {"to": "LAX"}]}, "meal": "veg"})]
    assert first_divergence(a, b)["arguments"] == ["trip.legs[1].to", "seat", "meal"]


def test_a_different_answer():
    other = [*BASE[:-1], answer("I sent 50 dollars.")]
    found = first_divergence(BASE, other)
    assert (found["step"], found["kind"], found["what"]) == (3, "text", "a different assistant message (message 4 / 4)")
    assert (found["a"]["text"], found["b"]["text"]) == ("Sent 50.", "I sent 50 dollars.")


def test_a_different_tool_result():
    other = [USER, *call("transfer_funds", {"from": "A-100", "to": "B-200", "amount": 50}, result="insufficient"),
             answer("Sent 50.")]
    found = first_divergence(BASE, other)
    assert (found["step"], found["kind"], found["a"]["tool"], found["b"]["text"]) == \
        (2, "text", "transfer_funds", "insufficient")


@pytest.mark.parametrize("longer_side", ["b", "a"])
def test_an_extra_turn(longer_side):
    longer = [*BASE, {"role": "user", "content": "And 10 more?"}, answer("Done.")]
    a, b = (BASE, longer) if longer_side == "b" else (longer, BASE)
    found = first_divergence(a, b)
    assert found["step"] == 4
    if longer_side == "b":
        assert (found["kind"], found["a"], found["b"]["text"]) == ("extra", None, "And 10 more?")
        assert found["what"] == "only the second conversation goes on: a user message (message 5)"
    else:
        assert (found["kind"], found["b"], found["a"]["role"]) == ("missing", None, "user")


def test_a_call_where_the_other_answered():
    other = [USER, answer("Which account?")]
    found = first_divergence(BASE, other)
    assert (found["step"], found["kind"]) == (1, "role")
    assert found["what"] == "assistant calls transfer_funds (message 2) / an assistant message (message 2)"


def test_hostile_shapes_are_steps_not_crashes():
    odd = [None, "text", {"role": 5, "content": [{"text": "a"}, {"image": 1}], "tool_calls": [None, {"function": 3}]}]
    assert [s["kind"] for s in steps(odd)] == ["text", "text", "text", "tool_call", "tool_call"]
    assert first_divergence(odd, odd) is None
    assert first_divergence("not a list", BASE)["kind"] == "extra"


def test_two_live_runs_of_the_bank_agent_with_a_change(tmp_path):
    """Real runs (the bundled bank agent, then the same agent sending one more than asked): the view's comparison
    names both regressed cases, and each case's first divergence is its first transfer_funds call's amount."""
    from runner.view.api import ViewApi
    from tests.helpers.view_runs import NEW, OLD, make_project

    api = ViewApi(make_project(tmp_path))
    compared = api.compare(OLD, NEW)
    assert [f["case"] for f in compared["newly_failing"]] == ["bank-one-transfer", "bank-two-turns"]
    assert compared["gate"]["holds"] is False
    firsts = {f["case"]: f["divergence"] for f in compared["newly_failing"]}
    one = firsts["bank-one-transfer"]
    assert (one["step"], one["kind"], one["arguments"]) == (1, "arguments", ["amount"])
    assert (one["a"]["arguments"], one["b"]["arguments"]) == (
        {"from_account": "A-100", "to_account": "B-200", "amount": 50.0},
        {"from_account": "A-100", "to_account": "B-200", "amount": 51.0})
    two = firsts["bank-two-turns"]
    assert (two["kind"], two["a"]["arguments"]["amount"], two["b"]["arguments"]["amount"]) == ("arguments", 80.0, 81.0)
    assert api.compare(OLD, OLD)["newly_failing"] == [] and api.compare(OLD, OLD)["gate"]["holds"] is True


def test_flaky_is_back_and_forth_not_one_change():
    from runner.view.history import flaky

    def runs(*statuses):  # newest first, as the case page lists them
        return [{"run": f"r{n}", "status": s} for n, s in enumerate(reversed(statuses))][::-1]

    assert flaky(runs("passed", "passed", "failed")) is False  # regressed once
    assert flaky(runs("failed", "passed")) is False  # fixed once
    assert flaky(runs("passed", "failed", "passed")) is True
    assert flaky(runs("passed", "skipped", "passed")) is False
    assert flaky([{"run": "r1", "status": "passed"}, {"run": "r1", "status": "failed"}]) is True  # repeats disagree
