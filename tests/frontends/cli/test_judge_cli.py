"""The judge and the offline stages end to end: the real CLI (in this process: run_cli), the fake OpenAI server."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.fakes.llm import token_of
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.helpers.cli_helpers import cli_env, run_cli, tool_call_messages, write, write_json

CANARY = "sk-canary-5e1f0c7d9a"


def suite(tmp_path, judge: str = "", embeddings: bool = False):
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: {str(embeddings).lower()}}}
        cache_dir: cache
        {judge}
        """)
    write(tmp_path / "suites" / "cancel.yaml", """
        goal_details:
          - type: tool_call
            name: cancel
            tool_name: cancel_booking
            args: {status: is cancelled}
            arg_matching: {status: fuzzy}
        transcript: t.json
        """)
    write_json(tmp_path / "suites" / "t.json", tool_call_messages("cancel_booking", {"status": "is not cancelled"}))


def judge_config(base_url: str, **extra: str) -> str:
    lines = ["judge:", "  model: openai/fake-judge", f"  api_base: {base_url}", "  max_retries: 0"]
    lines += [f"  {key}: {value}" for key, value in extra.items()]
    return "\n        ".join(lines)


def run(tmp_path, *args, **env):
    return run_cli("suites", "--output-dir", "out", *args, cwd=tmp_path, env=env)


def verdict_of(tmp_path) -> dict:
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    return report["cases"][0]["goals"][0]["attempts"][0]["arguments"][0]


def test_a_verdict_reached_without_the_failed_judge_says_so_in_the_report(tmp_path):
    with FakeOpenAI() as fake:
        fake.script(Reply(status=500, content="database on fire"))
        suite(tmp_path, judge_config(fake.base_url))
        result = run(tmp_path)
        failure = f"HTTP 500 from {fake.base_url}: database on fire"
    verdict = verdict_of(tmp_path)
    # The offline stages stood in for the judge (and, seeing the negation, did not match): the report says so
    assert (verdict["decided_by"], verdict["matched"], verdict["judge_failure"]) == ("rapidfuzz", False, failure)
    assert verdict["reason"].startswith(f"decided by rapidfuzz because the judge failed: {failure}; "
                                        "decided offline: one text negates the other")
    assert f"(first reason: judge failed: {failure})" in result.stdout


@pytest.mark.parametrize("status", [401, 500])
def test_an_echoed_api_key_appears_in_no_output(tmp_path, status):
    with FakeOpenAI() as fake:
        fake.script(Reply(status=status, content="invalid key", echo_auth=True))
        suite(tmp_path, judge_config(fake.base_url, api_key_env="EVALRUN_TEST_JUDGE_KEY"))
        result = run(tmp_path, EVALRUN_TEST_JUDGE_KEY=CANARY)
        assert fake.request_headers[0]["authorization"] == f"Bearer {CANARY}"  # sent, and echoed back
    outputs = result.stdout + result.stderr + "".join(p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert CANARY not in outputs
    assert "[redacted]" in verdict_of(tmp_path)["judge_failure"]


def test_the_judges_verdict_is_cached_for_the_next_run(tmp_path):
    with FakeOpenAI() as fake:
        fake.default = lambda request: json.dumps({"reason": "the negation flips it", "match": False, "score": 0.1,
                                                   "verdict_id": token_of(request)})
        suite(tmp_path, judge_config(fake.base_url))
        first = run(tmp_path)
        second = run(tmp_path)
        assert len(fake.requests) == 1, first.stdout + first.stderr
    assert first.returncode == second.returncode == 1
    verdict = verdict_of(tmp_path)
    assert (verdict["decided_by"], verdict["matched"], verdict["reason"], verdict["judge_failure"]) == \
        ("llm", False, "the negation flips it", None)


@pytest.mark.slow  # the first run loads the embedding model
@pytest.mark.process  # the rerun's imports (-X importtime): only a fresh interpreter has none loaded yet
def test_an_unchanged_rerun_loads_no_model(tmp_path):
    write(tmp_path / "evalrun.yaml", "cache_dir: cache\n")
    write(tmp_path / "suites" / "answer.yaml", """
        goal_details:
          - type: text
            name: schedule
            response: "Your timeoff schedule for 20250101 to 20250303 is: 20250105"
        transcript: t.json
        """)
    write_json(tmp_path / "suites" / "t.json", [
        {"role": "user", "content": "When am I off?"},
        {"role": "assistant", "content": "Your time off between January 1 and March 3, 2025 is on January 5, 2025"}])
    first = run(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    second = subprocess.run([sys.executable, "-X", "importtime", "-m", "runner", "suites", "--output-dir", "out"],
                            cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout
    imported = {line.split("|")[-1].strip() for line in second.stderr.splitlines() if line.startswith("import time:")}
    assert "torch" not in imported and "sentence_transformers" not in imported and "litellm" not in imported
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    decision = report["cases"][0]["goals"][0]["text_decision"]
    assert (decision["decided_by"], decision["matched"]) == ("embedding", True)
