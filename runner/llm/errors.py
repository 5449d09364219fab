"""Why a model call failed, in words fit for a report.

Two kinds of failure, because they call for different cures:
- `Failure`: the request did not get a usable HTTP answer (refused or dropped connection, timeout, an HTTP
  error, a body that is not JSON). The retry loop acts on it; `outage` marks the ones that say the model
  is down (what the circuit breaker counts).
- an unusable reply: the model answered, but not in a shape the caller can use (no verdict, cut at
  max_tokens, withheld by a content filter). That is this call's problem, never the model's health: the
  client asks again with the problem explained, then raises LLMError(kind="reply").
"""
from __future__ import annotations

import time
from typing import Any, Literal

from ..util.secrets import clip
from .calls import LLMCall, redact

ErrorKind = Literal["outage", "reply", "request"]


class LLMError(Exception):
    """A model call failed; `.reason` is a short message fit for a report (secrets removed).

    `kind`: "outage" (the model could not be reached or kept failing), "reply" (it answered, but
    unusably), "request" (the provider refused the request: a 4xx other than 429, a missing key).
    `status` is the HTTP status when there was one."""

    def __init__(self, reason: str, call: LLMCall | None = None, *, kind: ErrorKind = "reply",
                 status: int | None = None):
        reason = redact(reason)
        super().__init__(reason)
        self.reason = reason
        self.call = call
        self.kind = kind
        self.status = status


class Failure(Exception):
    """One request that got no usable HTTP answer. `retryable`: worth another attempt; `outage`: a sign
    the model is down (connection refused or reset, timeout, 5xx, 429), which the breaker counts once
    the retries are spent."""

    def __init__(self, reason: str, *, retryable: bool, outage: bool = False, retry_after: float | None = None,
                 status: int | None = None):
        super().__init__(reason)
        self.reason, self.retryable, self.outage = reason, retryable, outage
        self.retry_after, self.status = retry_after, status


class GaveUp(Exception):
    """The retries of one request are spent: the last Failure's reason, and how many requests were sent."""

    def __init__(self, failure: Failure, reason: str, attempts: int):
        super().__init__(reason)
        self.failure, self.reason, self.attempts = failure, reason, attempts


def http_failure(status: int, where: str, detail: str, headers: Any = None) -> Failure:
    """The Failure for an HTTP error status: 429 and 5xx are retried (honouring Retry-After) and are outages
    once the retries are spent; any other 4xx is the request's own problem and is not retried."""
    retryable = status == 429 or status >= 500
    message = f"HTTP {status} from {where}" + (f": {detail}" if detail else "")
    return Failure(message, retryable=retryable, outage=retryable, status=status,
                   retry_after=retry_after(headers) if retryable else None)


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked to wait (Retry-After: seconds or an HTTP date; retry-after-ms), if any."""
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
    import email.utils  # an HTTP date: rare, so its import (2 ms) is not every run's

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def short(text: str, limit: int = 200) -> str:
    """`text` on one line, at most `limit` characters."""
    text = " ".join(text.split())
    return clip(text, limit)


def quoted(text: str | None, limit: int = 300) -> str:
    """A reply as a report quotes it: on one line, shortened, control characters made visible."""
    if text is None:
        return "(no text)"
    if not text.strip():
        return "(empty)"
    shown = short(text, limit)
    shown = "".join(ch if ch.isprintable() or ch == " " else f"\\x{ord(ch):02x}" if ord(ch) < 256
                    else f"\\u{ord(ch):04x}" for ch in shown)
    return "«" + shown + "»"
