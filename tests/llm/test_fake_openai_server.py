"""The fake OpenAI server itself, over plain HTTP (urllib): each scripted fault behaves as documented."""
from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request

import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call


def post(fake: FakeOpenAI, payload: dict, timeout: float = 5, headers: dict | None = None):
    request = urllib.request.Request(f"{fake.base_url}/chat/completions", data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    return urllib.request.urlopen(request, timeout=timeout)


def settles(condition, within_s: float = 2.0) -> bool:
    """The server thread finishes its bookkeeping just after the client has its answer."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_content_reply_with_usage_and_recorded_request():
    with FakeOpenAI() as fake:
        fake.script("hello")
        reply = json.load(post(fake, BODY))
        assert reply["choices"][0]["message"] == {"role": "assistant", "content": "hello"}
        assert reply["choices"][0]["finish_reason"] == "stop"
        assert reply["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        assert fake.requests == [BODY]


def test_tool_calls_reply():
    call = tool_call("get_weather", {"city": "Paris"}, call_id="call_1")
    with FakeOpenAI() as fake:
        fake.script(Reply(tool_calls=[call]))
        reply = json.load(post(fake, BODY))
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [{"id": "call_1", "type": "function",
                                                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]


def test_default_may_return_a_reply():
    with FakeOpenAI(default=lambda request: Reply(status=503, content="busy")) as fake, \
            pytest.raises(urllib.error.HTTPError) as error:
        post(fake, BODY)
    assert error.value.code == 503 and json.load(error.value)["error"]["message"] == "busy"


def test_headers_and_echoed_authorization():
    with FakeOpenAI() as fake:
        fake.script(Reply(status=429, headers={"Retry-After": "2"}, content="slow down", echo_auth=True))
        with pytest.raises(urllib.error.HTTPError) as error:
            post(fake, BODY, headers={"Authorization": "Bearer canary-123"})
        assert fake.request_headers[0]["authorization"] == "Bearer canary-123"
    assert error.value.code == 429 and error.value.headers["Retry-After"] == "2"
    assert json.load(error.value)["error"]["message"] == "slow down (you sent Authorization: Bearer canary-123)"


def test_trickle_sends_one_byte_at_a_time():
    with FakeOpenAI() as fake:
        fake.script(Reply(content="x", trickle_s=0.003))
        started = time.monotonic()
        reply = json.load(post(fake, BODY))
    assert reply["choices"][0]["message"]["content"] == "x"
    assert time.monotonic() - started >= 0.003 * 200  # a completion body is well over 200 bytes


def test_drop_closes_without_an_answer():
    with FakeOpenAI() as fake:
        fake.script(Reply(drop=True))
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
            post(fake, BODY)
        assert len(fake.requests) == 1
        assert settles(lambda: fake.in_flight == 0)


def test_malformed_body():
    with FakeOpenAI() as fake:
        fake.script(Reply(body="{not json"))
        assert post(fake, BODY).read() == b"{not json"


def test_max_in_flight_counts_overlapping_requests():
    import threading

    with FakeOpenAI(default=lambda request: Reply(content="ok", delay_s=0.2)) as fake:
        threads = [threading.Thread(target=lambda: post(fake, BODY).read()) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert fake.max_in_flight == 3
        assert settles(lambda: fake.in_flight == 0)
