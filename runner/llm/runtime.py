"""What one run shares across all its model calls: the limit, the cache setting, the breakers, the totals."""
from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from .calls import CallSummary, LLMCall, current_calls
from .limits import Breaker, LimitFactory, RunLimit, local_limit
from .loop import layer_loop
from .settings import DEFAULT_CONCURRENCY, ModelSettings

CACHE_MODES = ("on", "refresh", "off")  # read and write / ask again and write / neither


def cache_mode(no_cache: bool | str | None) -> str:
    """The cache mode a command's `no_cache` asks for: False or None (the default) reads and writes (`on`); True
    (`--no-cache`) and `refresh` ask the models again and keep their answers, so the next run reads the fresh
    ones (not reading alone left the old answers for the next run to replay); `off` neither reads nor writes."""
    if no_cache is None or no_cache is False:
        return "on"
    if no_cache is True:
        return "refresh"
    if no_cache not in CACHE_MODES:
        raise ValueError(f"unknown cache mode {no_cache!r}: use one of {', '.join(CACHE_MODES)}")
    return no_cache


# Who is waiting in a blocking call (a case's scoring thread, say): `cancel_blocking(owner)` ends its calls
# when the case is cancelled, instead of leaving the thread to wait out a slow model's reply.
blocking_owner: contextvars.ContextVar[object | None] = contextvars.ContextVar("evalrun_blocking_owner",
                                                                                 default=None)


class LLMRuntime:
    """What one run shares across all its model calls. `configure()` makes one the current runtime."""

    def __init__(self, concurrency: int = DEFAULT_CONCURRENCY, cache_dir: Path | None = None,
                 no_cache: bool | str = False, limits: LimitFactory = local_limit):
        self._make_limit = limits
        self.limiter = limits(None, concurrency)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.cache_mode = cache_mode(no_cache)
        # what a process of this run is configured with (a Ray worker); true whenever answers are not read
        self.no_cache: bool | str = False if self.cache_mode == "on" else self.cache_mode
        self.totals = CallSummary()
        self._lock = threading.Lock()
        self._breakers: dict[tuple, Breaker] = {}
        self._model_limiters: dict[tuple, RunLimit] = {}
        self._blocking: dict[object, set[Future]] = {}

    def breaker(self, settings: ModelSettings, role: str) -> Breaker:
        with self._lock:
            return self._breakers.setdefault((role, settings.model, settings.api_base), Breaker(role))

    def model_limiter(self, settings: ModelSettings) -> RunLimit | None:
        if settings.max_concurrency is None:
            return None
        key = (settings.model, settings.api_base, settings.max_concurrency)
        with self._lock:
            if key not in self._model_limiters:
                self._model_limiters[key] = self._make_limit(key, settings.max_concurrency)
            return self._model_limiters[key]

    def record(self, call: LLMCall) -> None:
        with self._lock:
            self.totals.add(call)
        calls = current_calls.get()
        if calls is not None:
            calls.append(call)

    def summary(self) -> CallSummary:
        with self._lock:
            return self.totals.model_copy(deep=True)

    def run_blocking(self, coroutine: Any) -> Any:
        """Run `coroutine` to its end from synchronous code, on the layer's own event loop thread.

        Never on the caller's loop: the caller may be that loop's own thread (a blocking call inside a
        coroutine) or one of its executor's threads. The limiter, cache and breakers are shared across
        loops, so the run-wide limit still holds."""
        future: Future = asyncio.run_coroutine_threadsafe(coroutine, layer_loop())
        owner = blocking_owner.get()
        if owner is None:
            return future.result()
        with self._lock:
            self._blocking.setdefault(owner, set()).add(future)
        try:
            return future.result()
        finally:
            with self._lock:
                waiting = self._blocking.get(owner)
                if waiting is not None:
                    waiting.discard(future)
                    if not waiting:
                        del self._blocking[owner]

    def cancel_blocking(self, owner: object) -> None:
        """Cancel the blocking calls `owner` is waiting in (the request on the layer's loop is cancelled; the
        waiting thread gets CancelledError at once)."""
        with self._lock:
            futures = list(self._blocking.pop(owner, ()))
        for future in futures:
            future.cancel()


_runtime: LLMRuntime | None = None
_runtime_lock = threading.Lock()


def configure(concurrency: int = DEFAULT_CONCURRENCY, cache_dir: Path | None = None,
              no_cache: bool | str = False, limits: LimitFactory = local_limit) -> LLMRuntime:
    """Start a run: a fresh limit, cache setting, breakers and totals for every client built after this.
    `no_cache`: the cache mode (`cache_mode`: True is `refresh`).
    `limits`: what makes the run's limits (a process of a Ray run: stand-ins for the cluster's one budget)."""
    global _runtime
    with _runtime_lock:
        _runtime = LLMRuntime(concurrency, cache_dir, no_cache, limits)
        return _runtime


def current_runtime() -> LLMRuntime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = LLMRuntime()
        return _runtime
