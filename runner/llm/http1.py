"""A small HTTP/1.1 client for plain-http servers (a model on localhost, in the cluster, behind no proxy).

It does the one thing the fast path asks, a POST of a JSON body and the whole answer back, over keep-alive
connections pooled per host and event loop, as asyncio protocols. A request costs a third of aiohttp's CPU
here, and nothing is imported: aiohttp's import is 0.1-0.2 s of CPU, a tenth of a 1,280-call live run. TLS,
proxies and everything else stay with aiohttp (openai_fast.py picks).

Answers are read by Content-Length, as chunks (Transfer-Encoding: chunked), or up to the close of the
connection. A connection is used again unless the server says `Connection: close`; one left idle for
KEEPALIVE_S (below the usual servers' idle timeouts) or closed by the server meanwhile is not. A connection
that fails is the caller's failure (the retry loop's), as with aiohttp: a request is never sent twice here.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque

from ..util.secrets import redact

KEEPALIVE_S = 4.0  # below the usual servers' idle timeout (uvicorn 5 s), so a pooled connection is never stale
MAX_HEAD = 64 * 1024  # a status line and headers longer than this are not an HTTP answer
MAX_BODY = 64 * 1024 * 1024  # no model's answer is this long: past it, a broken or hostile server is not read on


class Disconnected(OSError):
    """The server closed the connection before its answer was complete."""


class BadAnswer(OSError):
    """What came back is not an HTTP/1.x answer."""


class Answer:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future | None = None
        self.closed = False
        self.idle_since = 0.0
        self._reset()

    def _reset(self) -> None:
        self.buffer = bytearray()
        self.head: tuple[int, dict[str, str]] | None = None
        self.body_at = 0
        self.length: int | None = None
        self.chunked = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None or self.waiter.done():
            return
        try:
            if self.head is not None and len(self.buffer) - self.body_at > MAX_BODY + 64 * 1024:  # chunk framing
                raise BadAnswer(_too_long())
            answer = self._complete()
        except BadAnswer as exc:
            self._fail(exc)
            return
        if answer is not None:
            self.waiter.set_result(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        if self.head is not None and self.length is None and not self.chunked:  # the body ends with the connection
            status, headers = self.head
            waiter.set_result(Answer(status, headers, bytes(self.buffer[self.body_at:])))
            return
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) if exc else ""
        waiter.set_exception(Disconnected(reason or "the server closed the connection before answering"))

    # -- one exchange
    def send(self, request: bytes) -> asyncio.Future:
        self._reset()
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)  # type: ignore[union-attr]
        return self.waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, exc: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)
        self.abort()

    def _complete(self) -> Answer | None:
        """The answer once it is all in the buffer, else None."""
        while self.head is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise BadAnswer("an HTTP header block longer than 64 KiB")
                return None
            status, headers = _read_head(bytes(self.buffer[:end]))
            if 100 <= status < 200:  # 100 Continue and the like: the answer follows
                del self.buffer[:end + 4]
                continue
            self.head, self.body_at = (status, headers), end + 4
            self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            if not self.chunked and "content-length" in headers:
                try:
                    self.length = int(headers["content-length"])
                except ValueError:
                    raise BadAnswer(f"Content-Length {headers['content-length']!r}") from None
                if self.length > MAX_BODY:
                    raise BadAnswer(_too_long())
        status, headers = self.head
        if self.chunked:
            body = _dechunked(self.buffer, self.body_at)
            return None if body is None else Answer(status, headers, body)
        if self.length is not None and len(self.buffer) - self.body_at >= self.length:
            return Answer(status, headers, bytes(self.buffer[self.body_at:self.body_at + self.length]))
        return None


def _too_long() -> str:
    return f"an answer longer than {MAX_BODY // (1024 * 1024)} MiB"


def _read_head(block: bytes) -> tuple[int, dict[str, str]]:
    lines = block.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise BadAnswer(f"not an HTTP answer: {redact(lines[0])[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


def _dechunked(buffer: bytearray, at: int) -> bytes | None:
    """The body of a chunked answer starting at `at`, or None while the last chunk has not arrived."""
    body = bytearray()
    while True:
        end = buffer.find(b"\r\n", at)
        if end < 0:
            return None
        size_text = bytes(buffer[at:end]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BadAnswer(f"a chunk size of {redact(size_text.decode('latin-1'))[:20]!r}") from None
        if size == 0:  # trailers (rare) end with an empty line
            return bytes(body) if buffer.find(b"\r\n\r\n", end) >= 0 or buffer.endswith(b"0\r\n\r\n") else None
        start = end + 2
        if len(buffer) < start + size + 2:
            return None
        body += buffer[start:start + size]
        at = start + size + 2


class Pool:
    """Keep-alive connections to one host:port on one event loop."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.idle: deque[_Connection] = deque()
        self.host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # an IPv6 address in brackets

    async def post(self, path: str, headers: dict[str, str], body: bytes, timeout: float) -> Answer:
        """POST `body` to `path`; the whole answer. TimeoutError past `timeout` seconds (connecting included),
        OSError when the server cannot be reached or closes the connection before answering."""
        loop = asyncio.get_running_loop()
        if any("\r" in value or "\n" in value for value in headers.values()):
            raise ValueError("a header value holds a line break")  # it would end the header early
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (f"POST {path} HTTP/1.1\r\nHost: {self.host_header}\r\nContent-Length: {len(body)}\r\n{head}\r\n"
                   .encode() + body)
        deadline = loop.time() + timeout
        connection = self._idle_connection() or await self._connect(deadline - loop.time())
        answer = await self._exchange(loop, connection, request, deadline)
        self._release(connection, answer)
        return answer

    def _idle_connection(self) -> _Connection | None:
        now = time.monotonic()
        while self.idle:
            connection = self.idle.pop()  # the most recently used: the least likely to be closed by the server
            if not connection.closed and now - connection.idle_since < KEEPALIVE_S:
                return connection
            connection.close()
        return None

    async def _connect(self, timeout: float) -> _Connection:
        loop = asyncio.get_running_loop()
        if timeout <= 0:
            raise asyncio.TimeoutError()
        _, connection = await asyncio.wait_for(loop.create_connection(_Connection, self.host, self.port), timeout)
        return connection

    async def _exchange(self, loop: asyncio.AbstractEventLoop, connection: _Connection, request: bytes,
                        deadline: float) -> Answer:
        waiter = connection.send(request)
        timer = loop.call_at(deadline, _time_out, waiter)
        try:
            return await waiter
        except BaseException:  # timed out, cancelled, disconnected: this connection is in an unknown state
            connection.abort()
            raise
        finally:
            timer.cancel()

    def _release(self, connection: _Connection, answer: Answer) -> None:
        connection.waiter = None
        if connection.closed or answer.headers.get("connection", "").lower() == "close":
            connection.close()
            return
        connection.idle_since = time.monotonic()
        self.idle.append(connection)

    def close(self) -> None:
        while self.idle:
            self.idle.pop().close()


def _time_out(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_exception(asyncio.TimeoutError())
