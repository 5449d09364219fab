"""The fast path: OpenAI-compatible /chat/completions over pooled keep-alive connections per endpoint and
event loop: evalrun's own small HTTP/1.1 client (http1.py) for plain http with no proxy, the usual case of a
model served on the machine or in the cluster; one aiohttp session for https and proxies. Plain JSON in and
out, no streaming, no per-call logging machinery: a call costs about a tenth of a millisecond of CPU here,
where litellm spends several.

Sessions and connections are closed with the loop that made them: each loop's pool registers an async generator whose
`finally` closes its sessions, and asyncio.run() finalises async generators before it closes the loop
(loop.shutdown_asyncgens), so no "Unclosed client session" is ever printed. The layer's own loop closes
its pool at exit (loop.py).
"""
from __future__ import annotations

import asyncio
import importlib
import json
import os
import threading
import weakref
from collections.abc import AsyncIterator
from concurrent.futures import Future
from typing import Any

from ..util.http_body import BodyTooLarge, BodyUndecodable, accept_encoding, decoded_body
from ..util.secrets import clip
from .calls import Completion, redact
from .errors import Failure, http_failure, short
from .http1 import KEEPALIVE_S, BadAnswer, Pool as Http1Pool
from .loop import at_layer_exit, run_aside
from .pricing import cost_of, facts_known, model_facts
from .wire import OPENAI_API_BASE, Answer, ChatRequest, api_key, tool_call_dict


class OpenAITransport:
    name = "openai"

    async def send(self, request: ChatRequest) -> Answer:
        s = request.settings
        base = base_url(s)
        key = api_key(s, request.role, fast=True)
        body: dict[str, Any] = {"model": wire_model_name(s.model), "messages": request.messages}
        if request.tools:
            body["tools"] = request.tools
        if request.response_format is not None:
            body["response_format"] = request.response_format
        body.update(request.params)
        if s.api_base is None and "max_tokens" in body:  # OpenAI's own name since the o-series; older servers know max_tokens only
            body["max_completion_tokens"] = body.pop("max_tokens")
        headers = {"Content-Type": "application/json", "Accept-Encoding": accept_encoding()}  # codings decoded bounded
        if key and ("\r" in key or "\n" in key):  # neither client can send it; aiohttp would raise a ValueError
            raise Failure(f"the API key of {s.model} ({request.role}) holds a line break: check the variable's value",
                          retryable=False)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        where = request.where
        try:
            data = json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate an agent wrote: JSON's \u escape carries it, UTF-8 cannot
            data = json.dumps(body).encode()
        plain = await plain_pool(base)
        if plain is not None:  # http:// with no proxy: the small client (http1.py)
            raw, status, reply_headers = await _post_plain(plain, base, data, headers, s.timeout_s, where)
        else:
            raw, status, reply_headers = await _post_aiohttp(base, data, headers, s.timeout_s, where)
        raw = _decoded(raw, reply_headers.get("content-encoding"), where)
        if status != 200:
            raise http_failure(status, where, short(redact(_error_detail(raw))), reply_headers)
        try:
            data = json.loads(raw)
        except ValueError:
            raise Failure(f"malformed reply from {where}: the body is not JSON", retryable=True) from None
        completion, usage = read_body(data, where)
        if not facts_known(s.model):  # the price list read once (ms): not on the loop
            await run_aside(model_facts, s.model)
        return Answer(completion, usage, cost_of(s.model, usage))


async def _post_plain(pool: Http1Pool, base: str, data: bytes, headers: dict, timeout_s: float,
                      where: str) -> tuple[bytes, int, Any]:
    try:
        answer = await pool.post(f"{pool_path(base)}/chat/completions", headers, data, timeout_s)
    except (asyncio.TimeoutError, TimeoutError):
        raise Failure(f"timed out after {timeout_s:g} s ({where})", retryable=True, outage=True) from None
    except BadAnswer as exc:
        raise Failure(f"malformed reply from {where}: {short(redact(str(exc)))}", retryable=True) from None
    except OSError as exc:
        raise Failure(f"cannot reach {where}: {short(redact(_transport_text(exc)))}", retryable=True,
                      outage=True) from None
    return answer.body, answer.status, answer.headers


async def _post_aiohttp(base: str, data: bytes, headers: dict, timeout_s: float, where: str) -> tuple[bytes, int, Any]:
    aiohttp = await aiohttp_module()
    session, proxy = await pool_session(base)
    try:
        async with session.post(f"{base}/chat/completions", data=data, headers=headers,
                                timeout=aiohttp.ClientTimeout(total=timeout_s), proxy=proxy) as response:
            return await _bounded_body(response, where), response.status, response.headers
    except (asyncio.TimeoutError, TimeoutError):
        raise Failure(f"timed out after {timeout_s:g} s ({where})", retryable=True, outage=True) from None
    except aiohttp.ClientError as exc:
        raise Failure(f"cannot reach {where}: {short(redact(_transport_text(exc)))}", retryable=True,
                      outage=True) from None


def _decoded(raw: bytes, content_encoding: str | None, where: str) -> bytes:
    """The answer as the server encoded it, decoded within the limit of its length (http1.MAX_BODY): a small
    compressed answer that inflates past it is never inflated whole (runner/util/http_body.py)."""
    from . import http1

    try:
        return decoded_body(raw, content_encoding, http1.MAX_BODY)
    except BodyTooLarge as exc:
        raise Failure(f"malformed reply from {where}: an answer longer than {http1.MAX_BODY // (1024 * 1024)} MiB once "
                      f"decoded (Content-Encoding: {exc.codings})", retryable=True) from None
    except BodyUndecodable as exc:
        raise Failure(f"malformed reply from {where}: {short(redact(str(exc)))}", retryable=True) from None


async def _bounded_body(response: Any, where: str) -> bytes:
    """The answer's body as sent (the session does not decompress), read no further than the small client reads
    one (http1.MAX_BODY)."""
    from . import http1

    too_long = Failure(f"malformed reply from {where}: an answer longer than {http1.MAX_BODY // (1024 * 1024)} MiB",
                       retryable=True)
    if (response.content_length or 0) > http1.MAX_BODY:
        raise too_long
    body = bytearray()
    async for chunk in response.content.iter_chunked(1 << 16):
        body += chunk
        if len(body) > http1.MAX_BODY:
            raise too_long
    return bytes(body)


def base_url(settings: Any) -> str:
    """Where the model's requests go: its api_base, else OPENAI_BASE_URL (as the SDK reads it), else OpenAI's."""
    return (settings.api_base or os.environ.get("OPENAI_BASE_URL") or OPENAI_API_BASE).rstrip("/")


def needs_aiohttp(settings: Any) -> bool:
    """Whether this model's requests go over aiohttp (https, or through a proxy) rather than the small client."""
    return not takes_plain_http(base_url(settings))


def wire_model_name(model: str) -> str:
    """The name the server is sent: the model without its provider prefix ("openai/gpt-4o" -> "gpt-4o")."""
    return model.split("/", 1)[1] if "/" in model else model


def read_body(data: Any, where: str) -> tuple[Completion, dict]:
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        message = None
    if not isinstance(message, dict):
        raise Failure(f"malformed reply from {where}: no message in it", retryable=True)
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text")
    elif content is not None and not isinstance(content, str):
        content = str(content)
    refusal = message.get("refusal")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return (Completion(content=content, tool_calls=[tool_call_dict(c) for c in message.get("tool_calls") or []],
                       finish_reason=choice.get("finish_reason"),
                       refusal=refusal if isinstance(refusal, str) and refusal else None),
            {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens")})


def _error_detail(raw: bytes) -> str:
    """The message of an OpenAI-style error body, else the start of the body (secrets masked before the cut)."""
    text = raw.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return clip(text, 300, "")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return error if isinstance(error, str) else clip(text, 300, "")


def _transport_text(exc: BaseException) -> str:
    cause = getattr(exc, "os_error", None) or exc.__cause__ or exc
    text = getattr(cause, "strerror", None) or str(cause)
    return text or type(exc).__name__


# -- aiohttp, imported once in a thread -------------------------------------------------------------

_import: Future | None = None
_import_lock = threading.Lock()


def start_import() -> Future:
    """Start importing aiohttp in a thread, once: it takes a few hundred ms (its TLS context included), which
    the first calls wait out without blocking the loop (other cases go on meanwhile)."""
    global _import
    with _import_lock:
        if _import is None:
            _import = Future()
            threading.Thread(target=_import_aiohttp, args=(_import,), name="evalrun-import-aiohttp",
                             daemon=True).start()
        return _import


def _import_aiohttp(future: Future) -> None:
    try:
        future.set_result(importlib.import_module("aiohttp"))
    except BaseException as exc:  # a broken installation: every call says so
        future.set_exception(exc)


async def aiohttp_module() -> Any:
    future = start_import()
    if not future.done():
        await asyncio.wrap_future(future)
    return future.result()


# -- one pool of sessions per event loop -----------------------------------------------------------

class _Pool:
    def __init__(self) -> None:
        self.sessions: dict[str, tuple[Any, str | None]] = {}
        self.plain: dict[str, Http1Pool | None] = {}  # base URL -> its small-client pool; None: aiohttp's
        self.closer: AsyncIterator[None] | None = None

    async def close(self) -> None:
        plain, self.plain = [pool for pool in self.plain.values() if pool is not None], {}
        for pool in plain:
            pool.close()
        sessions, self.sessions = [session for session, _ in self.sessions.values()], {}
        for session in sessions:
            await session.close()


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()


async def _loop_pool() -> _Pool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        at_layer_exit(close_pool)  # the layer's loop never ends by asyncio.run: it closes its pool at exit
        pool = _pools[loop] = _Pool()
        pool.closer = _closes_with_the_loop(pool)
        await pool.closer.__anext__()  # registered with the loop: finalised by shutdown_asyncgens
    return pool


def takes_plain_http(base: str) -> bool:
    """Whether requests to `base` go over the small client: plain http, and no proxy named for it."""
    return base.startswith("http://") and proxy_for(base) is None


def pool_path(base: str) -> str:
    """The path part of a base URL ("http://host:8000/v1" -> "/v1")."""
    import urllib.parse

    return urllib.parse.urlsplit(base).path.rstrip("/")


async def plain_pool(base: str) -> Http1Pool | None:
    """This loop's small-client pool for `base`, or None when `base` needs aiohttp (https, a proxy)."""
    pool = await _loop_pool()
    if base not in pool.plain:
        pool.plain[base] = None
        if takes_plain_http(base):
            import urllib.parse

            parts = urllib.parse.urlsplit(base)
            pool.plain[base] = Http1Pool(parts.hostname or "localhost", parts.port or 80)
    return pool.plain[base]


async def pool_session(base: str) -> tuple[Any, str | None]:
    """This loop's session for `base`, made on first use, and the proxy to reach it through (HTTP(S)_PROXY,
    NO_PROXY), worked out once: aiohttp's own trust_env does it again for every request, in a thread."""
    pool = await _loop_pool()
    entry = pool.sessions.get(base)
    if entry is None or entry[0].closed:
        aiohttp = await aiohttp_module()
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEPALIVE_S)  # the run's limiter bounds requests
        # bodies arrive as sent and are decoded within a limit (_decoded): aiohttp's own decoding is bounded only in
        # its recent versions
        entry = pool.sessions[base] = (aiohttp.ClientSession(connector=connector, auto_decompress=False),
                                       proxy_for(base))
    return entry


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (as curl and the OpenAI SDK read it), or None."""
    if not any(value and name.lower().endswith("_proxy") for name, value in os.environ.items()):
        return None  # what urllib's reading of the environment finds then: no proxy (and 3 ms of import saved)
    import urllib.parse
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    parsed = urllib.parse.urlsplit(url)
    proxy = proxies.get(parsed.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(parsed.hostname or "", proxies):  # type: ignore[attr-defined]  # not in typeshed
        return None
    return proxy


async def _closes_with_the_loop(pool: _Pool) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await pool.close()


async def close_pool() -> None:
    """Close this loop's sessions now (for loops that are not ended by asyncio.run)."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()
        if pool.closer is not None:
            await pool.closer.aclose()  # type: ignore[attr-defined]
