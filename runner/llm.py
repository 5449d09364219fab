"""The one LLM layer (the only module that imports litellm): the judge, the user simulator and `model`
agent targets all call models through it.

- `LLMClient.acomplete` is the async core; `LLMClient.complete` is a blocking facade that worker
  threads (scoring runs in asyncio.to_thread) and plain scripts may call.
- One `LLMRuntime` per run holds what the whole run shares: the concurrency limit (`-j`), which
  backs off while the provider answers 429; the disk cache; the circuit breakers that mark a model
  down after repeated failures; the running totals of calls.
- Every call is recorded (`LLMCall`) into the list opened by `record_calls()` for the current case.
- The values of `api_key_env` variables are removed from every reason this module writes.

litellm is imported lazily, on the first call: it takes seconds to import, and most runs never call a model.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import hashlib
import json
import os
import random
import re
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from .atomic import write_text_atomically

if TYPE_CHECKING:  # the Jinja environment is only needed once a judge is built
    from runner.prompts import PromptLibrary

Role = Literal["agent", "simulator", "judge"]

SEMANTIC_MATCH_PROMPT = "semantic_match.j2"
DEFAULT_CONCURRENCY = 8
BACKOFF_BASE_S = 0.5  # retry n waits about BACKOFF_BASE_S * 2**n (with jitter) unless the server says otherwise
BACKOFF_CAP_S = 20.0
BREAKER_THRESHOLD = 3  # consecutive failed calls (each after its retries) that mark a model down for the run
DUMMY_API_KEY = "not-needed"  # local OpenAI-compatible servers ignore the key, but the SDK insists on one
REDACTED = "[redacted]"


# ================================================================ settings


class ModelSettings(BaseModel):
    """How to reach a model: the judge, the user simulator, or a `model` agent target."""

    model_config = ConfigDict(
        extra="forbid", title="Model",
        json_schema_extra={"description": "A model reached through litellm.",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    model: str = Field(
        title="Model", description="Any litellm model string: provider/model.",
        examples=["openai/gpt-4o-mini", "ollama/llama3.1"])
    api_base: Optional[str] = Field(
        None, title="API base URL", description="The server to call, for local or self-hosted OpenAI-compatible servers.",
        examples=["http://localhost:8000/v1"])
    api_key_env: Optional[str] = Field(
        None, title="API key variable",
        description="Name of the environment variable that holds the API key (the key itself never goes in the file, "
        "and its value is removed from every error evalrun reports).",
        examples=["OPENAI_API_KEY"])
    temperature: Optional[float] = Field(
        None, ge=0, title="Temperature", description="Sampling temperature; unset uses the provider's default.",
        examples=[0.7])
    timeout_s: float = Field(
        30, gt=0, title="Timeout (seconds)",
        description="One deadline for the whole of one request, reading the reply included: a server that "
        "answers slowly byte by byte is cut off at this point and the request counts as failed.",
        examples=[30])
    max_retries: int = Field(
        3, ge=0, title="Retries",
        description="Retries after a rate limit (429), a server error (5xx), a timeout, a dropped connection or a "
        "malformed reply, with exponential back-off and jitter, honouring the server's Retry-After.",
        examples=[3])
    max_retry_wait_s: float = Field(
        60, ge=0, title="Longest wait for retries (seconds)",
        description="The most time one call may spend waiting between its retries in total; a Retry-After "
        "longer than what is left ends the call at once.", examples=[60])
    max_concurrency: Optional[int] = Field(
        None, ge=1, title="Concurrent requests",
        description="At most this many requests to this model at once, on top of the run's limit (-j).",
        examples=[4])
    cache: bool = Field(
        True, title="Cache replies",
        description="Keep accepted replies on disk (under cache_dir) so that re-runs ask the model only new questions.",
        examples=[True])
    extra: dict[str, Any] = Field(
        default_factory=dict, title="Extra parameters",
        description="Passed as they are to litellm (for example max_tokens or a provider option).",
        examples=[{"max_tokens": 200}])

    def model_post_init(self, _context: Any) -> None:
        if self.api_key_env:
            _SECRET_ENV_NAMES.add(self.api_key_env)


class JudgeSettings(ModelSettings):
    """How to reach the judge model (the `judge` section of evalrun.yaml)."""

    model_config = ConfigDict(
        extra="forbid", title="LLM judge",
        json_schema_extra={"description": "The model that judges semantic matches first in the fuzzy cascade.",
                           "examples": [{"model": "openai/gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"}]})

    temperature: Optional[float] = Field(
        0.0, ge=0, title="Temperature", description="Sampling temperature; 0 keeps verdicts repeatable.", examples=[0.0])
    offline_fallback: bool = Field(
        False, title="Offline stages may stand in",
        description="When the judge fails (unreachable, rate limited, malformed replies), the offline stages "
        "(embeddings, rapidfuzz) decide in its place. false: they still decide, the verdict says so, and a run "
        "whose outcome rests on such a verdict exits 3.", examples=[False])
    structured_output: Literal["auto", "always", "never"] = Field(
        "auto", title="Structured output",
        description="Ask for the verdict as JSON that follows a schema (response_format). auto: when litellm "
        "knows the model supports it and no api_base is set; always: also for an OpenAI-compatible server that "
        "supports it; never: plain text, the verdict read from the judge's final JSON object.",
        examples=["auto"])


# ================================================================ errors, secrets


class LLMError(Exception):
    """A model call failed; `.reason` is a short message fit for a report (secrets removed)."""

    def __init__(self, reason: str, call: Optional["LLMCall"] = None):
        reason = redact(reason)
        super().__init__(reason)
        self.reason = reason
        self.call = call


_SECRET_ENV_NAMES: set[str] = set()


def redact(text: str) -> str:
    """`text` with the value of every `api_key_env` variable seen so far replaced by [redacted]."""
    for name in tuple(_SECRET_ENV_NAMES):
        value = os.environ.get(name)
        if value and len(value) >= 4 and value in text:  # a 1-3 character "key" would redact half the text
            text = text.replace(value, REDACTED)
    return text


# ================================================================ call records


class LLMCall(BaseModel):
    """One call to a model, as the report shows it."""

    role: str = Field(description="Who called: agent, simulator or judge")
    model: str
    latency_s: float = Field(description="Wall time of the call, retries and waits included")
    attempts: int = Field(0, description="Requests sent (0 when the cache or a marked-down model answered)")
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    cost_usd: Optional[float] = Field(None, description="From litellm's local price list; None when unknown")
    cached: bool = False
    error: Optional[str] = None


class CallTotals(BaseModel):
    calls: int = 0
    cached: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Optional[float] = Field(None, description="Sum of the known costs; None when no call had a price")
    latency_s: float = 0.0

    def add(self, call: LLMCall) -> None:
        self.calls += 1
        self.cached += call.cached
        self.errors += call.error is not None
        self.prompt_tokens += call.prompt_tokens or 0
        self.completion_tokens += call.completion_tokens or 0
        if call.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + call.cost_usd
        self.latency_s += call.latency_s


class CallSummary(CallTotals):
    by_role: dict[str, CallTotals] = Field(default_factory=dict)

    def add(self, call: LLMCall) -> None:
        super().add(call)
        self.by_role.setdefault(call.role, CallTotals()).add(call)


def summarize(calls: list[LLMCall]) -> CallSummary:
    """Totals of some calls (a case's, or a run's): counts, cache hits, tokens, cost, by role."""
    summary = CallSummary()
    for call in calls:
        summary.add(call)
    return summary


_current_calls: contextvars.ContextVar[Optional[list[LLMCall]]] = contextvars.ContextVar(
    "evalrun_llm_calls", default=None)


# Which repeat of a case (--repeat N) is running: 0 for the first. LLMClient reads it when a call does not
# name its own `repeat`, so the agent, the simulated user and the judge of repeat r each get their own
# cache slot without every layer passing the number along; a rerun replays the same N answers.
current_repeat: contextvars.ContextVar[int] = contextvars.ContextVar("evalrun_repeat", default=0)


@contextlib.contextmanager
def repeat_scope(repeat: int) -> Iterator[None]:
    """Model calls made in this context (and in tasks and threads it starts) belong to repeat `repeat`."""
    token = current_repeat.set(repeat)
    try:
        yield
    finally:
        current_repeat.reset(token)


@contextlib.contextmanager
def record_calls() -> Iterator[list[LLMCall]]:
    """Collect every call made in this context (a case): in this task, in tasks it starts, in
    asyncio.to_thread workers (they copy the context) and through the blocking facade."""
    calls: list[LLMCall] = []
    token = _current_calls.set(calls)
    try:
        yield calls
    finally:
        _current_calls.reset(token)


# ================================================================ completions


@dataclass
class Completion:
    """The assistant's reply: its text and OpenAI-shaped tool calls (arguments as JSON strings)."""

    content: Optional[str]
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: Optional[str] = None
    call: Optional[LLMCall] = None

    def message(self) -> dict:
        """The reply as an OpenAI chat message, ready to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message

    def _stored(self, usage: dict) -> dict:
        return {"content": self.content, "tool_calls": self.tool_calls, "finish_reason": self.finish_reason,
                "usage": usage}


# ================================================================ the run-wide limiter


class Limiter:
    """At most `limit` holders at once, across every thread and event loop of the process (agent calls
    run on the run's loop, blocking judge calls from scoring threads on the layer's own: one limit
    covers both).

    While the provider answers 429 the effective limit halves (at most once a second, never below 1);
    after as many successes in a row as the current limit it grows by one again, up to `limit`."""

    def __init__(self, limit: int):
        self.limit = max(1, int(limit))
        self.effective = self.limit
        self.in_use = 0
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()
        self._successes = 0
        self._last_throttle = 0.0
        self.throttled = 0  # how many times 429s halved the limit (for reports and tests)

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.in_use < self.effective and not self._waiters:
                self.in_use += 1
                return
            waiter = loop.create_future()
            self._waiters.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                if (loop, waiter) in self._waiters:
                    self._waiters.remove((loop, waiter))
                    raise
            if not waiter.cancelled():  # granted just before the cancellation: hand the slot on
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            self.in_use -= 1
            self._wake_locked()

    @contextlib.asynccontextmanager
    async def slot(self) -> Any:
        await self.acquire()
        try:
            yield
        finally:
            self.release()

    def throttle(self) -> None:
        with self._lock:
            now = time.monotonic()
            self._successes = 0
            if now - self._last_throttle >= 1.0:
                self._last_throttle = now
                self.effective = max(1, self.effective // 2)
                self.throttled += 1

    def recover(self) -> None:
        with self._lock:
            if self.effective >= self.limit:
                return
            self._successes += 1
            if self._successes >= self.effective:
                self._successes = 0
                self.effective += 1
                self._wake_locked()

    def _wake_locked(self) -> None:
        while self._waiters and self.in_use < self.effective:
            loop, waiter = self._waiters.popleft()
            self.in_use += 1
            try:
                loop.call_soon_threadsafe(self._grant, waiter)
            except RuntimeError:  # that loop is closed: its waiter is gone, the slot is free again
                self.in_use -= 1

    def _grant(self, waiter: asyncio.Future) -> None:
        if waiter.cancelled():
            self.release()
        else:
            waiter.set_result(None)


# ================================================================ circuit breaker


class Breaker:
    """Marks a model down for the rest of the run after BREAKER_THRESHOLD failed calls in a row, so
    the remaining calls fail at once (with the first reason) instead of each waiting out its retries."""

    def __init__(self, role: str, threshold: int = BREAKER_THRESHOLD):
        self.role = role
        self.threshold = threshold
        self.failures = 0
        self.first_reason: Optional[str] = None
        self.down: Optional[str] = None
        self._lock = threading.Lock()

    def failed(self, reason: str) -> None:
        with self._lock:
            self.failures += 1
            if self.first_reason is None:
                self.first_reason = reason
            if self.failures >= self.threshold and self.down is None:
                self.down = f"{self.role} marked down after {self.failures} failures: {self.first_reason}"

    def succeeded(self) -> None:
        with self._lock:
            if self.down is None:
                self.failures, self.first_reason = 0, None


# ================================================================ disk cache


class DiskCache:
    """Accepted replies under `root`, one file per request key. Writes go through a uniquely named
    temporary file and os.replace, so concurrent tasks, threads and processes never see half an entry
    and a killed run leaves only whole entries (plus, at worst, a stray temporary file)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict]:
        try:
            value = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or damaged: a miss
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict) -> None:
        try:
            write_text_atomically(self._path(key), json.dumps(value, ensure_ascii=False))
        except OSError:
            pass  # a full or read-only disk costs a repeated call next run, never this run's answer



def _cache_slot(repeat: int, sample: int) -> Any:
    """Which cached answer a request takes: its run repeat (the case's repeat_scope unless given), and
    within it the sample number when a check asks several times. Sample 0 keeps the plain repeat, so
    single answers are keyed as they always were."""
    repeat = repeat or current_repeat.get()
    return [repeat, sample] if sample else repeat


def request_key(settings: ModelSettings, messages: list[dict], tools: Optional[list[dict]],
                response_format: Any, params: dict, repeat: Any) -> str:
    """Everything that shapes the reply (and nothing else: not the key, not the timeout)."""
    material = {"model": settings.model, "api_base": settings.api_base, "messages": messages, "tools": tools,
                "response_format": response_format, "params": params, "repeat": repeat}
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


# ================================================================ the run


class LLMRuntime:
    """What one run shares across all its model calls. `configure()` makes one the current runtime."""

    def __init__(self, concurrency: int = DEFAULT_CONCURRENCY, cache_dir: Optional[Path] = None,
                 no_cache: bool = False):
        self.limiter = Limiter(concurrency)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.no_cache = no_cache
        self.totals = CallSummary()
        self._lock = threading.Lock()
        self._breakers: dict[tuple, Breaker] = {}
        self._model_limiters: dict[tuple, Limiter] = {}

    def client(self, settings: ModelSettings, role: Role, cache_dir: Optional[Path] = None) -> "LLMClient":
        return LLMClient(settings, cache_dir, role=role, runtime=self)

    def breaker(self, settings: ModelSettings, role: str) -> Breaker:
        with self._lock:
            return self._breakers.setdefault((role, settings.model, settings.api_base), Breaker(role))

    def model_limiter(self, settings: ModelSettings) -> Optional[Limiter]:
        if settings.max_concurrency is None:
            return None
        with self._lock:
            return self._model_limiters.setdefault((settings.model, settings.api_base, settings.max_concurrency),
                                                   Limiter(settings.max_concurrency))

    def record(self, call: LLMCall) -> None:
        with self._lock:
            self.totals.add(call)
        calls = _current_calls.get()
        if calls is not None:
            calls.append(call)

    def summary(self) -> CallSummary:
        with self._lock:
            return self.totals.model_copy(deep=True)

    def run_blocking(self, coroutine: Any) -> Any:
        """Run `coroutine` to its end from synchronous code, on the layer's own event loop thread.

        Never on the caller's loop: litellm runs part of every call in its loop's default executor,
        and the threads that block here are usually that executor's (scoring in asyncio.to_thread), so
        a few blocked scorers would starve the very calls they wait for. The limiter, cache and
        breakers are shared across loops, so the run-wide limit still holds."""
        future: Future = asyncio.run_coroutine_threadsafe(coroutine, _background_loop())
        return future.result()


_background: Optional[asyncio.AbstractEventLoop] = None
_background_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """The layer's own event loop, in a daemon thread: one per process, shared by every run."""
    global _background
    with _background_lock:
        if _background is None or _background.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="evalrun-llm", daemon=True).start()
            _background = loop
        return _background


_runtime: Optional[LLMRuntime] = None
_runtime_lock = threading.Lock()


def configure(concurrency: int = DEFAULT_CONCURRENCY, cache_dir: Optional[Path] = None,
              no_cache: bool = False) -> LLMRuntime:
    """Start a run: a fresh limit, cache setting, breakers and totals for every client built after this."""
    global _runtime
    with _runtime_lock:
        _runtime = LLMRuntime(concurrency, cache_dir, no_cache)
        return _runtime


def current_runtime() -> LLMRuntime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = LLMRuntime()
        return _runtime


# ================================================================ the client


_LITELLM: list[Any] = []  # the imported module, once imported


def _litellm() -> Any:
    if _LITELLM:
        return _LITELLM[0]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # must precede the import
    import logging

    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners on every error
    litellm.telemetry = False
    # litellm warns on its own logger when calls move between event loops (blocking calls from threads);
    # the run's console is not the place for it.
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    _LITELLM[:] = [litellm]
    return litellm


class _Failure(Exception):
    def __init__(self, reason: str, retryable: bool, retry_after: Optional[float] = None, status: Optional[int] = None):
        super().__init__(reason)
        self.reason, self.retryable, self.retry_after, self.status = reason, retryable, retry_after, status


class LLMClient:
    """Calls one model for one role. Clients are cheap; what must be shared lives in the runtime."""

    def __init__(self, settings: ModelSettings, cache_dir: Optional[Path] = None, *, role: Role = "judge",
                 runtime: Optional[LLMRuntime] = None):
        self.settings = settings
        self.role = role
        self.runtime = runtime or current_runtime()
        root = Path(cache_dir) if cache_dir is not None else self.runtime.cache_dir
        self.cache = DiskCache(root / "llm") if root is not None and settings.cache and not self.runtime.no_cache else None

    @property
    def where(self) -> str:
        return self.settings.api_base or f"the provider of {self.settings.model}"

    # -- public ----------------------------------------------------------------------------------
    async def acomplete(self, messages: list[dict], *, tools: Optional[list[dict]] = None,
                        response_format: Any = None, repeat: int = 0, sample: int = 0,
                        accept: Optional[Callable[[Completion], Any]] = None, **params: Any) -> Completion:
        """The model's reply to `messages`. `accept` (optional) raises LLMError for a reply that cannot
        be used: such a reply is neither returned nor cached. `repeat` numbers repeated runs of the
        same request (each has its own cache entry); 0 means the case's current repeat (repeat_scope).
        `sample` numbers several answers asked within one repeat (a judged check's samples): each
        (repeat, sample) pair has its own cache entry. Raises LLMError with the reason."""
        slot = _cache_slot(repeat, sample)
        try:
            completion = await self._call(messages, tools, response_format, slot, accept, params)
        except LLMError as error:
            if error.call is not None:
                self.runtime.record(error.call)
            raise
        assert completion.call is not None
        self.runtime.record(completion.call)
        return completion

    def complete(self, messages: list[dict], *, tools: Optional[list[dict]] = None, response_format: Any = None,
                 repeat: int = 0, sample: int = 0, accept: Optional[Callable[[Completion], Any]] = None,
                 **params: Any) -> Completion:
        """The blocking form of acomplete, for worker threads and scripts: the same limit, cache and
        breaker; the call is recorded in the caller's context."""
        slot = _cache_slot(repeat, sample)  # read here: the coroutine may run in another thread
        coroutine = self._call(messages, tools, response_format, slot, accept, params)
        try:
            completion = self.runtime.run_blocking(coroutine)
        except LLMError as error:
            if error.call is not None:
                self.runtime.record(error.call)
            raise
        self.runtime.record(completion.call)
        return completion

    # -- the call --------------------------------------------------------------------------------
    async def _call(self, messages: list[dict], tools: Optional[list[dict]], response_format: Any, repeat: Any,
                    accept: Optional[Callable[[Completion], Any]], extra_params: dict) -> Completion:
        s = self.settings
        started = time.monotonic()
        params: dict[str, Any] = {}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        params.update(s.extra)
        params.update(extra_params)

        def record(**fields: Any) -> LLMCall:
            return LLMCall(role=self.role, model=s.model, latency_s=time.monotonic() - started, **fields)

        key = request_key(s, messages, tools, response_format, params, repeat) if self.cache else ""
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                completion = _completion_from_stored(stored)
                if completion is not None and _accepts(accept, completion):
                    completion.call = record(cached=True, prompt_tokens=0, completion_tokens=0, cost_usd=0.0)
                    return completion

        breaker = self.runtime.breaker(s, self.role)  # after the cache: a known answer needs no live model
        if breaker.down is not None:
            raise LLMError(breaker.down, record(error=redact(breaker.down)))

        attempts = 0
        try:
            completion, usage, cost = await self._with_retries(messages, tools, response_format, params, started)
        except _GaveUp as gave_up:
            breaker.failed(gave_up.reason)
            raise LLMError(gave_up.reason, record(attempts=gave_up.attempts, error=redact(gave_up.reason))) from None
        attempts = completion.call.attempts if completion.call else 1
        call = record(attempts=attempts, prompt_tokens=usage.get("prompt_tokens"),
                      completion_tokens=usage.get("completion_tokens"), cost_usd=cost)
        if accept is not None:
            try:
                accept(completion)
            except LLMError as error:
                breaker.failed(error.reason)
                call.error = error.reason
                raise LLMError(error.reason, call) from None
        breaker.succeeded()
        completion.call = call
        if self.cache is not None:
            self.cache.put(key, completion._stored(usage))
        return completion

    async def _with_retries(self, messages: list[dict], tools: Optional[list[dict]], response_format: Any,
                            params: dict, started: float) -> tuple[Completion, dict, Optional[float]]:
        s = self.settings
        limiter, own = self.runtime.limiter, self.runtime.model_limiter(s)
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            try:
                if own is not None:
                    await own.acquire()
                try:
                    async with limiter.slot():
                        response = await self._request(messages, tools, response_format, params)
                finally:
                    if own is not None:
                        own.release()
                completion, usage, cost = self._read(response)
                limiter.recover()
                completion.call = LLMCall(role=self.role, model=s.model, latency_s=0.0, attempts=attempt)
                return completion, usage, cost
            except _Failure as failure:
                if failure.status == 429:
                    limiter.throttle()
                suffix = f" (after {attempt} attempts)" if attempt > 1 else ""
                if not failure.retryable or attempt > s.max_retries:
                    raise _GaveUp(failure.reason + suffix, attempt) from None
                wait = failure.retry_after
                if wait is None:
                    wait = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
                if waited + wait > s.max_retry_wait_s:
                    asked = f"the server asked to wait {wait:g} s" if failure.retry_after is not None else \
                        f"the next wait ({wait:.1f} s)"
                    raise _GaveUp(f"{failure.reason}{suffix}; {asked}, more than the {s.max_retry_wait_s:g} s "
                                  "left for retries (max_retry_wait_s)", attempt) from None
                waited += wait
                await asyncio.sleep(wait)

    async def _request(self, messages: list[dict], tools: Optional[list[dict]], response_format: Any,
                       params: dict) -> Any:
        s = self.settings
        arguments: dict[str, Any] = dict(
            model=s.model, messages=messages, api_base=s.api_base, api_key=self._api_key(),
            timeout=s.timeout_s, num_retries=0, max_retries=0,  # we retry ourselves; max_retries stops the SDK's own
        )
        if tools:
            arguments["tools"] = tools
            # litellm routes calls with tools through its MCP gateway check, which imports the optional
            # `mcp` package; plain function tools never need it.
            arguments["_skip_mcp_handler"] = True
        if response_format is not None:
            arguments["response_format"] = response_format
        arguments.update(params)  # a parameter the caller gives wins over ours instead of failing as a duplicate
        # The first import takes seconds: in a thread, so the run's other cases go on meanwhile.
        litellm = _LITELLM[0] if _LITELLM else await asyncio.to_thread(_litellm)
        try:
            # The SDK's timeout is per read: a server trickling one byte a second never trips it. This one
            # bounds the whole request.
            return await asyncio.wait_for(litellm.acompletion(**arguments), timeout=s.timeout_s)
        except asyncio.TimeoutError:
            raise _Failure(f"timed out after {s.timeout_s:g} s ({self.where})", retryable=True) from None
        except _Failure:
            raise
        except Exception as exc:  # litellm maps provider errors to its own types; classify them here
            raise self._classified(litellm, exc) from None

    def _read(self, response: Any) -> tuple[Completion, dict, Optional[float]]:
        try:
            choice = response.choices[0]
            message = choice.message
        except (AttributeError, IndexError, TypeError):
            raise _Failure(f"malformed reply from {self.where}: no message in it", retryable=True) from None
        content = getattr(message, "content", None)
        if content is not None and not isinstance(content, str):
            content = str(content)
        tool_calls = [_tool_call_dict(call) for call in (getattr(message, "tool_calls", None) or [])]
        usage_object = getattr(response, "usage", None)
        usage = {"prompt_tokens": getattr(usage_object, "prompt_tokens", None),
                 "completion_tokens": getattr(usage_object, "completion_tokens", None)}
        return (Completion(content=content, tool_calls=tool_calls, finish_reason=getattr(choice, "finish_reason", None)),
                usage, _cost(response))

    def _classified(self, litellm: Any, exc: Exception) -> _Failure:
        where = self.where
        detail = _short(redact(str(exc)))
        if isinstance(exc, litellm.Timeout):
            return _Failure(f"timed out after {self.settings.timeout_s:g} s ({where})", retryable=True)
        if _in_chain(exc, lambda e: isinstance(e, json.JSONDecodeError)):
            return _Failure(f"malformed reply from {where}: the body is not JSON", retryable=True)
        network = _network_error(exc)
        if network is not None or isinstance(exc, litellm.APIConnectionError):
            # litellm reports a refused or dropped connection as an HTTP 500; the cause is deeper in the chain
            text = _short(redact(str(network))) if network is not None else detail
            return _Failure(f"cannot reach {where}: {text or type(network).__name__}", retryable=True)
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            message = f"HTTP {status} from {where}: {detail}"
            retryable = status == 429 or status >= 500
            return _Failure(message, retryable=retryable, retry_after=_retry_after(exc) if retryable else None,
                            status=status)
        return _Failure(f"{type(exc).__name__} calling {where}: {detail}", retryable=False)

    def _api_key(self) -> Optional[str]:
        name = self.settings.api_key_env
        if name:
            value = os.environ.get(name)
            if not value:
                raise _Failure(f"environment variable {name} ({self.role} api_key_env) is not set", retryable=False)
            return value
        return DUMMY_API_KEY if self.settings.api_base else None


class _GaveUp(Exception):
    def __init__(self, reason: str, attempts: int):
        super().__init__(reason)
        self.reason, self.attempts = reason, attempts


def _accepts(accept: Optional[Callable[[Completion], Any]], completion: Completion) -> bool:
    if accept is None:
        return True
    try:
        accept(completion)
    except LLMError:
        return False
    return True


def _completion_from_stored(stored: dict) -> Optional[Completion]:
    content, tool_calls = stored.get("content"), stored.get("tool_calls") or []
    if (content is not None and not isinstance(content, str)) or not isinstance(tool_calls, list):
        return None
    return Completion(content=content, tool_calls=tool_calls, finish_reason=stored.get("finish_reason"))


def _tool_call_dict(call: Any) -> dict:
    function = getattr(call, "function", None)
    arguments = getattr(function, "arguments", None)
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": getattr(call, "id", None), "type": "function",
            "function": {"name": getattr(function, "name", None), "arguments": arguments}}


def _cost(response: Any) -> Optional[float]:
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        cost = hidden["response_cost"]  # litellm priced the reply already: pricing it again costs ~1 ms a call
    else:
        try:
            cost = _litellm().completion_cost(completion_response=response)
        except Exception:  # a model missing from the price list has no known cost
            return None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


def _retry_after(exc: Exception) -> Optional[float]:
    """Seconds the server asked to wait (Retry-After: seconds or an HTTP date; retry-after-ms), if any."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _in_chain(exc: BaseException, test: Callable[[BaseException], bool]) -> bool:
    seen = 0
    cause: Optional[BaseException] = exc
    while cause is not None and seen < 10:
        if test(cause):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _network_error(exc: BaseException) -> Optional[BaseException]:
    """The transport-level error (refused, reset, dropped) behind a litellm exception, if any."""
    seen = 0
    cause: Optional[BaseException] = exc
    transport: tuple[type, ...] = ()
    try:
        import httpx
        import openai

        transport = (httpx.TransportError, openai.APIConnectionError)
    except ImportError:
        pass
    while cause is not None and seen < 10:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return cause
        if transport and isinstance(cause, transport):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


# litellm prefixes messages with its class names: "litellm.BadRequestError: OpenAIException - <message>"
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def _short(text: str, limit: int = 200) -> str:
    text = _LITELLM_PREFIX.sub("", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ================================================================ the judge


class JudgeVerdict(BaseModel):
    matched: bool
    score: Optional[float] = None
    reason: str


VERDICT_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "match": {"type": "boolean"},
        "score": {"type": "number"},
        "verdict_id": {"type": "string"},
    },
    "required": ["reason", "match", "score", "verdict_id"],
    "additionalProperties": False,
}
VERDICT_RESPONSE_FORMAT = {"type": "json_schema",
                           "json_schema": {"name": "semantic_match_verdict", "strict": True, "schema": VERDICT_SCHEMA}}


class LLMJudge:
    """Asks the judge model whether two values mean the same; never guesses when the model fails.

    The agent's text is hostile: it reaches the judge JSON-encoded between boundary lines made of a
    token that occurs in none of the data, and the verdict is the judge's own: the reply's only JSON
    object, or else the last one carrying that token as its `verdict_id`. A verdict the agent wrote
    (and the judge quoted) carries no token and counts for nothing."""

    def __init__(self, client: LLMClient, prompts: "PromptLibrary"):
        self.client = client
        self.prompts = prompts
        self._structured: Optional[bool] = None

    def semantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        messages, token = self._messages(expected, actual, context)
        accept = lambda c: verdict_from_reply(parse_verdict(c.content, token))  # noqa: E731
        response_format = self._response_format()
        try:
            completion = self.client.complete(messages, response_format=response_format, accept=accept)
        except LLMError as error:
            if not self._plain_instead(response_format, error):
                raise
            completion = self.client.complete(messages, accept=accept)
        return verdict_from_reply(parse_verdict(completion.content, token))

    async def asemantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        messages, token = self._messages(expected, actual, context)
        accept = lambda c: verdict_from_reply(parse_verdict(c.content, token))  # noqa: E731
        response_format = self._response_format()
        try:
            completion = await self.client.acomplete(messages, response_format=response_format, accept=accept)
        except LLMError as error:
            if not self._plain_instead(response_format, error):
                raise
            completion = await self.client.acomplete(messages, accept=accept)
        return verdict_from_reply(parse_verdict(completion.content, token))

    @property
    def structured(self) -> bool:
        """Whether this judge asks for a schema-bound reply (structured_output, and what the server accepts)."""
        return self._response_format() is not None

    def verdict_format(self) -> Optional[dict]:
        """The response_format of a match verdict ({reason, match, score, verdict_id}) for a structured
        judge, else None: what semantic_match sends, for checks that ask for the same verdict."""
        return self._response_format()

    def ask(self, messages: list[dict], *, accept: Callable[[Completion], Any], samples: int = 1,
            response_format: Optional[dict] = None) -> list[Completion]:
        """The judge's `samples` answers to `messages`, each its own cache entry, each passed through
        `accept`. With `response_format` (for a judge that is `structured`), a server that refuses the
        schema under `auto` is asked in plain text from then on."""
        completions = []
        for sample in range(samples):
            try:
                completion = self.client.complete(messages, response_format=response_format, accept=accept,
                                                  sample=sample)
            except LLMError as error:
                if not self._plain_instead(response_format, error):
                    raise
                response_format = None
                completion = self.client.complete(messages, accept=accept, sample=sample)
            completions.append(completion)
        return completions

    def _plain_instead(self, response_format: Optional[dict], error: LLMError) -> bool:
        """Under `auto`, a deployment that refuses the schema (HTTP 400) is asked in plain text from
        now on: litellm's list of capable models describes the model, not every server that hosts it."""
        if response_format is None or getattr(self.client.settings, "structured_output", "never") != "auto":
            return False
        if not error.reason.startswith("HTTP 400 "):
            return False
        self._structured = False
        return True

    def _messages(self, expected: str, actual: str, context: str) -> tuple[list[dict], str]:
        token = boundary_token(expected, actual, context)
        data = json.dumps({"expected": expected, "actual": actual}, ensure_ascii=False, indent=1)
        prompt = self.prompts.render(SEMANTIC_MATCH_PROMPT, expected=expected, actual=actual, context=context,
                                     context_json=json.dumps(context, ensure_ascii=False), data_json=data,
                                     boundary=token)
        return [{"role": "user", "content": prompt}], token

    def _response_format(self) -> Optional[dict]:
        if self._structured is None:
            settings = self.client.settings
            mode = getattr(settings, "structured_output", "never")
            if mode == "always":
                self._structured = True
            elif mode == "auto" and settings.api_base is None:
                try:
                    self._structured = bool(_litellm().supports_response_schema(model=settings.model))
                except Exception:
                    self._structured = False
            else:
                self._structured = False
        return VERDICT_RESPONSE_FORMAT if self._structured else None


def boundary_token(*data: str) -> str:
    """A token derived from the data that occurs in none of it. Deterministic (so the prompt, and the
    cache key, is the same on a re-run); not forgeable by the agent, whose text would have to contain
    a hash of itself."""
    material = json.dumps(data, ensure_ascii=False)
    counter = 0
    while True:
        token = "V" + hashlib.sha256(f"{counter}:{material}".encode()).hexdigest()[:20].upper()
        if not any(token in text for text in data):
            return token
        counter += 1


def verdict_from_reply(reply: dict) -> JudgeVerdict:
    matched = reply.get("match")
    if not isinstance(matched, bool):
        raise LLMError(f"judge reply has no boolean 'match': {_short(json.dumps(reply), 120)}")
    score = reply.get("score")
    if score is not None:
        # bool is an int subclass; `"score": true` is a malformed reply, not 1.0
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise LLMError(f"judge reply has an invalid 'score' (want 0..1): {score!r}")
        score = float(score)
    reason = reply.get("reason")
    return JudgeVerdict(matched=matched, score=score, reason=reason if isinstance(reason, str) else "")


# -- reply parsing ---------------------------------------------------------------------------------
_FENCED = re.compile(r"\A```(?:json|JSON)?\s*(.*?)\s*```\Z", re.DOTALL)
_MAX_REPLY = 50_000


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object in `text`, in order (objects nested in one are part of it)."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    text = text[:_MAX_REPLY]
    while True:
        start = text.find("{", position)
        if start < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end


def parse_verdict(content: Optional[str], token: Optional[str]) -> dict:
    """The judge's own verdict in its reply: the reply itself when it is one JSON object (bare or in a
    ```json fence), else the LAST object whose `verdict_id` is this call's token. Objects without the
    token (a verdict quoted from the agent's text, before or after the judge's own) never count."""
    if not isinstance(content, str):
        raise LLMError("judge reply has no text")
    text = content.strip()
    fenced = _FENCED.match(text)
    whole = fenced.group(1) if fenced else text
    try:
        value = json.loads(whole)
    except ValueError:
        value = None
    if isinstance(value, dict):
        if token is not None and "verdict_id" in value and value["verdict_id"] != token:
            raise LLMError(f"judge reply carries another call's verdict_id: {_short(whole, 120)}")
        return value
    if token is not None:
        tagged = [obj for obj in json_objects(text) if obj.get("verdict_id") == token]
        if tagged:
            return tagged[-1]
    raise LLMError(f"judge reply has no final verdict (one JSON object, or one carrying verdict_id {token}): "
                   f"{_short(text, 200)}" if token else f"reply is not JSON: {_short(text, 200)}")


def parse_json_object(content: str) -> dict:
    """The model's final JSON object: the whole reply when it is one (bare or in a ```json fence), else
    the LAST top-level object in it, never an earlier one it quoted; LLMError when there is none."""
    if not isinstance(content, str):
        raise LLMError("reply has no text")
    try:
        return parse_verdict(content, None)
    except LLMError:
        found = json_objects(content)
        if found:
            return found[-1]
        raise
