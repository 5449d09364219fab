"""LLMClient: calls one model for one role, through the run's limit, cache and breaker, with retries.

A call goes: the disk cache (an accepted answer to the same request) -> the breaker (a model marked down
fails at once) -> one request with its transport retries (retries.py) over the model's path (wire.py) ->
the caller's `accept`. A reply that arrived but cannot be used is this call's problem, never the model's
health: it is asked again (`reply_retries`) with the problem and the expected shape added to the
conversation, and then fails with the reply quoted. Only outages (unreachable, timeouts, 5xx, 429 after
retries) count towards the breaker.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cache import DiskCache, cache_slot, request_key
from .calls import Completion, LLMCall, completion_from_stored, stored_cost
from .errors import ErrorKind, GaveUp, LLMError, quoted
from .retries import send_with_retries
from .runtime import LLMRuntime, current_runtime
from .settings import ModelSettings, Role
from .wire import ChatRequest, Transport, takes_fast_path

Accept = Callable[[Completion], Any]


class LLMClient:
    """Calls one model for one role. Clients are cheap; what must be shared lives in the runtime."""

    def __init__(self, settings: ModelSettings, cache_dir: Path | None = None, *, role: Role = "judge",
                 runtime: LLMRuntime | None = None):
        self.settings = settings
        self.role = role
        self.runtime = runtime or current_runtime()
        self.transport = transport_for(settings)
        root = Path(cache_dir) if cache_dir is not None else self.runtime.cache_dir
        use_cache = root is not None and settings.cache and self.runtime.cache_mode != "off"
        self.cache = DiskCache.at(root / "llm") if use_cache else None  # type: ignore[operator]
        self.reads_cache = self.runtime.cache_mode == "on"  # `refresh` asks again, and saves the new answer

    @property
    def where(self) -> str:
        return self.settings.api_base or f"the provider of {self.settings.model}"

    # -- public ----------------------------------------------------------------------------------
    async def acomplete(self, messages: list[dict], *, tools: list[dict] | None = None,
                        response_format: Any = None, repeat: int = 0, sample: int = 0,
                        accept: Accept | None = None, expect: str | None = None, **params: Any) -> Completion:
        """The model's reply to `messages`. `accept` (optional) raises LLMError for a reply that cannot
        be used: such a reply is neither returned nor cached, and is asked again (reply_retries) with the
        problem and `expect` (the shape wanted, in words) added. `repeat` numbers repeated runs of the same
        request (each has its own cache entry); 0 means the case's current repeat (repeat_scope). `sample`
        numbers several answers asked within one repeat. Raises LLMError with the reason."""
        slot = cache_slot(repeat, sample)
        try:
            completion = await self._call(messages, tools, response_format, slot, accept, expect, params)
        except LLMError as error:
            if error.call is not None:
                self.runtime.record(error.call)
            raise
        assert completion.call is not None
        self.runtime.record(completion.call)
        return completion

    def complete(self, messages: list[dict], *, tools: list[dict] | None = None, response_format: Any = None,
                 repeat: int = 0, sample: int = 0, accept: Accept | None = None, expect: str | None = None,
                 **params: Any) -> Completion:
        """The blocking form of acomplete, for worker threads and scripts: the same limit, cache and
        breaker; the call is recorded in the caller's context."""
        slot = cache_slot(repeat, sample)  # read here: the coroutine runs on the layer's thread
        coroutine = self._call(messages, tools, response_format, slot, accept, expect, params)
        try:
            completion = self.runtime.run_blocking(coroutine)
        except LLMError as error:
            if error.call is not None:
                self.runtime.record(error.call)
            raise
        self.runtime.record(completion.call)
        return completion

    # -- the call --------------------------------------------------------------------------------
    def _params(self, extra_params: dict) -> dict:
        s = self.settings
        params: dict[str, Any] = {}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if s.max_tokens is not None:
            params["max_tokens"] = s.max_tokens
        params.update(s.extra)
        params.update(extra_params)
        return params

    async def _call(self, messages: list[dict], tools: list[dict] | None, response_format: Any, repeat: Any,
                    accept: Accept | None, expect: str | None, extra_params: dict) -> Completion:
        s = self.settings
        started = time.monotonic()
        params = self._params(extra_params)
        spent = _Spent()

        def record(**fields: Any) -> LLMCall:
            return LLMCall(role=self.role, model=s.model, latency_s=time.monotonic() - started, **fields)

        key = request_key(s, messages, tools, response_format, params, repeat) if self.cache else ""
        if self.cache is not None and self.reads_cache:
            stored = self.cache.get(key)
            completion = completion_from_stored(stored) if stored is not None else None
            if completion is not None and _accepts(accept, completion):
                price = stored_cost(stored)  # type: ignore[arg-type]
                completion.call = record(cached=True, prompt_tokens=0, completion_tokens=0,
                                         cost_usd=0.0 if price is not None else None, saved_usd=price)
                return completion

        breaker = self.runtime.breaker(s, self.role)  # after the cache: a known answer needs no live model
        if breaker.down is not None:
            raise LLMError(breaker.down, record(error=breaker.down), kind="outage")

        limiter, own = self.runtime.limiter, self.runtime.model_limiter(s)
        conversation = messages
        asks = 1 + (s.reply_retries if accept is not None else 0)
        for ask in range(1, asks + 1):
            request = ChatRequest(s, conversation, tools, response_format, params, self.role)
            try:
                answer, attempts = await send_with_retries(self.transport, request, limiter, own)
            except GaveUp as gave_up:
                failure = gave_up.failure
                if failure.outage:
                    breaker.failed(gave_up.reason)
                kind: ErrorKind = ("outage" if failure.outage else "request" if failure.status or not failure.retryable
                                   else "reply")
                raise LLMError(gave_up.reason, record(error=gave_up.reason, **spent.fields(gave_up.attempts)),
                               kind=kind, status=failure.status) from None
            breaker.succeeded()  # a reply arrived: the model is up, whatever the reply is worth
            spent.add(attempts, answer.usage, answer.cost_usd)
            completion = answer.completion
            problem = self._problem(completion, accept, params)
            if problem is None:
                completion.call = record(**spent.fields())
                if self.cache is not None:
                    self.cache.put(key, completion.stored(spent.usage(), spent.cost_usd))
                return completion
            if ask < asks:
                conversation = [*conversation, {"role": "assistant", "content": completion.content or ""},
                                {"role": "user", "content": _ask_again(problem, completion, expect)}]
        tried = f" (asked {asks} times)" if asks > 1 else ""
        reason = f"{problem}{tried}; the last reply: {quoted(completion.content)}"  # type: ignore[union-attr]  # asked at least once
        raise LLMError(reason, record(error=reason, **spent.fields()), kind="reply")

    def _problem(self, completion: Completion, accept: Accept | None, params: dict) -> str | None:
        """Why the caller cannot use this reply, or None. A cut or withheld reply says so: the JSON errors
        that follow from it would hide the cause."""
        if accept is None:
            return None
        try:
            accept(completion)
            return None
        except LLMError as error:
            reason = error.reason
        who = self.role
        if completion.refusal:
            return f"the {who} refused to answer: {quoted(completion.refusal, 160)}"
        if completion.finish_reason == "length":
            limit = params.get("max_tokens") or params.get("max_completion_tokens")
            if limit:
                return f"the {who}'s reply was cut at max_tokens={limit} (finish_reason: length); raise `{who}.max_tokens`"
            return (f"the {who}'s reply was cut at the server's token limit (finish_reason: length); set "
                    f"`{who}.max_tokens` higher")
        if completion.finish_reason == "content_filter":
            return f"the {who}'s reply was withheld by the provider's content filter (finish_reason: content_filter)"
        return reason


class _Spent:
    """What the requests of one call added up to: requests sent, tokens, cost (None once one is unknown)."""

    def __init__(self) -> None:
        self.attempts, self.prompt, self.completion, self.cost, self.priced = 0, 0, 0, 0.0, True

    def add(self, attempts: int, usage: dict, cost: float | None) -> None:
        self.attempts += attempts
        self.prompt += usage.get("prompt_tokens") or 0
        self.completion += usage.get("completion_tokens") or 0
        if cost is None:
            self.priced = False
        else:
            self.cost += cost

    @property
    def cost_usd(self) -> float | None:
        return self.cost if self.priced and self.attempts else None

    def usage(self) -> dict:
        return {"prompt_tokens": self.prompt, "completion_tokens": self.completion}

    def fields(self, more_attempts: int = 0) -> dict:
        return {"attempts": self.attempts + more_attempts, "prompt_tokens": self.prompt or None,
                "completion_tokens": self.completion or None, "cost_usd": self.cost_usd}


def transport_for(settings: ModelSettings) -> Transport:
    """The path this model's requests take (wire.takes_fast_path): the own OpenAI-compatible client, or litellm."""
    if takes_fast_path(settings):
        from .openai_fast import OpenAITransport

        return OpenAITransport()
    from .litellm_path import LiteLLMTransport

    return LiteLLMTransport()


def prepare_transports(settings: list[Any]) -> None:
    """Start importing, in the background, what these models' paths need (aiohttp for https or a proxy,
    litellm): the first calls then do not wait for it. Nothing is sent; entries that are not model settings are passed over."""
    for entry in settings:
        if not isinstance(entry, ModelSettings):
            continue
        if takes_fast_path(entry):
            from .openai_fast import needs_aiohttp, start_import

            if not needs_aiohttp(entry):  # plain http: the small client needs no import
                continue
        else:
            from .litellm_path import start_import  # type: ignore[assignment]  # its Future is not used
        start_import()


def _ask_again(problem: str, completion: Completion, expect: str | None) -> str:
    wanted = f"only {expect}" if expect else "only what the instructions above ask for, in that form"
    if completion.finish_reason == "length":
        return f"Your reply was cut off at the length limit before it was complete. Answer again, much shorter, with {wanted}."
    return f"Your reply could not be used: {problem}. Answer again with {wanted}."


def _accepts(accept: Accept | None, completion: Completion) -> bool:
    if accept is None:
        return True
    try:
        accept(completion)
    except LLMError:
        return False
    return True
