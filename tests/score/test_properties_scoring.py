"""Property-based: whatever a recorded conversation holds, reading and scoring it either reports a
TranscriptError (the case becomes `error`) or produces a result, never another exception."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from runner.score.cascade import Cascade, CascadeSettings
from runner.score.case import score_trajectory
from runner.suite.models import Case
from runner.transcripts.read import TranscriptError, build_trajectory

CASCADE = Cascade(CascadeSettings(use_embeddings=False))
CASE = Case.model_validate({
    "id": "p", "source": {"path": "p.yaml"}, "forbid_extra_calls": ["cancel_*"], "failed_calls": "ignore",
    "goals": {"look": ["say"], "say": ["book"]},
    "goal_details": [
        {"type": "tool_call", "name": "look", "tool_name": "lookup", "args": {"id": "A1", "n": 2}},
        {"type": "tool_call", "name": "book", "tool_name": "book", "args": {"who": "ann", "when": "2025-01-05"},
         "arg_matching": {"when": "fuzzy", "who": {"one_of": ["ann", "anne"]}}},
        {"type": "text", "name": "say", "keywords": ["a1"], "response": "found A1"},
    ]})

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
tool_names = st.sampled_from(["lookup", "book", "cancel_it", "other"])
arguments = (st.dictionaries(st.sampled_from(["id", "n", "who", "when", "x"]), json_values, max_size=4)
             .map(json.dumps) | st.text(max_size=15) | json_values)
call = st.fixed_dictionaries({"id": st.none() | st.sampled_from(["c1", "c2", "c3"]), "type": st.just("function"),
                              "function": st.fixed_dictionaries({"name": tool_names, "arguments": arguments})})
message = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": st.text(max_size=20)}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none() | st.text(max_size=30),
                           "tool_calls": st.lists(call, max_size=3)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.none() | st.sampled_from(["c1", "c2", "c9"]),
                           "content": st.text(max_size=20) | json_values}),
    st.dictionaries(st.sampled_from(["role", "content", "type", "id", "error", "name"]), json_values, max_size=4),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message, max_size=12))
def test_any_conversation_is_scored_or_rejected_with_a_reason(messages):
    try:
        trajectory = build_trajectory(messages)
    except TranscriptError as error:
        rejected_with_a_reason = bool(str(error))
        assert rejected_with_a_reason
        return
    scored = score_trajectory(CASE, trajectory, CASCADE)
    assert len(scored.goals) == 3
    assert scored.passed == (not scored.failures)
    for result in scored.goals:
        assert result.explanation
    m = scored.metrics
    assert 0.0 <= m.journey_completion <= 1.0
    for value in (m.tool_call_precision, m.tool_call_recall, m.tool_parameter_f1, m.text_match):
        assert value is None or 0.0 <= value <= 1.0


# ---------------------------------------------------------------- an oracle: the expected conversation passes

@st.composite
def cases_with_their_conversation(draw):
    """A random case (tool goals on a few shared tools, keyword goals, a random order graph) and the
    conversation made of exactly its expected events, in a random order that respects the graph."""
    n = draw(st.integers(1, 6))
    goals = []
    for i in range(n):
        if draw(st.booleans()):
            goals.append({"type": "tool_call", "name": f"g{i}", "tool_name": draw(st.sampled_from(["a", "b", "c"])),
                          "args": {"k": draw(st.integers(0, 2))}})
        else:
            goals.append({"type": "text", "name": f"g{i}", "keywords": [f"word{i}x"]})
    order = draw(st.permutations(range(n)))
    rank = {goal: position for position, goal in enumerate(order)}
    pairs = [(i, j) for i in range(n) for j in range(n) if rank[i] < rank[j]]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=8)) if pairs else []
    graph: dict[str, list[str]] = {}
    for i, j in edges:
        graph.setdefault(f"g{i}", []).append(f"g{j}")
    case = Case.model_validate({"id": "o", "source": {"path": "o.yaml"}, "goals": graph, "goal_details": goals})
    return case, [goals[i] for i in order]


def conversation(events: list[dict]) -> list[dict]:
    messages = [{"role": "user", "content": "please"}]
    for n, event in enumerate(events):
        if event["type"] == "tool_call":
            messages.append({"role": "assistant", "content": None, "tool_calls": [{
                "id": f"c{n}", "type": "function",
                "function": {"name": event["tool_name"], "arguments": json.dumps(event["args"])}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
        else:
            messages.append({"role": "assistant", "content": f"Done: {event['keywords'][0]}."})
    return messages


def score(case: Case, events: list[dict]):
    return score_trajectory(case, build_trajectory(conversation(events)), CASCADE)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases_with_their_conversation())
def test_exactly_the_expected_events_in_a_graph_respecting_order_pass(drawn):
    case, events = drawn
    scored = score(case, events)
    assert scored.passed, scored.failures
    m = scored.metrics
    has_tools = bool(case.tool_goals())
    assert (m.journey_completion, m.tool_call_recall, m.tool_call_precision) == (
        1.0, 1.0 if has_tools else None, 1.0 if has_tools else None)
    assert m.text_match == (1.0 if case.text_goals() else None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases_with_their_conversation(), st.data())
def test_removing_one_expected_event_loses_exactly_its_goal(drawn, data):
    case, events = drawn
    index = data.draw(st.integers(0, len(events) - 1))
    scored = score(case, events[:index] + events[index + 1:])
    n = len(case.goal_details)
    assert not scored.passed
    assert scored.metrics.journey_completion == (n - 1) / n
    (missed,) = [g for g in scored.goals if not g.achieved]
    removed = {k: v for k, v in events[index].items() if k != "name"}
    same = [e["name"] for e in events if {k: v for k, v in e.items() if k != "name"} == removed]
    assert missed.name in same  # the removed event's goal, or one identical to it


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases_with_their_conversation(), st.data())
def test_removing_a_call_from_any_conversation_never_raises_completion(drawn, data):
    case, events = drawn
    noise = data.draw(st.lists(st.fixed_dictionaries({
        "type": st.just("tool_call"), "name": st.just("noise"), "tool_name": st.sampled_from(["a", "b", "c", "d"]),
        "args": st.fixed_dictionaries({"k": st.integers(0, 2)})}), max_size=4))
    mixed = data.draw(st.permutations(events + noise))
    before = score(case, mixed).metrics.journey_completion
    calls = [i for i, e in enumerate(mixed) if e["type"] == "tool_call"]
    if not calls:
        return
    index = data.draw(st.sampled_from(calls))
    after = score(case, mixed[:index] + mixed[index + 1:]).metrics.journey_completion
    assert after <= before
