"""What a model call leaves behind: its record (LLMCall), the totals of a case or a run, the reply
(Completion), which case and repeat a call belongs to, and the redaction of keys from every reason."""
from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

# every api_key_env named so far (and OPENAI_API_KEY once the fast path reads it): this process's secrets, which
# every redactor of runner/util/secrets.py masks as well
from ..util.secrets import SECRET_ENV_NAMES

REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` with the value of every `api_key_env` variable seen so far replaced by [redacted]."""
    for name in tuple(SECRET_ENV_NAMES):
        value = os.environ.get(name)
        if value and len(value) >= 4 and value in text:  # a 1-3 character "key" would redact half the text
            text = text.replace(value, REDACTED)
    return text


class LLMCall(BaseModel):
    """One call to a model, as the report shows it."""

    role: str = Field(description="Who called: agent, simulator or judge")
    model: str
    latency_s: float = Field(description="Wall time of the call, retries and waits included")
    attempts: int = Field(0, description="Requests sent (0 when the cache or a marked-down model answered)")
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = Field(
        None, description="What the call cost, from litellm's local price list: 0 for a cached answer of a priced "
        "model; None when the model has no known price (shown as 'cost unknown', never $0)")
    saved_usd: float | None = Field(
        None, description="A cached answer: what asking the model again would have cost (None: no known price)")
    cached: bool = False
    error: str | None = None


class CallTotals(BaseModel):
    """Model calls totalled: counts, cache hits, tokens, cost, time."""

    calls: int = Field(0, description="Model calls made (answers from the cache included)")
    cached: int = Field(0, description="Calls answered from the disk cache")
    errors: int = Field(0, description="Calls that failed")
    prompt_tokens: int = Field(0, description="Tokens sent")
    completion_tokens: int = Field(0, description="Tokens received")
    cost_usd: float | None = Field(None, description="Sum of the known costs; None when no call had a price")
    unpriced: int = Field(0, description="Calls that reached a model with no known price: cost_usd leaves them out")
    saved_usd: float | None = Field(None, description="What the cached answers would have cost, where priced")
    latency_s: float = Field(0.0, description="Time spent waiting for the models, summed over calls")

    def add(self, call: LLMCall) -> None:
        # the new values set at once, as pydantic's own assignment records them (value and fields set): one
        # assignment through BaseModel.__setattr__ per field cost half the CPU of a live run's bookkeeping
        changed = {"calls": self.calls + 1, "cached": self.cached + call.cached,
                   "errors": self.errors + (call.error is not None),
                   "prompt_tokens": self.prompt_tokens + (call.prompt_tokens or 0),
                   "completion_tokens": self.completion_tokens + (call.completion_tokens or 0),
                   "latency_s": self.latency_s + call.latency_s}
        if call.cost_usd is not None:
            changed["cost_usd"] = (self.cost_usd or 0.0) + call.cost_usd
        elif call.cached or call.prompt_tokens or call.completion_tokens or (call.attempts and call.error is None):
            changed["unpriced"] = self.unpriced + 1  # a model (or its cached answer) answered, and it has no known price
        if call.saved_usd is not None:
            changed["saved_usd"] = (self.saved_usd or 0.0) + call.saved_usd
        self.__dict__.update(changed)
        self.__pydantic_fields_set__.update(changed)

    def cost_text(self) -> str:
        """The cost in words: "$0.0123", "$0.0123 + 2 calls of unknown price", "cost unknown"; with what
        the cache saved."""
        if self.cost_usd is None:
            text = "cost unknown" if self.unpriced else "$0"
        else:
            text = f"${self.cost_usd:.4f}" + (f" + {self.unpriced} call(s) of unknown price" if self.unpriced else "")
        if self.saved_usd:
            text += f" (the cache saved ${self.saved_usd:.4f})"
        return text


class CallSummary(CallTotals):
    """Model calls totalled (a case's or the run's), and the same totals by role."""

    by_role: dict[str, CallTotals] = Field(default_factory=dict,
        description="The same totals for each role: judge, simulator, agent, generator")

    def add(self, call: LLMCall) -> None:
        super().add(call)
        self.by_role.setdefault(call.role, CallTotals()).add(call)


def summarize(calls: list[LLMCall]) -> CallSummary:
    """Totals of some calls (a case's, or a run's): counts, cache hits, tokens, cost, by role."""
    summary = CallSummary()
    for call in calls:
        summary.add(call)
    return summary


current_calls: contextvars.ContextVar[list[LLMCall] | None] = contextvars.ContextVar(
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
    token = current_calls.set(calls)
    try:
        yield calls
    finally:
        current_calls.reset(token)


@dataclass
class Completion:
    """The assistant's reply: its text and OpenAI-shaped tool calls (arguments as JSON strings)."""

    content: str | None
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str | None = None  # OpenAI's `message.refusal`: the model declined to answer
    call: LLMCall | None = None

    def message(self) -> dict:
        """The reply as an OpenAI chat message, ready to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message

    def stored(self, usage: dict, cost_usd: float | None) -> dict:
        """The cache entry of an accepted reply (its cost too: a later hit shows what it saved)."""
        return {"content": self.content, "tool_calls": self.tool_calls, "finish_reason": self.finish_reason,
                "usage": usage, "cost_usd": cost_usd}


def completion_from_stored(stored: dict) -> Completion | None:
    """The Completion of a cache entry, or None for an entry that is not one (damaged, or hand-edited)."""
    content, tool_calls = stored.get("content"), stored.get("tool_calls") or []
    if (content is not None and not isinstance(content, str)) or not isinstance(tool_calls, list):
        return None
    return Completion(content=content, tool_calls=tool_calls, finish_reason=stored.get("finish_reason"))


def stored_cost(stored: dict) -> float | None:
    cost = stored.get("cost_usd")
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None

