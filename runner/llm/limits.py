"""The run-wide limit on requests in flight (which backs off on 429s) and the circuit breaker that marks a
model down after repeated failures."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable

from .settings import BREAKER_THRESHOLD


class RunLimit(ABC):
    """What a model call goes through: Limiter below, or a stand-in for a limit held by another process (a run
    spread over a Ray cluster shares one budget: runner.run.executors.ray_limits)."""

    @abstractmethod
    async def acquire(self) -> None: ...

    @abstractmethod
    def release(self) -> None: ...

    @abstractmethod
    def throttle(self) -> None: ...  # the provider answered 429

    @abstractmethod
    def recover(self) -> None: ...  # a request succeeded

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()


# Makes a run's limits: (None, -j) for the run-wide one, ((model, api_base), max_concurrency) for a model's own
LimitFactory = Callable[[tuple | None, int], RunLimit]


def local_limit(key: tuple | None, limit: int) -> RunLimit:
    return Limiter(limit)


class Limiter(RunLimit):
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




class Breaker:
    """Marks a model down for the rest of the run after BREAKER_THRESHOLD failed calls in a row, so
    the remaining calls fail at once (with the first reason) instead of each waiting out its retries."""

    def __init__(self, role: str, threshold: int = BREAKER_THRESHOLD):
        self.role = role
        self.threshold = threshold
        self.failures = 0
        self.first_reason: str | None = None
        self.down: str | None = None
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

