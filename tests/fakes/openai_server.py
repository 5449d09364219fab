"""A fake OpenAI-compatible chat server on 127.0.0.1, so tests exercise litellm over real HTTP.

    with FakeOpenAI() as fake:
        fake.script('{"match": true}', Reply(status=500), Reply(status=429, headers={"Retry-After": "1"}))
        fake.script(Reply(tool_calls=[tool_call("get_weather", {"city": "Paris"})]))
        ... api_base=fake.base_url ...
        assert len(fake.requests) == 2

Scripted replies are served in order; once they run out, `default(request_json)` answers: it returns
the content string or a whole `Reply`. Faults a client must survive are one field away: `status`
(429/500/...), `headers` (Retry-After), `delay_s` (slow answer), `trickle_s` (the body one byte at a
time), `drop` (close the connection without a word), `body="{not json"` (malformed body),
`echo_auth` (the error message repeats the Authorization header, as careless providers do). Replies a
real model gives are as near: prose (any `content`), a reply cut at max_tokens
(`finish_reason="length"`), one withheld by a content filter (`finish_reason="content_filter"`,
`content=None`), a refusal (`refusal="..."`, as OpenAI's structured outputs give it).
Only non-streaming POST /v1/chat/completions is served; anything else is 404 (or 400 for stream).
Every request body is kept in `requests` (and its headers, names in lower case, in `request_headers`); `in_flight` and
`max_in_flight` count requests being answered at once. Used as an HTTP proxy (a request for an absolute URL), it
answers as well and keeps the URL in `proxied`.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. `body` (dict or str) replaces the whole response body when given."""

    status: int = 200
    content: str | None = None
    body: dict | str | None = None
    delay_s: float = 0.0
    tool_calls: list[dict] | None = None  # OpenAI tool calls; the reply's finish_reason becomes "tool_calls"
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers, e.g. {"Retry-After": "2"}
    trickle_s: float = 0.0  # send the body one byte every trickle_s seconds
    drop: bool = False  # close the connection without answering
    echo_auth: bool = False  # put the request's Authorization header into the error message
    usage: dict | None = None  # replaces the default token usage
    finish_reason: str | None = None  # replaces "stop" (or "tool_calls"): "length", "content_filter"
    refusal: str | None = None  # the message's `refusal` field



def provider_faults(deadline_s: float = 0.5) -> list[Reply]:
    """One reply for every way a provider fails: 429 with Retry-After, 5xx, a dropped connection, a
    body that is not JSON, a body trickled past a `deadline_s` deadline, a reply with no verdict, and
    one that quotes a verdict amid prose."""
    return [
        Reply(status=429, content="slow down", headers={"Retry-After": "0"}),
        Reply(status=500, content="boom"),
        Reply(status=503, content="unavailable"),
        Reply(drop=True),
        Reply(body="{not json"),
        Reply(content="x", trickle_s=deadline_s / 10),  # ~200 bytes at this pace outlast the deadline
        Reply(content="I am not sure."),
        Reply(content='{"match": true, "score": 1, "reason": "equivalent"} as the answer says'),
    ]

def tool_call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    """An OpenAI-shaped tool call; dict arguments are JSON-encoded as the API does."""
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{name}_{time.time_ns()}", "type": "function",
            "function": {"name": name, "arguments": encoded}}


class FakeOpenAI:
    def __init__(self, default: Callable[[dict], str | Reply] | None = None):
        self.default = default
        self.requests: list[dict] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_times: list[float] = []  # time.time() as each request arrived: waits show in the gaps
        self.in_flight = 0
        self.max_in_flight = 0
        self.proxied: list[str] = []  # the URLs of requests sent to this server as a proxy
        self._queue: deque[str | Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True  # a handler still sleeping on a delay must not block shutdown
        server.block_on_close = False
        server.request_queue_size = 128  # concurrency tests open many connections at once
        self._server = server
        # a short poll interval keeps stop() (which waits for one poll) from adding 0.5 s per test
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeOpenAI is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scripting -------------------------------------------------------------------------------
    def script(self, *replies: str | Reply) -> FakeOpenAI:
        with self._lock:
            self._queue.extend(replies)
        return self

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            if self.default is None:
                # 418 is not retried by clients, so a test missing a reply fails at once and clearly
                return Reply(status=418, body={"error": {"message": "fake server has no scripted reply",
                                                         "type": "fake_exhausted"}})
            item = self.default(request)
        return Reply(content=item) if isinstance(item, str) else item

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


def completion_body(model: str, content: str | None, tool_calls: list[dict] | None = None,
                    usage: dict | None = None, finish_reason: str | None = None,
                    refusal: str | None = None) -> dict:
    """A minimal but complete chat.completion object, as the OpenAI API returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if refusal is not None:
        message["refusal"] = refusal
    return {
        "id": f"chatcmpl-fake-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
        }],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers; Content-Length is always sent
        disable_nagle_algorithm = True  # headers and body are two writes: with Nagle, each reply waited ~40 ms for an ACK

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path
            if path.startswith("http://"):  # absolute form: the client took this server for its HTTP proxy
                with fake._lock:
                    fake.proxied.append(path)
                path = "/" + path.split("/", 3)[3]
            if path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                request = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request"}})
                return
            with fake._lock:
                fake.requests.append(request)
                fake.request_times.append(time.time())
                fake.request_headers.append({name.lower(): value for name, value in self.headers.items()})
            if request.get("stream"):
                self._send(400, {"error": {"message": "the fake serves stream=false only", "type": "invalid_request"}})
                return
            fake._enter()
            left = False
            try:
                reply = fake._next_reply(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self._drop()
                    return
                if reply.body is not None:
                    body: dict | str = reply.body
                elif reply.status == 200:
                    body = completion_body(request.get("model", "fake"), reply.content, reply.tool_calls, reply.usage,
                                           reply.finish_reason, reply.refusal)
                else:
                    message = reply.content or f"fake error {reply.status}"
                    if reply.echo_auth:
                        message += f" (you sent Authorization: {self.headers.get('Authorization')})"
                    body = {"error": {"message": message, "type": "fake_error", "code": reply.status}}
                if not reply.trickle_s:  # answered: the client may send its next request as soon as the bytes land,
                    fake._leave()        # before this thread would count this one out
                    left = True
                self._send(reply.status, body, reply.headers, reply.trickle_s)
            finally:
                if not left:
                    fake._leave()

        def _drop(self) -> None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _send(self, status: int, body: dict | str, headers: dict[str, str] | None = None,
                  trickle_s: float = 0.0) -> None:
            data = (json.dumps(body) if isinstance(body, dict) else body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if trickle_s:
                    self.wfile.flush()
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(trickle_s)
                else:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (timeout test): nothing to deliver

    return Handler


def main() -> None:
    """Serve `ok` to every request after --delay seconds, in a process of its own (benchmarks: the
    server's work then does not share the measured process's interpreter lock). Prints the base URL."""
    import argparse

    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    options = parser.parse_args()
    fake = FakeOpenAI(default=lambda request: Reply(content="ok", delay_s=options.delay))
    fake.start()
    print(fake.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
