"""Why a model call failed, in words fit for a report: LLMError for callers, and the classification of
transport and HTTP failures the retry loop acts on."""
from __future__ import annotations

import email.utils
import re
import time
from typing import Callable, Optional

from .calls import LLMCall, redact


class LLMError(Exception):
    """A model call failed; `.reason` is a short message fit for a report (secrets removed)."""

    def __init__(self, reason: str, call: Optional[LLMCall] = None):
        reason = redact(reason)
        super().__init__(reason)
        self.reason = reason
        self.call = call

class _Failure(Exception):
    def __init__(self, reason: str, retryable: bool, retry_after: Optional[float] = None, status: Optional[int] = None):
        super().__init__(reason)
        self.reason, self.retryable, self.retry_after, self.status = reason, retryable, retry_after, status

class _GaveUp(Exception):
    def __init__(self, reason: str, attempts: int):
        super().__init__(reason)
        self.reason, self.attempts = reason, attempts

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
