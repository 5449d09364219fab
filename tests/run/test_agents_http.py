"""The `http` target over real HTTP: a small agent server on 127.0.0.1 and the fake OpenAI server."""
from __future__ import annotations

import socket
import time

import pytest

from tests.fakes.agent_server import _BOMB as GZIP_BOMB, AgentServer
from tests.fakes.cases import make_agent, make_case, talk
from tests.fakes.openai_server import FakeOpenAI

TWO_TURNS = {"id": "web-1", "starting_sentence": "hello", "user_prompts": ["and then?"], "runtime_context": {"lang": "en"}}


@pytest.fixture
def server():
    with AgentServer() as running:
        yield running


def http_agent(url: str, **options):
    return make_agent({"type": "http", "url": url, **options})


@pytest.mark.parametrize("path", ["/messages", "/completion"])
def test_both_reply_shapes_make_the_same_conversation(server, path):
    conversation = talk(make_case(**TWO_TURNS), http_agent(server.url(path)))
    assert conversation.messages == [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": "you said: hello"},
        {"role": "user", "content": "and then?"}, {"role": "assistant", "content": "you said: and then?"}]
    assert (conversation.termination_reason, conversation.error) == ("script_end", None)
    _, body, _ = server.requests[1]
    assert body == {"messages": conversation.messages[:3], "case_id": "web-1", "turn": 2, "runtime_context": {"lang": "en"},
                    "conversation_id": conversation.id}


def test_headers_take_environment_values_that_never_reach_an_error(server, monkeypatch):
    monkeypatch.setenv("AGENT_TOKEN", "s3cret-token-value")
    agent = http_agent(server.url("/error"), headers={"Authorization": "Bearer ${AGENT_TOKEN}"})
    conversation = talk(make_case(starting_sentence="hi"), agent)
    assert server.requests[0][2]["Authorization"] == "Bearer s3cret-token-value"
    assert conversation.termination_reason == "agent_error"
    assert conversation.error == (f"HTTP 500 from {server.url('/error')}: "
                                  '{"error": "upstream failed for <redacted>"}')
    assert conversation.messages == [{"role": "user", "content": "hi"}]


def test_a_missing_environment_variable_is_named_not_guessed(server, monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    conversation = talk(make_case(starting_sentence="hi"),
                        http_agent(server.url("/messages"), headers={"X-Key": "${NOT_SET_ANYWHERE}"}))
    assert (conversation.termination_reason, conversation.error) == (
        "agent_error", "the agent could not start: header 'X-Key' refers to ${NOT_SET_ANYWHERE}, but the environment "
                       "variable NOT_SET_ANYWHERE is not set")
    assert server.requests == []


def test_a_request_timeout_keeps_the_conversation_so_far(server):
    started = time.monotonic()
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/slow"), timeout_s=0.3))
    assert time.monotonic() - started < 10  # the answer would have come after 2 s: the error below says it was not awaited
    assert (conversation.termination_reason, conversation.error) == (
        "agent_error", f"no complete answer from {server.url('/slow')} within 0.3 s")
    assert conversation.messages == [{"role": "user", "content": "hi"}]


def test_an_unreachable_endpoint_is_the_case_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conversation = talk(make_case(starting_sentence="hi"), http_agent(f"http://127.0.0.1:{port}/chat"))
    assert conversation.termination_reason == "agent_error"
    assert conversation.error.startswith(f"cannot reach http://127.0.0.1:{port}/chat: ")


def test_a_reply_that_is_not_json_is_quoted(server):
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/notjson")))
    assert conversation.error == f"the reply from {server.url('/notjson')} is not JSON: <html>oops</html>"


def test_stop_in_the_reply_ends_the_conversation(server):
    conversation = talk(make_case(**TWO_TURNS), http_agent(server.url("/stop")))
    assert (conversation.termination_reason, conversation.user_turns, len(conversation.messages)) == ("agent_stop", 1, 2)


def test_an_openai_compatible_endpoint_works_as_it_is():
    with FakeOpenAI() as fake:
        fake.script("Hello! How can I help?")
        agent = http_agent(f"{fake.base_url}/chat/completions", body={"model": "my-agent"}, send_context=False)
        conversation = talk(make_case(starting_sentence="hi"), agent)
        assert fake.requests == [{"model": "my-agent", "messages": [{"role": "user", "content": "hi"}]}]
    assert conversation.messages[-1] == {"role": "assistant", "content": "Hello! How can I help?"}
    assert (conversation.termination_reason, conversation.error) == ("script_end", None)


# ------------------------------------------------------------------ replies that misbehave on the wire

def test_a_trickled_reply_is_bounded_by_one_deadline_for_the_whole_request(server):
    started = time.monotonic()
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/trickle"), timeout_s=0.5))
    assert time.monotonic() - started < 2.5  # each byte came quickly, the whole would take 3.2 s
    assert (conversation.termination_reason, conversation.error) == (
        "agent_error", f"no complete answer from {server.url('/trickle')} within 0.5 s")
    assert conversation.messages == [{"role": "user", "content": "hi"}]


def test_a_trickled_reply_within_the_deadline_is_read(server):
    # one byte at a time, a read per byte; the faster pace: the point is the reassembly, not the wait
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/trickle-fast"), timeout_s=30))
    assert conversation.messages[-1] == {"role": "assistant", "content": "you said: hi"}


@pytest.mark.parametrize("path, error", [
    ("/huge", "the reply from {url} is larger than 16 MiB (max_reply_bytes: 16777216; raise it to allow larger "
              "replies)"),
    ("/declared", "the reply from {url} is larger than 16 MiB (max_reply_bytes: 16777216; raise it to allow larger "
                  "replies): it says it holds 314,572,800 bytes"),
    ("/gzipbomb", "the reply from {url} is larger than 16 MiB (max_reply_bytes: 16777216; raise it to allow larger "
                  f"replies): it holds {len(GZIP_BOMB):,} bytes that inflate past the limit (Content-Encoding: gzip)"),
])
def test_a_reply_above_the_size_limit_is_the_case_error_and_is_not_read_whole(server, path, error):
    started = time.monotonic()
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url(path), timeout_s=20), timeout_s=8)
    assert time.monotonic() - started < 8
    assert (conversation.termination_reason, conversation.error) == ("agent_error", error.format(url=server.url(path)))


def test_the_size_limit_is_configurable(server):
    conversation = talk(make_case(starting_sentence="hi"),
                        http_agent(server.url("/huge"), max_reply_bytes=32 * 1024 * 1024))
    assert conversation.error is None and len(conversation.messages[-1]["content"]) == 20 * 1024 * 1024
    small = talk(make_case(starting_sentence="hi"), http_agent(server.url("/messages"), max_reply_bytes=20))
    assert small.error == (f"the reply from {server.url('/messages')} is larger than 20 bytes (max_reply_bytes: 20; "
                           "raise it to allow larger replies): it says it holds 64 bytes")


def test_a_redirect_is_reported_with_where_it_points_and_not_followed(server):
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/redirect")))
    assert (conversation.termination_reason, conversation.error) == (
        "agent_error", f"HTTP 302 from {server.url('/redirect')}: the endpoint redirects to "
                       "http://elsewhere.example/chat; evalrun does not follow redirects: set the agent's `url` to "
                       "where it points")
    assert [path for path, _, _ in server.requests] == ["/redirect"]


def test_where_a_redirect_points_is_quoted_as_agent_text(server):
    server.redirect_to = "http://elsewhere.example/\x85" + "a" * 300  # a C1 control, then far too long
    conversation = talk(make_case(starting_sentence="hi"), http_agent(server.url("/redirect")))
    pointed = "http://elsewhere.example/\\x85" + "a" * 170 + "…"
    assert conversation.error == (f"HTTP 302 from {server.url('/redirect')}: the endpoint redirects to {pointed}; "
                                  "evalrun does not follow redirects: set the agent's `url` to where it points")
