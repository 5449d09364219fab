"""Issue 15, end to end with the real CLI: negations fail without a judge and say why; every verdict the
offline stages reach says "decided offline" on the console and in report.json; a fuzzy argument's own
`threshold` applies to the judge's score (the judge over real HTTP, the fake OpenAI server)."""
from __future__ import annotations

import json
import re

import pytest

from runner.config.model import Config
from runner.score.cascade import CascadeSettings
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json

NEVER_MATCH = "(offline stages never match a statement with its negation)"


def project(tmp_path, *config: str) -> None:
    lines = ["cache_dir: cache", *(config or ["embeddings: {enabled: false}"])]
    (tmp_path / "evalrun.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def text_case(tmp_path, name: str, reference: str, answer: str) -> None:
    write(tmp_path / "suites" / f"{name}.yaml", f"""
        goal_details:
          - type: text
            name: answer
            response: "{reference}"
        transcript: {name}.json
        """)
    write_json(tmp_path / "suites" / f"{name}.json", [{"role": "user", "content": "Is my refund approved?"},
                                                     {"role": "assistant", "content": answer}])


def argument_case(tmp_path, expected: str, sent: str, rule: str = "fuzzy") -> None:
    write(tmp_path / "suites" / "status.yaml", f"""
        goal_details:
          - type: tool_call
            name: update
            tool_name: update_refund
            args: {{status: "{expected}"}}
            arg_matching: {{status: {rule}}}
        transcript: status.json
        """)
    write_json(tmp_path / "suites" / "status.json", tool_call_messages("update_refund", {"status": sent}))


def run(tmp_path, *args):
    return run_cli("suites", "--output-dir", "out", *args, cwd=tmp_path)


def report(tmp_path) -> dict:
    return json.loads((tmp_path / "out" / "report.json").read_text())


def goal(tmp_path, case_id: str) -> dict:
    [case] = [c for c in report(tmp_path)["cases"] if c["id"] == case_id]
    return case["goals"][0]


# ---------------------------------------------------------------- negations, no judge


def test_a_negated_answer_fails_without_a_judge_and_the_report_says_why(tmp_path):
    project(tmp_path)
    text_case(tmp_path, "refund", "Your refund of 49.90 EUR is approved.", "Your refund of 49.90 EUR is not approved.")
    result = run(tmp_path, "-v")
    assert result.returncode == 1, result.stdout + result.stderr
    reason = ("decided offline: one text negates the other: the expected text says 'Your refund of 49.90 EUR is "
              "approved', the answer says 'Your refund of 49.90 EUR is not approved' " + NEVER_MATCH)
    found = goal(tmp_path, "refund")
    assert found["text_decision"] == {"matched": False, "decided_by": "rapidfuzz", "score": None, "reason": reason,
                                      "notes": [], "judge_failure": None}
    assert found["explanation"] == ("not said: nothing in the assistant's messages matches the reference answer; "
                                    f"the closest is message 2, {reason}")
    assert f"✗ answer: {found['explanation']}" in result.stdout  # it opens with "not said": the status once


def test_a_negated_fuzzy_argument_fails_without_a_judge(tmp_path):
    project(tmp_path)
    argument_case(tmp_path, "Refund approved", "Refund NOT approved")
    result = run(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    [verdict] = goal(tmp_path, "status")["attempts"][0]["arguments"]
    reason = ("decided offline: one text negates the other: the expected text says 'Refund approved', the answer "
              "says 'Refund NOT approved' " + NEVER_MATCH)
    assert (verdict["matched"], verdict["decided_by"], verdict["score"], verdict["reason"]) == \
        (False, "rapidfuzz", None, reason)
    line = f"`status` (fuzzy): expected 'Refund approved', got 'Refund NOT approved' — {reason}"
    assert line in goal(tmp_path, "status")["explanation"]
    assert line in result.stdout


def test_a_verdict_passed_offline_says_so_on_the_console_and_in_the_report(tmp_path):
    project(tmp_path)
    text_case(tmp_path, "pass", "Your refund has been approved.", "Your refund has now been approved.")
    argument_case(tmp_path, "refund approved", "refund is approved")
    result = run(tmp_path, "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    text = goal(tmp_path, "pass")
    score = text["text_decision"]["score"]
    assert text["text_decision"]["decided_by"] == "rapidfuzz" and score >= 0.74
    said = f"achieved at message 2: said (decided offline: rapidfuzz {score:.2f} >= threshold 0.74)"
    assert text["explanation"] == said
    assert f"✓ answer: {said}" in result.stdout
    [verdict] = goal(tmp_path, "status")["attempts"][0]["arguments"]
    called = (f"achieved at message 1: called update_refund with matching arguments (`status` decided offline: "
              f"rapidfuzz {verdict['score']:.2f} >= threshold 0.74)")
    assert goal(tmp_path, "status")["explanation"] == called
    assert f"✓ update: {called}" in result.stdout


@pytest.mark.slow
def test_the_embedding_stage_says_decided_offline_with_its_score(tmp_path):
    project(tmp_path, "embeddings: {enabled: true}")
    text_case(tmp_path, "pass", "Your refund has been approved.", "We have approved your refund.")
    result = run(tmp_path, "-v")
    decision = goal(tmp_path, "pass")["text_decision"]
    assert decision["decided_by"] == "embedding", result.stdout + result.stderr
    assert re.fullmatch(r"decided offline: embeddings 0\.\d\d (>=|<) threshold 0\.74", decision["reason"])
    assert decision["reason"] in result.stdout


# ---------------------------------------------------------------- an argument's threshold and the judge


def judge_says(match: bool, score: float):
    def reply(request):
        token = re.search(r"BEGIN-(V[0-9A-F]{20})", request["messages"][-1]["content"]).group(1)
        return json.dumps({"reason": "close enough", "match": match, "score": score, "verdict_id": token})
    return reply


@pytest.mark.parametrize("rule, exit_code, matched, reason", [
    ("{mode: fuzzy, threshold: 0.95}", 1, False,
     "the judge said match with score 0.50 < threshold 0.95: close enough"),
    ("fuzzy", 0, True, "close enough"),
    ("{mode: fuzzy, threshold: 0.4}", 0, True, "close enough"),
])
def test_an_arguments_own_threshold_applies_to_the_judges_score(tmp_path, rule, exit_code, matched, reason):
    with FakeOpenAI(default=judge_says(True, 0.5)) as fake:
        project(tmp_path, f"judge: {{model: openai/fake-judge, api_base: '{fake.base_url}', max_retries: 0}}")
        argument_case(tmp_path, "the customer changed their mind", "changed my mind", rule)
        result = run(tmp_path)
        assert len(fake.requests) == 1
    assert result.returncode == exit_code, result.stdout + result.stderr
    [verdict] = goal(tmp_path, "status")["attempts"][0]["arguments"]
    assert (verdict["matched"], verdict["decided_by"], verdict["score"], verdict["reason"]) == \
        (matched, "llm", 0.5, reason)


def test_the_configured_similarity_threshold_does_not_apply_to_the_judge(tmp_path):
    with FakeOpenAI(default=judge_says(True, 0.5)) as fake:
        project(tmp_path, "similarity_threshold: 0.99", f"judge: {{model: openai/fake-judge, api_base: '{fake.base_url}'}}")
        argument_case(tmp_path, "the customer changed their mind", "changed my mind")
        result = run(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- one default, everywhere


def test_the_default_threshold_is_the_same_in_the_config_the_cascade_and_evalrun_init(tmp_path):
    from runner.score.cascade import DEFAULT_SIMILARITY_THRESHOLD

    assert Config().similarity_threshold == CascadeSettings().similarity_threshold == DEFAULT_SIMILARITY_THRESHOLD
    done = run_cli("init", str(tmp_path / "new"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    written = (tmp_path / "new" / "evalrun.yaml").read_text()
    assert re.search(rf"^similarity_threshold: {DEFAULT_SIMILARITY_THRESHOLD}\b", written, re.M), written
    schema = json.loads((tmp_path / "new" / "schemas" / "config.schema.json").read_text())
    assert schema["properties"]["similarity_threshold"]["default"] == DEFAULT_SIMILARITY_THRESHOLD
