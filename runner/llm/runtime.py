"""What one run shares across all its model calls: the limit, the cache setting, the breakers, the totals."""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Optional

from .calls import CallSummary, LLMCall, current_calls
from .limits import Breaker, Limiter
from .loop import layer_loop
from .settings import DEFAULT_CONCURRENCY, ModelSettings


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
        return future.result()


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
