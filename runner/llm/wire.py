"""What goes over the wire: one chat request, what it brought back, the interface both paths implement,
and which path a model takes.

    openai_fast   OpenAI-compatible servers, over evalrun's own pooled aiohttp client (no litellm)
    litellm_path  every other provider, through litellm (imported on first use)

Both raise `Failure` for a request that got no usable HTTP answer and return an `Answer` otherwise, so the
client above them (retries, cache, breaker, records) never knows which one ran (client.transport_for picks).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Protocol

from .calls import SECRET_ENV_NAMES, Completion
from .errors import Failure
from .settings import DUMMY_API_KEY, ModelSettings

# Providers whose servers take OpenAI's /chat/completions as it is. openai/ also without an api_base (OpenAI
# itself); the others only with one (their own server, which litellm would call the same way).
OPENAI_PREFIX = "openai/"
OPENAI_COMPATIBLE_WITH_API_BASE = ("hosted_vllm/", "lm_studio/", "llamafile/", "litellm_proxy/")
OPENAI_API_BASE = "https://api.openai.com/v1"


@dataclass
class ChatRequest:
    settings: ModelSettings
    messages: list[dict]
    tools: list[dict] | None
    response_format: Any
    params: dict  # sampling parameters: the settings' (temperature, max_tokens, extra) and the caller's
    role: str

    @property
    def where(self) -> str:
        return self.settings.api_base or f"the provider of {self.settings.model}"


@dataclass
class Answer:
    """What one request brought back: the reply, its token usage and its price (None: unknown)."""

    completion: Completion
    usage: dict
    cost_usd: float | None


class Transport(Protocol):
    name: str

    async def send(self, request: ChatRequest) -> Answer:
        """The model's answer; raises Failure when the request got no usable HTTP answer."""
        ...


def takes_fast_path(settings: ModelSettings) -> bool:
    """Whether this model is reached over the own OpenAI-compatible client (see `transport`)."""
    if settings.transport == "litellm":
        return False
    if settings.transport == "openai":
        return True
    model = settings.model
    return model.startswith(OPENAI_PREFIX) or (
        settings.api_base is not None and model.startswith(OPENAI_COMPATIBLE_WITH_API_BASE))


def api_key(settings: ModelSettings, role: str, *, fast: bool) -> str | None:
    """The key to send: the value of `api_key_env`; a placeholder for a local server; OpenAI's usual
    variable on the fast path to OpenAI itself (litellm reads its providers' variables on its own)."""
    name = settings.api_key_env
    if name:
        value = os.environ.get(name)
        if not value:
            raise Failure(f"environment variable {name} ({role} api_key_env) is not set", retryable=False)
        return value
    if settings.api_base:
        return DUMMY_API_KEY
    if not fast:
        return None
    value = os.environ.get("OPENAI_API_KEY")
    if not value:
        raise Failure(f"no API key for {settings.model}: set {role}'s api_key_env to the name of the variable "
                      "that holds it (or set OPENAI_API_KEY)", retryable=False)
    SECRET_ENV_NAMES.add("OPENAI_API_KEY")
    return value


def tool_call_dict(call: Any) -> dict:
    """An OpenAI tool call as a plain dict, arguments as a JSON string whatever the server sent."""
    call = call if isinstance(call, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": call.get("id"), "type": "function", "function": {"name": function.get("name"), "arguments": arguments}}
