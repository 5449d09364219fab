"""One request, sent through the run's limits and retried while the failure is worth another attempt:
429s, 5xx, timeouts, dropped connections and bodies that are not JSON, with jittered exponential back-off
that gives way to the server's Retry-After, within `max_retries` and `max_retry_wait_s`."""
from __future__ import annotations

import asyncio
import random

from .errors import Failure, GaveUp
from .limits import RunLimit
from .settings import BACKOFF_BASE_S, BACKOFF_CAP_S
from .wire import Answer, ChatRequest, Transport


async def send_with_retries(transport: Transport, request: ChatRequest, limiter: RunLimit,
                            own: RunLimit | None) -> tuple[Answer, int]:
    """The answer and how many requests it took; GaveUp with the last failure once retrying is over."""
    s = request.settings
    waited = 0.0
    attempt = 0
    while True:
        attempt += 1
        try:
            if own is not None:
                await own.acquire()
            try:
                async with limiter.slot():
                    answer = await transport.send(request)
            finally:
                if own is not None:
                    own.release()
            limiter.recover()
            return answer, attempt
        except Failure as failure:
            if failure.status == 429:
                limiter.throttle()
            suffix = f" (after {attempt} attempts)" if attempt > 1 else ""
            if not failure.retryable or attempt > s.max_retries:
                raise GaveUp(failure, failure.reason + suffix, attempt) from None
            wait = failure.retry_after
            if wait is None:
                wait = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
            if waited + wait > s.max_retry_wait_s:
                asked = f"the server asked to wait {wait:g} s" if failure.retry_after is not None else \
                    f"the next wait ({wait:.1f} s)"
                raise GaveUp(failure, f"{failure.reason}{suffix}; {asked}, more than the {s.max_retry_wait_s:g} s "
                                      "left for retries (max_retry_wait_s)", attempt) from None
            waited += wait
            await asyncio.sleep(wait)
