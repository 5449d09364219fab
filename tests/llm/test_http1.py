"""The small HTTP/1.1 client of the fast path (runner/llm/http1.py), against raw servers on 127.0.0.1 that
answer in each way HTTP allows: Content-Length, chunks, up to the close, after a 100 Continue; keep-alive
reuse, a connection the server closed while idle, `Connection: close`, garbage, a timeout, a refused
connection. And the run that uses it: a live run against an http:// server never imports aiohttp."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.llm.client import LLMClient
from runner.llm.errors import LLMError
from runner.llm.http1 import BadAnswer, Disconnected, Pool
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import ModelSettings
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import cli_env, write

REPO = Path(__file__).resolve().parents[2]


def serve(answers, *, close_after=None):
    """Run `test(port, seen)` against a server that answers the n-th request on a connection with the raw
    bytes `answers(n, body)`; `seen` records (connection number, request body) per request."""

    async def run(test):
        seen, connections = [], [0]

        async def handle(reader, writer):
            connections[0] += 1
            number, served = connections[0], 0
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                    body = await reader.readexactly(length)
                    seen.append((number, body))
                    writer.write(answers(served, body))
                    await writer.drain()
                    served += 1
                    if close_after is not None and served >= close_after:
                        break
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await test(port, seen)
        finally:
            server.close()

    return run


def sized(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def test_keep_alive_answers_by_length_on_one_connection():
    async def test(port, seen):
        pool = Pool("127.0.0.1", port)
        answers = [await pool.post("/v1/chat", {"Content-Type": "application/json"}, b'{"n": %d}' % i, 5)
                   for i in range(3)]
        pool.close()
        return answers, seen

    answers, seen = asyncio.run(serve(lambda n, body: sized(b'{"echo": ' + body + b"}"))(test))
    assert [json.loads(a.body) for a in answers] == [{"echo": {"n": i}} for i in range(3)]
    assert [a.status for a in answers] == [200] * 3 and answers[0].headers["content-type"] == "application/json"
    assert [number for number, _ in seen] == [1, 1, 1]  # one connection for all three


def test_chunks_a_100_continue_and_a_body_that_ends_with_the_connection():
    chunked = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               b"4\r\n{\"a\"\r\n6;ext=1\r\n: 1, \"\r\n5\r\nb\": 2\r\n1\r\n}\r\n0\r\n\r\n")
    to_the_close = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"closed\": true}"

    async def test(port, seen):
        pool = Pool("127.0.0.1", port)
        first = await pool.post("/", {}, b"1", 5)
        second = await pool.post("/", {}, b"2", 5)  # the first connection was closed: a new one
        pool.close()
        return first, second, seen

    first, second, seen = asyncio.run(serve(lambda n, body: chunked if body == b"1" else to_the_close,
                                            close_after=1)(test))
    assert json.loads(first.body) == {"a": 1, "b": 2}
    assert json.loads(second.body) == {"closed": True}
    assert [number for number, _ in seen] == [1, 2]


def test_connection_close_and_a_connection_closed_while_idle_are_not_used_again():
    async def test(port, seen):
        pool = Pool("127.0.0.1", port)
        await pool.post("/", {}, b"a", 5)  # answered with Connection: close
        await pool.post("/", {}, b"b", 5)  # a new connection, which the server closes after answering
        await asyncio.sleep(0.2)  # ... while it is idle in the pool
        await pool.post("/", {}, b"c", 5)
        pool.close()
        return seen

    def answers(n, body):
        return sized(b"{}", "Connection: close\r\n") if body == b"a" else sized(b"{}")

    seen = asyncio.run(serve(answers, close_after=1)(test))
    assert [(number, body) for number, body in seen] == [(1, b"a"), (2, b"b"), (3, b"c")]


def test_a_server_that_hangs_up_garbage_and_silence():
    async def test(port, seen):
        pool = Pool("127.0.0.1", port)
        outcomes = []
        for body, timeout in ((b"hang up", 5), (b"garbage", 5), (b"silence", 0.3)):
            try:
                await pool.post("/", {}, body, timeout)
            except Exception as exc:
                outcomes.append(type(exc))
        pool.close()
        return outcomes

    def answers(n, body):
        if body == b"hang up":
            raise ConnectionResetError  # the handler ends: the connection closes without an answer
        return b"SMTP ready\r\n\r\n" if body == b"garbage" else b""

    outcomes = asyncio.run(serve(answers)(test))
    assert outcomes == [Disconnected, BadAnswer, asyncio.TimeoutError]


def test_a_refused_connection_is_an_os_error():
    async def test():
        with pytest.raises(OSError):
            await Pool("127.0.0.1", 9).post("/", {}, b"{}", 5)

    asyncio.run(test())


def test_a_live_run_against_plain_http_never_imports_aiohttp(tmp_path):
    """aiohttp's import is 0.1-0.2 s of CPU: a run that needs no TLS and no proxy does without it."""
    with FakeOpenAI(default=lambda request: "It is 21 degrees.") as fake:
        write(tmp_path / "evalrun.yaml", f"""
            embeddings: {{enabled: false}}
            agents: {{bot: {{type: model, model: openai/fake, api_base: "{fake.base_url}", cache: false}}}}
            """)
        write(tmp_path / "suites" / "c.yaml", """
            id: c
            starting_sentence: Weather?
            goal_details: [{type: text, name: answer, keywords: ['21']}]
            """)
        script = ("import sys; from runner.frontends.cli import main; code = main(['suites', '-q', '--output-dir', 'out']); "
                  "print('aiohttp' in sys.modules, code)")
        result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=cli_env(), capture_output=True,
                                text=True, timeout=120)
        assert len(fake.requests) == 1
    assert result.stdout.strip().splitlines()[-1] == "False 0", result.stdout + result.stderr


def test_a_key_with_a_line_break_is_refused_before_anything_is_sent(monkeypatch):
    """A header value with a line break would end the header early (aiohttp raised a ValueError, an internal
    error): the call fails with the reason, the key itself never shown, and no request leaves."""
    monkeypatch.setenv("WIRE_TEST_KEY", "sk-canary-7f3a\nX-Injected: 1")
    with FakeOpenAI() as fake:
        client = LLMClient(ModelSettings(model="openai/fake", api_base=fake.base_url, api_key_env="WIRE_TEST_KEY",
                                         cache=False), role="judge", runtime=LLMRuntime())
        with pytest.raises(LLMError) as error:
            client.complete([{"role": "user", "content": "hi"}])
        assert fake.requests == []
    assert error.value.reason == ("the API key of openai/fake (judge) holds a line break: check the variable's "
                                  "value")


def test_an_answer_past_the_size_limit_is_not_read_on(monkeypatch):
    """A broken or hostile server must not fill the run's memory: a Content-Length past MAX_BODY is refused at
    once, and a body that ends with the connection is cut off once it passes the limit."""
    import runner.llm.http1 as http1

    monkeypatch.setattr(http1, "MAX_BODY", 1000)
    endless = b"HTTP/1.0 200 OK\r\n\r\n" + b"x" * 200_000  # no length: the body would end with the connection

    async def test(port, seen):
        outcomes = []
        for body in (b"declared", b"endless", b"fine"):
            pool = Pool("127.0.0.1", port)
            try:
                outcomes.append((await pool.post("/", {}, body, 5)).body)
            except BadAnswer as exc:
                outcomes.append(str(exc))
            pool.close()
        return outcomes

    def answers(n, body):
        return {b"declared": sized(b"{}").replace(b"Content-Length: 2", b"Content-Length: 1001"),
                b"endless": endless}.get(body, sized(b"{}"))

    assert asyncio.run(serve(answers)(test)) == ["an answer longer than 0 MiB"] * 2 + [b"{}"]
