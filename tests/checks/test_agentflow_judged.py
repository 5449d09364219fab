"""Agentflow's judged criteria (agentflow_judge) through evalrun's judge, over real HTTP against the fake
OpenAI-compatible server: the mean of num_samples scores against the threshold, what each criterion shows the
judge, and none of Agentflow's silent fallbacks (a judge that cannot answer is unscored, not 0.5; no answer is
not 1.0)."""
from __future__ import annotations

import json

import pytest

from runner.checks.run import run_checks
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.helpers.checks_judged import judge_cascade, token_of

TURNS = [{"user": "Weather in Paris?", "response": "Paris is sunny."}, {"user": "And tomorrow?"}]
CALL = [{"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny, 21 C"}]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def judged(spec, cascade, answer="Sunny in Paris today.", turns=TURNS):
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "turns": turns,
                                "checks": [{"type": "agentflow_judge", **spec}]})
    messages = [{"role": "user", "content": "Weather in Paris?"}, *CALL, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "And tomorrow?"}]
    if answer:
        messages.append({"role": "assistant", "content": answer})
    [result] = run_checks(case, build_trajectory(messages), cascade)
    return result


def data_of(request) -> dict:
    token = token_of(request)
    prompt = request["messages"][0]["content"]
    return json.loads(prompt.split(f"BEGIN-{token}\n", 1)[1].split(f"\nEND-{token}", 1)[0])


def scores(*values):
    replies = iter(values)
    return lambda request: json.dumps({"reason": "r", "score": next(replies), "verdict_id": token_of(request)})


def test_the_score_is_the_mean_of_the_samples_against_the_threshold(fake):
    fake.default = scores(0.9, 0.6, 0.6)
    result = judged({"criterion": "llm_judge", "samples": 3, "threshold": 0.7}, judge_cascade(fake, temperature=0.7))
    assert (result.status, result.score) == ("passed", (0.9 + 0.6 + 0.6) / 3)
    assert result.explanation.startswith("Agentflow llm_judge, mean of 3 sample(s): mean of 3 verdicts 0.7")
    assert len(fake.requests) == 3
    # the first user message as the question, the last turn's answer, the last expected answer
    assert data_of(fake.requests[0]) == {"question": "Weather in Paris?", "answer": "Sunny in Paris today.",
                                         "expected": "Paris is sunny."}


def test_each_criterion_shows_the_judge_what_agentflows_does(fake):
    fake.default = scores(*[1.0] * 5)
    cascade = judge_cascade(fake)
    judged({"criterion": "hallucination", "context": "Forecast: sunny."}, cascade)
    assert data_of(fake.requests[-1])["context"] == "Tool get_weather returned: sunny, 21 C\n\nReference context: " \
                                                    "Forecast: sunny."
    judged({"criterion": "factual_accuracy", "reference_facts": "unused: an expected answer exists"}, cascade)
    assert data_of(fake.requests[-1])["reference"] == "Paris is sunny."
    judged({"criterion": "rubric_based", "rubrics": [{"rubric_id": "short", "content": "One sentence."}]}, cascade)
    assert data_of(fake.requests[-1])["rubrics"] == [{"rubric_id": "short", "content": "One sentence."}]
    judged({"criterion": "simulation_goals"}, cascade)
    assert data_of(fake.requests[-1]) == {"conversation": "Sunny in Paris today.", "goals": "Paris is sunny."}


def test_a_judge_that_cannot_answer_leaves_it_unscored_never_half(fake):
    fake.default = lambda request: Reply(status=500, content="down")
    result = judged({"criterion": "response_match"}, judge_cascade(fake))
    assert result.status == "unscored" and result.explanation.startswith("unscored: the judge gave no usable answer")


def test_no_judge_configured_is_unscored(fake):
    result = judged({"criterion": "safety"}, None)
    assert result.status == "unscored" and "no judge model is configured" in result.explanation


def test_nothing_to_compare_is_skipped_and_no_answer_fails(fake):
    fake.default = scores(1.0)
    cascade = judge_cascade(fake)
    skipped = judged({"criterion": "llm_judge"}, cascade, turns=[{"user": "Weather in Paris?"}, {"user": "And tomorrow?"}])
    assert skipped.status == "skipped" and "no expected answer to compare with (Agentflow scores it 1.0" in \
        skipped.explanation
    assert judged({"criterion": "rubric_based"}, cascade).status == "skipped"
    silent = judged({"criterion": "llm_judge"}, cascade, answer="")
    assert (silent.status, silent.score) == ("failed", 0.0)
    assert "the last turn gave no answer (Agentflow scores an empty answer 1.0" in silent.explanation
    assert fake.requests == []
