"""The LLM client over real HTTP against the fake OpenAI server, on both paths (the fast OpenAI-compatible
client and litellm: the `fake` fixture runs each test once per path): retries, faults, the breaker, the
cache, the limit, call records. Verdicts and replies: test_llm_replies.py; the paths themselves:
test_llm_paths.py.

Each test builds its own LLMRuntime, so limits, breakers and totals never leak between tests."""
from __future__ import annotations

import asyncio
import email.utils
import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from runner.llm.calls import CallSummary, LLMCall, record_calls, summarize
from runner.llm.client import LLMClient
from runner.llm.errors import LLMError
from runner.llm.judge import LLMJudge
from runner.llm.limits import Limiter
from runner.llm.prompts import PromptLibrary
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import BACKOFF_BASE_S, JudgeSettings, ModelSettings
from tests.fakes.llm import USER, cached_answers, client_for, token_of, verdict
from tests.fakes.openai_server import Reply, tool_call

REPO = Path(__file__).resolve().parents[2]


# ================================================================ retries and faults


def test_500_then_success_is_retried(fake):
    fake.script(Reply(status=500), "fine")
    assert client_for(fake).complete(USER).content == "fine"
    assert len(fake.requests) == 2


def test_429_retry_after_seconds_is_honoured(fake):
    # 0.5 s, not a whole second: the seconds form is read as a number either way, and the wait is what counts
    fake.script(Reply(status=429, content="slow down", headers={"Retry-After": "0.5"}), "fine")
    started = time.monotonic()
    completion = client_for(fake).complete(USER)
    waited = time.monotonic() - started
    assert completion.content == "fine" and completion.call.attempts == 2
    gap = fake.request_times[1] - fake.request_times[0]
    assert gap >= 0.5, f"the retry came {gap:.3f} s after the 429 that asked for 0.5 s"  # (the back-off is 0.01 s)
    assert waited < 10  # the upper bound only catches a runaway backoff


def test_429_retry_after_http_date_is_honoured(fake):
    # an HTTP date has whole seconds: the next whole second at least 0.3 s away (a 0.3-1.3 s wait)
    target = math.ceil(time.time() + 0.3)
    fake.script(Reply(status=429, headers={"Retry-After": email.utils.formatdate(target, usegmt=True)}), "fine")
    started = time.monotonic()
    assert client_for(fake).complete(USER).content == "fine"
    retried_at = fake.request_times[1]
    assert retried_at >= target - 0.01, f"the retry came {target - retried_at:.3f} s before the date the server named"
    assert time.monotonic() - started < 10


def test_the_back_off_between_retries_is_waited(fake, monkeypatch):
    """With no Retry-After the client backs off: the real schedule here (the fixture shortens it for the rest),
    whose first wait is BACKOFF_BASE_S with jitter down to half of it."""
    monkeypatch.setattr("runner.llm.retries.BACKOFF_BASE_S", BACKOFF_BASE_S)
    fake.script(Reply(status=503), "fine")
    assert client_for(fake).complete(USER).content == "fine"
    gap = fake.request_times[1] - fake.request_times[0]
    assert gap >= BACKOFF_BASE_S / 2 - 0.01, f"the retry came {gap:.3f} s after the 503: no back-off"


def test_a_back_off_beyond_the_budget_gives_up_at_once(fake, monkeypatch):
    monkeypatch.setattr("runner.llm.retries.BACKOFF_BASE_S", BACKOFF_BASE_S)
    fake.script(Reply(status=500, content="down"), "never sent")
    with pytest.raises(LLMError) as error:
        client_for(fake, max_retry_wait_s=0.1).complete(USER)
    assert error.value.reason.startswith(f"HTTP 500 from {fake.base_url}: down; the next wait (0.")
    assert error.value.reason.endswith(" s), more than the 0.1 s left for retries (max_retry_wait_s)")
    assert len(fake.requests) == 1


def test_retry_after_beyond_the_budget_gives_up_at_once(fake):
    fake.script(Reply(status=429, content="quota", headers={"Retry-After": "120"}), "never sent")
    started = time.monotonic()
    with pytest.raises(LLMError) as error:
        client_for(fake, max_retry_wait_s=10).complete(USER)
    assert time.monotonic() - started < 60  # not the 120 s asked for
    assert error.value.reason == (f"HTTP 429 from {fake.base_url}: quota; the server asked to wait 120 s, "
                                  "more than the 10 s left for retries (max_retry_wait_s)")
    assert len(fake.requests) == 1


def test_persistent_500_gives_up_with_a_reason(fake):
    fake.script(*[Reply(status=500, content="database on fire")] * 3)
    with pytest.raises(LLMError) as error:
        client_for(fake, max_retries=2).complete(USER)
    assert error.value.reason == f"HTTP 500 from {fake.base_url}: database on fire (after 3 attempts)"
    assert error.value.call.attempts == 3 and error.value.call.error == error.value.reason
    assert len(fake.requests) == 3


def test_other_4xx_is_not_retried(fake):
    fake.script(Reply(status=400, content="bad model"), "fine")
    with pytest.raises(LLMError, match="HTTP 400"):
        client_for(fake).complete(USER)
    assert len(fake.requests) == 1


def test_timeout(fake):
    fake.script(Reply(delay_s=2.0, content="late"))
    started = time.monotonic()
    with pytest.raises(LLMError) as error:
        client_for(fake, timeout_s=0.3, max_retries=0).complete(USER)
    assert error.value.reason == f"timed out after 0.3 s ({fake.base_url})"  # not the reply 2 s later
    assert time.monotonic() - started < 10


def test_a_trickling_server_is_cut_off_at_the_deadline(fake):
    # ~300 bytes, one each 0.05 s: 15 s if every byte were awaited, and no single read waits the 0.4 s deadline
    fake.script(Reply(content="slow", trickle_s=0.05))
    started = time.monotonic()
    with pytest.raises(LLMError) as error:
        client_for(fake, timeout_s=0.4, max_retries=0).complete(USER)
    elapsed = time.monotonic() - started
    assert error.value.reason == f"timed out after 0.4 s ({fake.base_url})"
    assert 0.35 <= elapsed < 10  # the whole trickle would take 15 s


def test_malformed_json_body_is_retried_then_reported(fake):
    fake.script(Reply(body="{not json"), "fine", Reply(body="{not json"))
    assert client_for(fake).complete(USER).content == "fine"
    with pytest.raises(LLMError) as error:
        client_for(fake, max_retries=0).complete(USER)
    assert error.value.reason == f"malformed reply from {fake.base_url}: the body is not JSON"


def test_dropped_connection_is_retried_then_reported(fake):
    fake.script(Reply(drop=True), "fine", Reply(drop=True))
    assert client_for(fake).complete(USER).content == "fine"
    with pytest.raises(LLMError) as error:
        client_for(fake, max_retries=0).complete(USER)
    assert error.value.reason.startswith(f"cannot reach {fake.base_url}: ")


@pytest.mark.parametrize("transport", ["openai", "litellm"])
def test_unreachable_server(transport):
    settings = JudgeSettings(model="openai/fake-judge", api_base="http://127.0.0.1:9/v1", max_retries=0, cache=False,
                             transport=transport)
    with pytest.raises(LLMError) as error:
        LLMClient(settings, runtime=LLMRuntime()).complete(USER)
    assert error.value.reason.startswith("cannot reach http://127.0.0.1:9/v1: ") and error.value.kind == "outage"


def test_missing_api_key_env_var(fake, monkeypatch):
    monkeypatch.delenv("EVALRUN_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(LLMError) as error:
        client_for(fake, api_key_env="EVALRUN_TEST_NO_SUCH_KEY").complete(USER)
    assert error.value.reason == "environment variable EVALRUN_TEST_NO_SUCH_KEY (judge api_key_env) is not set"
    assert fake.requests == []


@pytest.mark.parametrize("status", [401, 500])
def test_a_key_echoed_by_the_provider_is_redacted(fake, monkeypatch, status):
    canary = "sk-canary-7f3a9b2c"
    monkeypatch.setenv("EVALRUN_TEST_CANARY_KEY", canary)
    fake.script(Reply(status=status, content="invalid key", echo_auth=True))
    runtime = LLMRuntime()
    with record_calls() as calls, pytest.raises(LLMError) as error:
        client_for(fake, runtime=runtime, api_key_env="EVALRUN_TEST_CANARY_KEY", max_retries=0).complete(USER)
    assert fake.request_headers[0]["authorization"] == f"Bearer {canary}"  # the key was sent, and echoed
    assert canary not in error.value.reason and canary not in str(error.value)
    assert "[redacted]" in error.value.reason and error.value.reason.startswith(f"HTTP {status} from {fake.base_url}")
    assert canary not in calls[0].model_dump_json() and canary not in runtime.summary().model_dump_json()


# ================================================================ circuit breaker


def test_the_judge_is_marked_down_after_three_failures(fake):
    fake.script(*[Reply(status=500, content="overloaded")] * 3)
    runtime = LLMRuntime()
    judge = LLMJudge(client_for(fake, runtime=runtime, max_retries=0), PromptLibrary())
    for i in range(3):
        with pytest.raises(LLMError):
            judge.semantic_match("a", f"b{i}", "answer")
    with pytest.raises(LLMError) as error:
        judge.semantic_match("a", "b-later", "answer")
    assert error.value.reason == f"judge marked down after 3 failures: HTTP 500 from {fake.base_url}: overloaded"
    assert len(fake.requests) == 3
    # Another client of the same model and role in the same run is down as well; other roles are not.
    with pytest.raises(LLMError, match="judge marked down"):
        client_for(fake, runtime=runtime).complete(USER)
    fake.script("agent reply")
    assert client_for(fake, runtime=runtime, role="agent").complete(USER).content == "agent reply"


def test_a_success_resets_the_failure_count(fake):
    fake.script(Reply(status=500), Reply(status=500), "ok", Reply(status=500), Reply(status=500), "still up")
    client = client_for(fake, max_retries=0)
    outcomes = []
    for _ in range(6):
        try:
            outcomes.append(client.complete(USER).content)
        except LLMError:
            outcomes.append("error")
    assert outcomes == ["error", "error", "ok", "error", "error", "still up"]


# ================================================================ cache


def test_cache_hit_makes_no_request(fake, tmp_path):
    fake.script("answer one")
    first = client_for(fake, tmp_path / "cache").complete(USER)
    with record_calls() as calls:
        second = client_for(fake, tmp_path / "cache").complete(USER)  # a fresh client and run read the disk
    assert first.content == second.content == "answer one"
    assert len(fake.requests) == 1
    # openai/fake-judge has no known price: the cached call is "cost unknown" (None), never $0
    assert calls[0].cached is True and calls[0].attempts == 0 and calls[0].cost_usd is None
    assert calls[0].saved_usd is None
    assert [a["content"] for a in cached_answers(tmp_path / "cache")] == ["answer one"]


@pytest.mark.parametrize("change", [
    {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]},
    {"max_tokens": 7},
    {"repeat": 1},
    {"response_format": {"type": "json_object"}},
])
def test_cache_key_changes_with_what_shapes_the_reply(fake, tmp_path, change):
    fake.default = lambda request: f"reply {len(fake.requests)}"
    client = client_for(fake, tmp_path)
    base = client.complete(USER).content
    changed = client.complete(USER, **change).content
    assert base != changed and len(fake.requests) == 2
    assert client.complete(USER, **change).content == changed and len(fake.requests) == 2  # itself cached
    if "max_tokens" in change:
        assert fake.requests[1]["max_tokens"] == 7
    if "repeat" in change:
        assert "repeat" not in fake.requests[1]


def test_cache_key_changes_with_settings(fake, tmp_path):
    fake.default = lambda request: f"reply {len(fake.requests)}"
    client_for(fake, tmp_path).complete(USER)
    client_for(fake, tmp_path, temperature=0.5).complete(USER)
    client_for(fake, tmp_path, model="openai/other").complete(USER)
    client_for(fake, tmp_path, timeout_s=9).complete(USER)  # the deadline does not shape the reply
    assert len(fake.requests) == 3


def test_no_cache_bypasses_the_cache(fake, tmp_path):
    fake.default = lambda request: "x"
    client_for(fake, tmp_path).complete(USER)
    client_for(fake, tmp_path, runtime=LLMRuntime(no_cache=True)).complete(USER)
    assert len(fake.requests) == 2


def test_failures_are_not_cached_and_damage_is_a_miss(fake, tmp_path):
    fake.script(Reply(status=500), "first", "second")
    with pytest.raises(LLMError):
        client_for(fake, tmp_path, max_retries=0).complete(USER)
    assert client_for(fake, tmp_path).complete(USER).content == "first"
    import sqlite3

    with sqlite3.connect(str(tmp_path / "llm" / "replies.sqlite")) as db:
        db.execute("""UPDATE replies SET value = '{"content": '""")  # a damaged entry is asked again
    assert client_for(fake, tmp_path).complete(USER).content == "second"
    assert len(fake.requests) == 3
    assert [a["content"] for a in cached_answers(tmp_path)] == ["second"]  # and repaired


def test_a_cache_file_that_is_no_database_is_kept_aside_and_replaced(fake, tmp_path):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "replies.sqlite").write_bytes(b"this is not a database, but it is long enough" * 100)
    fake.script("fresh")
    assert client_for(fake, tmp_path).complete(USER).content == "fresh"
    assert [a["content"] for a in cached_answers(tmp_path)] == ["fresh"]
    assert len(list((tmp_path / "llm").glob("replies.sqlite.damaged-*"))) == 1


def test_answers_cached_one_file_each_by_earlier_versions_are_still_read(fake, tmp_path):
    from runner.llm.cache import request_key

    client = client_for(fake, tmp_path)
    key = request_key(client.settings, USER, None, None, {"temperature": 0.0}, 0)
    (tmp_path / "llm" / key[:2]).mkdir(parents=True)
    (tmp_path / "llm" / key[:2] / f"{key}.json").write_text(json.dumps({"content": "from 2025", "tool_calls": []}))
    assert client.complete(USER).content == "from 2025" and fake.requests == []


def test_concurrent_writers_leave_one_whole_entry(fake, tmp_path):
    fake.default = lambda request: Reply(content="same answer", delay_s=0.05)
    runtime = LLMRuntime(concurrency=8)

    async def many():
        client = client_for(fake, tmp_path, runtime=runtime)
        return await asyncio.gather(*[client.acomplete(USER) for _ in range(8)])

    assert {c.content for c in asyncio.run(many())} == {"same answer"}
    assert [a["content"] for a in cached_answers(tmp_path)] == ["same answer"]


# The fast path only: the answer is cached by the client above either transport (client.py), and the process
# this test starts would spend ~5 s of CPU importing litellm for a point the cache tests on both paths make.
@pytest.mark.parametrize("fake", ["openai"], indirect=True)
def test_a_killed_run_repeats_no_answered_call(fake, tmp_path):
    """A separate process answers two of four questions and is killed; the rerun asks only the other two."""
    fake.default = lambda request: Reply(content="ok", delay_s=0.0 if "q0" in str(request) or "q1" in str(request)
                                         else 30)
    script = (
        "import sys; from pathlib import Path; from runner.llm import *\n"
        "client = LLMClient(ModelSettings(model='openai/m', api_base=sys.argv[1], max_retries=0, timeout_s=60,\n"
        "                                 transport=sys.argv[3]),\n"
        "                   Path(sys.argv[2]), role='agent', runtime=LLMRuntime())\n"
        "for i in range(4):\n"
        "    client.complete([{'role': 'user', 'content': f'q{i}'}]); print('answered', i, flush=True)\n")
    process = subprocess.Popen([sys.executable, "-c", script, fake.base_url, str(tmp_path), fake.transport], cwd=REPO,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "answered 0\n" and process.stdout.readline() == "answered 1\n"
    deadline = time.monotonic() + 10
    while len(fake.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.kill()
    process.wait()
    assert len(fake.requests) == 3
    fake.default = lambda request: "ok"
    client = client_for(fake, tmp_path, runtime=LLMRuntime())
    client.settings = ModelSettings(model="openai/m", api_base=fake.base_url, transport=fake.transport)
    for i in range(4):
        client.complete([{"role": "user", "content": f"q{i}"}])
    asked_again = [r["messages"][0]["content"] for r in fake.requests[3:]]
    assert asked_again == ["q2", "q3"]


# ================================================================ concurrency


def test_concurrency_limit_is_never_exceeded(fake):
    fake.default = lambda request: Reply(content="ok", delay_s=0.1)
    runtime = LLMRuntime(concurrency=2)

    async def many():
        client = client_for(fake, runtime=runtime)
        return await asyncio.gather(*[client.acomplete([{"role": "user", "content": f"c{i}"}]) for i in range(6)])

    started = time.monotonic()
    assert len(asyncio.run(many())) == 6
    assert fake.max_in_flight == 2
    assert time.monotonic() - started >= 0.3  # three waves of two


def test_calls_from_threads_share_the_limit_and_are_recorded(fake):
    """Agent calls on the main loop and judge calls through the blocking facade from scoring threads."""
    fake.default = lambda request: Reply(content="ok", delay_s=0.1)
    runtime = LLMRuntime(concurrency=3)
    agent = client_for(fake, runtime=runtime, role="agent")
    judge = client_for(fake, runtime=runtime, role="judge")

    async def case(i: int) -> list[LLMCall]:
        with record_calls() as calls:
            await agent.acomplete([{"role": "user", "content": f"agent {i}"}])
            await asyncio.to_thread(judge.complete, [{"role": "user", "content": f"judge {i}"}])
        return calls

    async def run():
        return await asyncio.gather(*[case(i) for i in range(6)])

    per_case = asyncio.run(run())
    assert fake.max_in_flight == 3
    assert [[call.role for call in calls] for calls in per_case] == [["agent", "judge"]] * 6
    totals = runtime.summary()
    assert (totals.calls, totals.by_role["agent"].calls, totals.by_role["judge"].calls) == (12, 6, 6)


def test_blocking_calls_from_threads_without_a_loop_share_the_limit(fake):
    fake.default = lambda request: Reply(content="ok", delay_s=0.1)
    client = client_for(fake, runtime=LLMRuntime(concurrency=2))
    threads = [threading.Thread(target=client.complete, args=([{"role": "user", "content": f"t{i}"}],))
               for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(fake.requests) == 5 and fake.max_in_flight == 2


def test_persistent_429_lowers_the_effective_concurrency(fake):
    fake.script(*[Reply(status=429, headers={"Retry-After": "0"})] * 4)
    fake.default = lambda request: Reply(content="ok", delay_s=0.05)
    runtime = LLMRuntime(concurrency=4)

    async def many():
        client = client_for(fake, runtime=runtime)
        return await asyncio.gather(*[client.acomplete([{"role": "user", "content": f"c{i}"}]) for i in range(4)])

    asyncio.run(many())
    # Halved once (4 -> 2: at most once a second however many 429s arrive together), then back up by one
    # after a streak of 2 successes; the last 2 successes are not yet the streak of 3 the next step needs.
    assert (runtime.limiter.throttled, runtime.limiter.effective) == (1, 3)


def test_limiter_recovers_and_hands_slots_across_loops():
    limiter = Limiter(4)
    limiter.throttle()
    assert limiter.effective == 2
    for _ in range(2):
        limiter.recover()
    assert limiter.effective == 3

    async def hold(n: int):
        async with limiter.slot():
            await asyncio.sleep(0.05)
        return n

    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(asyncio.run(hold(i)))) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert sorted(results) == list(range(6)) and limiter.in_use == 0


# ================================================================ records, tool calls, cost


def test_tool_calls_and_the_call_record(fake):
    call = tool_call("get_weather", {"city": "Paris"}, call_id="call_1")
    fake.script(Reply(tool_calls=[call], usage={"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    client = LLMClient(ModelSettings(model="openai/gpt-4o-mini", api_base=fake.base_url, transport=fake.transport),
                       role="agent", runtime=LLMRuntime())
    with record_calls() as calls:
        completion = asyncio.run(client.acomplete(USER, tools=tools))
    assert completion.tool_calls == [call] and completion.finish_reason == "tool_calls"
    assert completion.message() == {"role": "assistant", "content": None, "tool_calls": [call]}
    assert fake.requests[0]["tools"] == tools and "temperature" not in fake.requests[0]
    (record,) = calls
    assert (record.role, record.model, record.prompt_tokens, record.completion_tokens, record.cached, record.error) == \
        ("agent", "openai/gpt-4o-mini", 120, 8, False, None)
    assert record.cost_usd == pytest.approx(120 * 0.15e-6 + 8 * 0.6e-6)  # litellm's local price list
    assert record.latency_s > 0


def test_summarize_by_role():
    calls = [LLMCall(role="judge", model="m", latency_s=0.5, prompt_tokens=10, completion_tokens=2, cost_usd=0.01),
             LLMCall(role="judge", model="m", latency_s=0.0, cached=True, prompt_tokens=0, completion_tokens=0,
                     cost_usd=0.0),
             LLMCall(role="agent", model="x", latency_s=1.0, error="HTTP 500"),
             ]
    summary = summarize(calls)
    assert isinstance(summary, CallSummary)
    assert (summary.calls, summary.cached, summary.errors, summary.prompt_tokens, summary.completion_tokens) == \
        (3, 1, 1, 10, 2)
    assert summary.cost_usd == pytest.approx(0.01) and summary.latency_s == pytest.approx(1.5)
    assert summary.by_role["agent"].cost_usd is None and summary.by_role["judge"].calls == 2


# ================================================================ settings and import cost


def test_settings_forbid_unknown_keys():
    with pytest.raises(ValueError):
        JudgeSettings(model="openai/x", temprature=0.2)


def test_judge_settings_defaults():
    settings = JudgeSettings(model="openai/x")
    assert (settings.temperature, settings.offline_fallback, settings.structured_output) == (0.0, False, "auto")
    assert ModelSettings(model="openai/x").temperature is None


def test_importing_llm_and_prompts_does_not_import_litellm():
    code = "import sys, runner.llm, runner.llm.prompts; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_cancelled_waiter_gives_its_slot_back():
    limiter = Limiter(1)

    async def scenario():
        await limiter.acquire()
        waiting = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        limiter.release()
        assert limiter.in_use == 0
        await asyncio.wait_for(limiter.acquire(), 1)  # the slot is free, not leaked to the cancelled waiter
        limiter.release()

    asyncio.run(scenario())
    assert limiter.in_use == 0


def test_a_cancelled_case_frees_its_request_slot(fake):
    # only the call that is cancelled is slow (never answered in the test's time); the others answer at once
    fake.default = lambda request: Reply(content="ok", delay_s=30 if "slow" in str(request["messages"]) else 0)
    runtime = LLMRuntime(concurrency=1)
    client = client_for(fake, runtime=runtime)

    async def scenario():
        await client.acomplete([{"role": "user", "content": "warm up"}])
        slow = asyncio.create_task(client.acomplete([{"role": "user", "content": "slow"}]))
        deadline = time.monotonic() + 10
        while len(fake.requests) < 2 and time.monotonic() < deadline:  # the slow call is at the server
            await asyncio.sleep(0.01)
        assert runtime.limiter.in_use == 1
        slow.cancel()  # a case timing out mid-call
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert runtime.limiter.in_use == 0
        return await asyncio.wait_for(client.acomplete(USER), 5)

    assert asyncio.run(scenario()).content == "ok"
    assert runtime.limiter.in_use == 0


def test_a_blocking_call_from_inside_a_running_loop_does_not_deadlock(fake):
    """Scoring called straight from a coroutine (not through to_thread) still gets its answer."""
    fake.script("first", "second")
    runtime = LLMRuntime()
    client = client_for(fake, runtime=runtime)

    async def scenario():
        await client.acomplete(USER)  # binds the run's loop
        return client.complete(USER)  # blocks this loop: the call runs on the layer's own loop instead

    assert asyncio.run(asyncio.wait_for(scenario(), 20)).content == "second"


def test_blocking_calls_from_a_busy_executor_do_not_starve_the_loop(fake, monkeypatch):
    """Scoring threads fill the main loop's executor and each waits for a judge call; litellm also needs
    an executor thread for every call. The judge calls must not need the main loop's."""
    from concurrent.futures import ThreadPoolExecutor

    from runner.llm import pricing

    # The first call of a model reads its price list entry while it holds its slot: in the loop's default executor,
    # which the blocked scorers fill, that was a deadlock (only when no earlier test had read it).
    monkeypatch.setattr(pricing, "_by_model", {})
    fake.default = lambda request: Reply(content="ok", delay_s=0.1)
    runtime = LLMRuntime(concurrency=4)
    agent = client_for(fake, runtime=runtime, role="agent")
    judge = client_for(fake, runtime=runtime, role="judge")

    async def scenario():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
        scorers = [asyncio.to_thread(judge.complete, [{"role": "user", "content": f"judge {i}"}]) for i in range(4)]
        agents = [agent.acomplete([{"role": "user", "content": f"agent {i}"}]) for i in range(4)]
        return await asyncio.wait_for(asyncio.gather(*scorers, *agents), 20)

    started = time.monotonic()
    assert [c.content for c in asyncio.run(scenario())] == ["ok"] * 8
    assert time.monotonic() - started < 10 and fake.max_in_flight <= 4


def test_auto_structured_output_falls_back_to_plain_text_when_refused(fake):
    """litellm says gpt-4o-mini takes a schema; this server does not: ask in plain text from then on."""
    def server(request):
        if "response_format" in request:
            return Reply(status=400, content="response_format json_schema is not supported here")
        return verdict(token_of(request), True, "same")

    fake.default = server
    judge = LLMJudge(LLMClient(JudgeSettings(model="openai/gpt-4o-mini", max_retries=0, cache=False,
                                             transport=fake.transport), role="judge", runtime=LLMRuntime()),
                     PromptLibrary())
    judge.client.settings = judge.client.settings.model_copy(update={"api_base": fake.base_url})
    judge._structured = True  # what auto decided for gpt-4o-mini without an api_base
    assert judge.semantic_match("a", "b", "answer").matched is True
    assert judge.semantic_match("a", "c", "answer").matched is True
    assert ["response_format" in r for r in fake.requests] == [True, False, False]


def test_auto_asks_the_model_list_whether_the_model_takes_a_schema():
    runtime = LLMRuntime()
    known = LLMJudge(LLMClient(JudgeSettings(model="openai/gpt-4o-mini"), runtime=runtime), PromptLibrary())
    unknown = LLMJudge(LLMClient(JudgeSettings(model="ollama/llama3.1"), runtime=runtime), PromptLibrary())
    served = LLMJudge(LLMClient(JudgeSettings(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1"),
                                runtime=runtime), PromptLibrary())
    assert known.verdict_format()["json_schema"]["strict"] is True
    assert unknown.verdict_format() is None and served.verdict_format() is None


def test_samples_within_repeats_each_have_their_own_cache_entry(fake, tmp_path):
    """A judged check asking 2 samples in each of 2 repeats must send 4 requests, not reuse a slot."""
    from runner.llm.calls import repeat_scope

    fake.default = lambda request: "ok"
    client = client_for(fake, runtime=LLMRuntime(concurrency=2), cache_dir=tmp_path)
    for repeat in (1, 2):
        with repeat_scope(repeat):
            for sample in (0, 1):
                client.complete([{"role": "user", "content": "same question"}], sample=sample)
    assert len(fake.requests) == 4
    with repeat_scope(2):
        client.complete([{"role": "user", "content": "same question"}], sample=1)
    assert len(fake.requests) == 4  # asked again: answered from its own slot
