"""LLMClient: calls one model for one role, through the run's limit, cache and breaker, with retries."""
from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any, Callable, Optional

from .cache import DiskCache, _cache_slot, request_key
from .calls import Completion, LLMCall, _completion_from_stored, redact
from .errors import (
    LLMError,
    _Failure,
    _GaveUp,
    _in_chain,
    _network_error,
    _retry_after,
    _short,
)
from .litellm_path import _LITELLM, _cost, _litellm, _tool_call_dict
from .runtime import LLMRuntime, current_runtime
from .settings import BACKOFF_BASE_S, BACKOFF_CAP_S, DUMMY_API_KEY, ModelSettings, Role


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

def _accepts(accept: Optional[Callable[[Completion], Any]], completion: Completion) -> bool:
    if accept is None:
        return True
    try:
        accept(completion)
    except LLMError:
        return False
    return True

