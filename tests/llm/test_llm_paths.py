"""The two paths a model call can take, end to end: which models take the fast OpenAI-compatible client,
that it never imports litellm, that neither path leaves a traceback or a warning at exit, what each sends,
and cost (unknown is never $0; the cache says what it saved). Real processes, real HTTP to the fake server."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runner.llm.calls import CallSummary, LLMCall, record_calls, summarize
from runner.llm.client import LLMClient
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import JudgeSettings, ModelSettings
from tests.fakes.llm import USER, token_of, transport_of
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call
from tests.helpers.cli_helpers import cli_env, run_cli, write

REPO = Path(__file__).resolve().parents[2]
NOISE = ("Traceback", "Task was destroyed", "coroutine", "event loop", "Unclosed", "Exception ignored", "Error")


@pytest.mark.parametrize("model, api_base, transport, fast", [
    ("openai/gpt-4o-mini", None, "auto", True),
    ("openai/my-model", "http://localhost:8000/v1", "auto", True),
    ("hosted_vllm/qwen", "http://localhost:8000/v1", "auto", True),
    ("lm_studio/qwen", "http://localhost:1234/v1", "auto", True),
    ("hosted_vllm/qwen", None, "auto", False),
    ("ollama/llama3.1", "http://localhost:11434", "auto", False),  # Ollama's own API, not /chat/completions
    ("anthropic/claude-3-5-sonnet", None, "auto", False),
    ("openai/gpt-4o-mini", None, "litellm", False),
    ("ollama/llama3.1", "http://localhost:11434/v1", "openai", True),
])
def test_which_models_take_the_fast_path(model, api_base, transport, fast):
    from runner.llm.wire import takes_fast_path

    assert takes_fast_path(ModelSettings(model=model, api_base=api_base, transport=transport)) is fast


def test_forcing_the_fast_path_needs_a_server_for_other_providers():
    with pytest.raises(ValueError, match="transport: openai needs an api_base"):
        ModelSettings(model="ollama/llama3.1", transport="openai")


EXIT_SCRIPT = """
import asyncio, sys
from runner.llm import LLMClient, ModelSettings
from runner.llm.runtime import LLMRuntime
client = LLMClient(ModelSettings(model=sys.argv[2], api_base=sys.argv[1], cache=False, max_retries=0), role="judge",
                   runtime=LLMRuntime(concurrency=4))
async def run():
    await asyncio.gather(*[client.acomplete([{"role": "user", "content": f"a{i}"}]) for i in range(3)])
    await asyncio.to_thread(client.complete, [{"role": "user", "content": "from a scoring thread"}])
asyncio.run(run())
asyncio.run(run())  # a second run in the same process, on a new loop
client.complete([{"role": "user", "content": "from a script"}])
print("litellm" in sys.modules)
"""


@pytest.mark.parametrize("model, imported", [("openai/fake", "False"), ("deepseek/fake", "True")])
def test_no_path_leaves_a_traceback_or_a_warning_at_exit(model, imported):
    """Issue 15: every run that called a model ended with litellm's "Task was destroyed but it is pending!"
    (its logging worker, used from several event loops). deepseek/ with an api_base goes through litellm."""
    with FakeOpenAI(default=lambda request: "ok") as fake:
        result = subprocess.run([sys.executable, "-W", "default", "-c", EXIT_SCRIPT, fake.base_url, model], cwd=REPO,
                                capture_output=True, text=True, timeout=180)
        assert len(fake.requests) == 9
    assert result.returncode == 0 and result.stdout.strip() == imported
    assert result.stderr == ""


def test_the_layers_loop_is_closed_at_exit():
    """CI caught "ResourceWarning: unclosed event loop" in 2 of 3 runs of the script above: the exit handler
    stopped the layer's loop but never closed it. Deterministic here: after the handler the loop is closed."""
    script = ("import asyncio\nfrom runner.llm import loop as layer\n"
              "loop = layer.layer_loop()\n"
              "asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result()\n"
              "layer._close()\nprint(loop.is_closed())")
    result = subprocess.run([sys.executable, "-W", "default", "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert (result.stdout.strip(), result.stderr) == ("True", "")


def project(tmp_path: Path, base_url: str, model: str, cases: int = 1) -> None:
    """Live cases with every role: a model agent with a played tool, a simulated user and a judged check."""
    write(tmp_path / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        cache_dir: cache
        judge: {{model: {model}-judge, api_base: "{base_url}", max_retries: 0}}
        simulator: {{model: {model}-user, api_base: "{base_url}", max_retries: 0}}
        agents:
          bot: {{type: model, model: {model}, api_base: "{base_url}", max_retries: 0,
                 tools: [{{type: function, function: {{name: get_weather, parameters: {{type: object}}}}}}]}}
        """)
    for n in range(1, cases):
        write(tmp_path / "suites" / f"weather{n}.yaml", f"""
            id: weather{n}
            agent: bot
            starting_sentence: Weather in Paris, case {n}?
            tool_outputs: {{get_weather: {{temp_c: 21}}}}
            goal_details: [{{type: tool_call, name: look, tool_name: get_weather, args: {{city: Paris}}}}]
            checks: [{{type: semantic_match, reference: It is 21 degrees in Paris.}}]
            """)
    write(tmp_path / "suites" / "weather.yaml", """
        id: weather
        agent: bot
        story: You want to know the weather in Paris.
        starting_sentence: Weather in Paris?
        tool_outputs: {get_weather: {temp_c: 21}}
        goal_details:
          - {type: tool_call, name: look, tool_name: get_weather, args: {city: Paris}}
        checks:
          - {type: semantic_match, reference: It is 21 degrees in Paris.}
        """)


def every_role(request: dict) -> Reply:
    text = json.dumps(request["messages"])
    if "BEGIN-V" in text:
        return Reply(content=json.dumps({"reason": "same", "match": True, "score": 1, "verdict_id": token_of(request)}))
    if request["model"].endswith("-user"):
        return Reply(content='{"done": true}')
    if request["messages"][-1]["role"] == "tool":
        return Reply(content="It is 21 degrees in Paris.")
    return Reply(tool_calls=[tool_call("get_weather", {"city": "Paris"}, "c1")])


@pytest.mark.process  # a fresh interpreter: litellm must not be importable, and this one may have it loaded
def test_a_run_on_the_fast_path_never_imports_litellm(tmp_path):
    """A litellm that cannot be imported stands on the path: every role still runs."""
    (tmp_path / "poison" / "litellm").mkdir(parents=True)
    (tmp_path / "poison" / "litellm" / "__init__.py").write_text("raise ImportError('litellm must not be imported')\n")
    with FakeOpenAI(default=every_role) as fake:
        project(tmp_path, fake.base_url, "openai/fake")
        env = cli_env()
        env["PYTHONPATH"] = f"{tmp_path / 'poison'}:{env.get('PYTHONPATH', '')}"
        result = subprocess.run([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], cwd=tmp_path,
                                env=env, capture_output=True, text=True, timeout=180)
        roles = sorted({r["model"] for r in fake.requests})
    assert result.returncode == 0, result.stdout + result.stderr
    assert roles == ["fake", "fake-judge", "fake-user"]
    assert not any(word in result.stderr for word in NOISE), result.stderr


def test_a_run_through_litellm_prints_nothing_but_its_report(tmp_path):
    with FakeOpenAI(default=every_role) as fake:
        project(tmp_path, fake.base_url, "deepseek/fake", cases=12)
        result = run_cli("suites", "-j", "8", "--output-dir", "out", cwd=tmp_path)
        assert {r["model"] for r in fake.requests} == {"fake", "fake-judge", "fake-user"}
    assert result.returncode == 0, result.stdout + result.stderr
    assert not any(word in result.stderr for word in NOISE), result.stderr


def test_judged_checks_are_as_many_in_flight_as_j_allows(tmp_path):
    """Issue 16: judged checks ran on the default thread pool (min(32, CPUs + 4) threads), so at most that
    many judge calls were in flight whatever -j said."""
    cases = 40
    together = threading.Barrier(cases, timeout=15)  # each judge call is answered once all 40 are in flight

    def judge(request: dict) -> Reply:
        try:
            together.wait()
        except threading.BrokenBarrierError:  # fewer ever came at once: answer anyway, the count tells
            pass
        return Reply(content=json.dumps({"reason": "same", "match": True, "score": 1, "verdict_id": token_of(request)}))

    with FakeOpenAI(default=judge) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", cache: false}}
            """)
        for n in range(cases):
            write(tmp_path / "suites" / f"c{n}.yaml", f"""
                id: c{n}
                transcript: t.json
                checks: [{{type: semantic_match, reference: "It is {n} degrees."}}]
                """)
        (tmp_path / "suites" / "t.json").write_text(json.dumps([
            {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "It is warm."}]))
        result = run_cli("suites", "-j", str(cases), "--output-dir", "out", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(fake.requests) == cases and fake.max_in_flight == cases


@pytest.mark.parametrize("j", [12, 40])
def test_live_cases_judged_checks_are_as_many_in_flight_as_j(tmp_path, j):
    """Issue 16, live: each case's model agent answers, then its judged check (scored in a thread of its own, the
    judge called through the run's limit) waits at the server until -j of them are in flight together, as a slow
    judge keeps them. A pool of threads smaller than -j (the default one has min(32, CPUs + 4)) would keep the
    count below it; the waiting judge calls are answered anyway, and the count says."""
    together = threading.Barrier(j, timeout=20)
    judging, most, lock = [0], [0], threading.Lock()

    def reply(request: dict) -> Reply:
        if "BEGIN-V" not in json.dumps(request["messages"]):
            return Reply(content="It is 21 degrees.")
        with lock:
            judging[0] += 1
            most[0] = max(most[0], judging[0])
        try:
            together.wait()
        except threading.BrokenBarrierError:
            pass
        with lock:
            judging[0] -= 1
        return Reply(content=json.dumps({"reason": "same", "match": True, "score": 1, "verdict_id": token_of(request)}))

    with FakeOpenAI(default=reply) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", cache: false}}
            agents: {{bot: {{type: model, model: openai/fake, api_base: "{fake.base_url}", cache: false}}}}
            """)
        for n in range(j):
            write(tmp_path / "suites" / f"c{n}.yaml", f"""
                id: c{n}
                starting_sentence: Weather?
                checks: [{{type: semantic_match, reference: "It is 21 degrees."}}]
                """)
        result = run_cli("suites", "-j", str(j), "--output-dir", "out", cwd=tmp_path)
        judged = [r for r in fake.requests if r["model"] == "fake-judge"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(judged) == j and most[0] == j


def test_the_fast_path_to_openai_itself(monkeypatch):
    """No api_base: OpenAI's URL (OPENAI_BASE_URL where set, as the SDK reads it), OPENAI_API_KEY, and
    max_tokens under OpenAI's current name; the key is redacted from errors like any api_key_env."""
    canary = "sk-canary-openai-1f2e3d"
    with FakeOpenAI() as fake:
        fake.script("ok", Reply(status=401, content="bad key", echo_auth=True))
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", canary)
        client = LLMClient(ModelSettings(model="openai/gpt-4o-mini", max_tokens=50, max_retries=0, cache=False),
                           role="agent", runtime=LLMRuntime())
        assert client.complete(USER).content == "ok"
        with pytest.raises(Exception) as error:
            client.complete(USER)
    request = fake.requests[0]
    assert (request["model"], request["max_completion_tokens"], "max_tokens" in request) == ("gpt-4o-mini", 50, False)
    assert fake.request_headers[0]["authorization"] == f"Bearer {canary}"
    assert canary not in str(error.value) and "[redacted]" in str(error.value)


def test_the_fast_path_goes_through_the_environments_proxy(monkeypatch):
    """Proxies named by HTTP_PROXY / NO_PROXY are worked out once per server (aiohttp's trust_env does it
    again in a thread for every request)."""
    from runner.llm.openai_fast import proxy_for

    with FakeOpenAI(default=lambda request: "via the proxy") as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.rsplit("/v1", 1)[0])
        monkeypatch.setenv("NO_PROXY", "localhost")
        client = LLMClient(ModelSettings(model="openai/m", api_base="http://models.internal.test/v1", cache=False,
                                         max_retries=0), role="agent", runtime=LLMRuntime())
        assert client.complete(USER).content == "via the proxy"
        assert proxy.proxied == ["http://models.internal.test/v1/chat/completions"]
    assert proxy_for("http://localhost:8000/v1") is None
    monkeypatch.delenv("HTTP_PROXY")
    assert proxy_for("http://models.internal.test/v1") is None


@pytest.mark.parametrize("through_proxy", [False, True])  # the small client; aiohttp (as for https)
def test_an_answer_past_the_size_limit_is_refused_on_both_clients(monkeypatch, through_proxy):
    import runner.llm.http1 as http1

    monkeypatch.setattr(http1, "MAX_BODY", 1000)
    with FakeOpenAI(default=lambda request: "x" * 5000) as fake:
        api_base = fake.base_url
        if through_proxy:
            monkeypatch.setenv("HTTP_PROXY", fake.base_url.rsplit("/v1", 1)[0])
            monkeypatch.setenv("NO_PROXY", "localhost")
            api_base = "http://size-limit.internal.test/v1"  # a host of its own: the layer keeps each host's proxy
        client = LLMClient(ModelSettings(model="openai/m", api_base=api_base, cache=False, max_retries=0),
                           role="agent", runtime=LLMRuntime())
        with pytest.raises(Exception) as error:
            client.complete(USER)
    assert "malformed reply from" in str(error.value) and "an answer longer than 0 MiB" in str(error.value)


def test_a_server_gets_max_tokens_by_its_own_name():
    with FakeOpenAI(default=lambda request: "ok") as fake:
        LLMClient(ModelSettings(model="openai/local", api_base=fake.base_url, max_tokens=50, cache=False),
                  role="agent", runtime=LLMRuntime()).complete(USER)
    assert fake.requests[0]["max_tokens"] == 50 and "max_completion_tokens" not in fake.requests[0]


@pytest.mark.parametrize("transport", ["openai", "litellm"])
def test_cost_unknown_is_never_zero_and_the_cache_says_what_it_saved(tmp_path, transport):
    """Issue 16: a cached call with no known price showed $0.0000."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    with FakeOpenAI(default=lambda request: Reply(content="ok", usage=usage)) as fake:
        fake.transport = transport

        def call(model: str) -> LLMCall:
            with record_calls() as calls:
                LLMClient(JudgeSettings(model=model, api_base=fake.base_url, **transport_of(fake)), tmp_path,
                          runtime=LLMRuntime()).complete(USER)
            return calls[0]

        priced, priced_again = call("openai/gpt-4o-mini"), call("openai/gpt-4o-mini")
        unknown, unknown_again = call("openai/no-such-model"), call("openai/no-such-model")
    price = 1000 * 0.15e-6 + 100 * 0.6e-6
    assert (priced.cost_usd, priced.cached) == (pytest.approx(price), False)
    assert (priced_again.cost_usd, priced_again.saved_usd, priced_again.cached) == (0.0, pytest.approx(price), True)
    assert (unknown.cost_usd, unknown_again.cost_usd, unknown_again.saved_usd) == (None, None, None)
    totals = summarize([priced, priced_again])
    assert totals.cost_text() == f"${price:.4f} (the cache saved ${price:.4f})"
    assert summarize([unknown, unknown_again]).cost_text() == "cost unknown"
    assert summarize([priced, unknown]).cost_text() == f"${price:.4f} + 1 call(s) of unknown price"
    assert CallSummary().cost_text() == "$0"


def test_validate_warns_about_samples_at_temperature_0(tmp_path):
    write(tmp_path / "evalrun.yaml", "judge: {model: openai/x, api_base: 'http://127.0.0.1:9/v1'}\n")
    write(tmp_path / "suites" / "a.yaml", """
        id: a
        transcript: t.json
        checks:
          - {type: semantic_match, reference: yes, samples: 3}
          - {type: assert, statement: polite, samples: 3, judge: {temperature: 0.7}}
          - type: all
            checks: [{type: rubric, samples: 2, rubrics: [{name: c, description: clear}]}]
        """)
    result = run_cli("validate", "suites", cwd=tmp_path)
    lines = [line for line in result.stdout.splitlines() + result.stderr.splitlines() if "samples" in line]
    assert lines == [
        "suites/a.yaml:1:1: warning: case 'a': check checks[0] (semantic_match) asks for samples: 3 from a judge at "
        "temperature 0, which would give one answer repeated: one request is sent; raise the judge's temperature "
        "(evalrun.yaml or the check's `judge:`) for independent samples, or drop `samples`",
        "suites/a.yaml:1:1: warning: case 'a': check checks[2].checks[0] (rubric) asks for samples: 2 from a judge at "
        "temperature 0, which would give one answer repeated: one request is sent; raise the judge's temperature "
        "(evalrun.yaml or the check's `judge:`) for independent samples, or drop `samples`"]


@pytest.mark.process  # a real SIGTERM
def test_a_stop_ends_the_judge_calls_a_case_waits_in(tmp_path):
    """SIGTERM while a slow judge thinks: the scoring thread's call is cancelled, the run stops at once (exit 2)
    instead of waiting out the reply (and its reply retries)."""
    import signal
    import time

    with FakeOpenAI(default=lambda request: Reply(delay_s=60, content="too late")) as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            judge: {{model: openai/fake-judge, api_base: "{fake.base_url}", cache: false, timeout_s: 120}}
            """)
        write(tmp_path / "suites" / "a.yaml", """
            id: a
            transcript: t.json
            checks: [{type: semantic_match, reference: It is warm.}]
            """)
        (tmp_path / "suites" / "t.json").write_text(json.dumps([
            {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "It is hot."}]))
        process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "--output-dir", "out"], cwd=tmp_path,
                                   env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.requests, "the judge was never asked"
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        stdout, stderr = process.communicate(timeout=60)
        waited = time.monotonic() - started
    assert process.returncode == 2, stdout + stderr
    assert waited < 10
    assert not any(word in stderr for word in NOISE), stderr
