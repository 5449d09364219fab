"""The LiteLLM path: every provider that is not reached over the fast OpenAI-compatible client.

litellm is imported on the first call that needs it (it takes seconds), in a thread. Every litellm call runs
on the layer's own event loop (loop.layer_loop), whichever loop asked: litellm keeps per-loop state (its
logging worker, its HTTP clients), and calls from several loops are what printed "bound to a different event
loop", "cannot reuse already awaited coroutine" and "Task was destroyed but it is pending" at the end of runs.
On one loop that never closes, and with its logging worker drained at exit (loop.py), none appears.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable
from typing import Any

from .calls import Completion, redact
from .errors import Failure, http_failure, short
from .loop import at_layer_exit, layer_loop, run_aside
from .wire import Answer, ChatRequest, api_key, tool_call_dict

_LOADED: list[Any] = []  # the imported module, once imported
_importing: list[threading.Thread] = []
_import_lock = threading.Lock()


def start_import() -> None:
    """Start importing litellm in a background thread, once (a run that will call it gains its seconds)."""
    with _import_lock:
        if _LOADED or _importing:
            return
        thread = threading.Thread(target=_import_quietly, name="evalrun-import-litellm", daemon=True)
        _importing.append(thread)
        thread.start()


def _import_quietly() -> None:
    try:
        litellm_module()
    except Exception:  # the call that needs it reports the problem
        pass


def litellm_module() -> Any:
    """litellm, imported and quietened (blocking: seconds on the first call)."""
    if _LOADED:
        return _LOADED[0]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # must precede the import
    import logging

    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners on every error
    litellm.telemetry = False
    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)  # its own notes are not the run's console's business
    at_layer_exit(drain_logging_worker)  # registered after litellm's own exit handler, so that ours runs first
    _LOADED[:] = [litellm]
    return litellm


class LiteLLMTransport:
    name = "litellm"

    async def send(self, request: ChatRequest) -> Answer:
        loop = layer_loop()
        if asyncio.get_running_loop() is loop:
            return await self._send(request)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._send(request), loop))

    async def _send(self, request: ChatRequest) -> Answer:
        s = request.settings
        arguments: dict[str, Any] = {
            "model": s.model, "messages": request.messages, "api_base": s.api_base, "api_key": api_key(s, request.role, fast=False),
            "timeout": s.timeout_s, "num_retries": 0, "max_retries": 0,  # the client retries; max_retries stops the SDK's own
        }
        if request.tools:
            arguments["tools"] = request.tools
            # litellm routes calls with tools through its MCP gateway check, which imports the optional
            # `mcp` package; plain function tools never need it.
            arguments["_skip_mcp_handler"] = True
        if request.response_format is not None:
            arguments["response_format"] = request.response_format
        arguments.update(request.params)  # a parameter the caller gives wins over ours instead of failing as a duplicate
        litellm = _LOADED[0] if _LOADED else await run_aside(litellm_module)
        try:
            # The SDK's timeout is per read: a server trickling one byte a second never trips it. This one
            # bounds the whole request.
            response = await asyncio.wait_for(litellm.acompletion(**arguments), timeout=s.timeout_s)
        except asyncio.TimeoutError:
            raise Failure(f"timed out after {s.timeout_s:g} s ({request.where})", retryable=True, outage=True) from None
        except Failure:
            raise
        except Exception as exc:  # litellm maps provider errors to its own types; classify them here
            raise classified(litellm, exc, request) from None
        completion, usage = read_response(response, request.where)
        return Answer(completion, usage, response_cost(litellm, response))


def read_response(response: Any, where: str) -> tuple[Completion, dict]:
    try:
        choice = response.choices[0]
        message = choice.message
    except (AttributeError, IndexError, TypeError):
        raise Failure(f"malformed reply from {where}: no message in it", retryable=True) from None
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        content = str(content)
    calls = [{"id": getattr(c, "id", None),
              "function": {"name": getattr(getattr(c, "function", None), "name", None),
                           "arguments": getattr(getattr(c, "function", None), "arguments", None)}}
             for c in (getattr(message, "tool_calls", None) or [])]
    refusal = getattr(message, "refusal", None) or (getattr(message, "provider_specific_fields", None) or {}).get("refusal")
    usage_object = getattr(response, "usage", None)
    usage = {"prompt_tokens": getattr(usage_object, "prompt_tokens", None),
             "completion_tokens": getattr(usage_object, "completion_tokens", None)}
    return (Completion(content=content, tool_calls=[tool_call_dict(c) for c in calls],
                       finish_reason=getattr(choice, "finish_reason", None),
                       refusal=refusal if isinstance(refusal, str) and refusal else None), usage)


def response_cost(litellm: Any, response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        cost = hidden["response_cost"]  # litellm priced the reply already: pricing it again costs ~1 ms a call
    else:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # a model missing from the price list has no known cost
            return None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


def classified(litellm: Any, exc: Exception, request: ChatRequest) -> Failure:
    where = request.where
    detail = short(_LITELLM_PREFIX.sub("", redact(str(exc))))
    if isinstance(exc, litellm.Timeout):
        return Failure(f"timed out after {request.settings.timeout_s:g} s ({where})", retryable=True, outage=True)
    if _in_chain(exc, lambda e: isinstance(e, json.JSONDecodeError)):
        return Failure(f"malformed reply from {where}: the body is not JSON", retryable=True)
    network = _network_error(exc)
    if network is not None or isinstance(exc, litellm.APIConnectionError):
        # litellm reports a refused or dropped connection as an HTTP 500; the cause is deeper in the chain
        text = short(redact(str(network))) if network is not None else detail
        return Failure(f"cannot reach {where}: {text or type(network).__name__}", retryable=True, outage=True)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        headers = getattr(exc, "litellm_response_headers", None)
        if headers is None:
            headers = getattr(getattr(exc, "response", None), "headers", None)
        return http_failure(status, where, detail, headers)
    return Failure(f"{type(exc).__name__} calling {where}: {detail}", retryable=False)


# litellm prefixes messages with its class names: "litellm.BadRequestError: OpenAIException - <message>"
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def _in_chain(exc: BaseException, test: Callable[[BaseException], bool]) -> bool:
    seen: int = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        if test(cause):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _network_error(exc: BaseException) -> BaseException | None:
    """The transport-level error (refused, reset, dropped) behind a litellm exception, if any."""
    transport: tuple[type, ...] = ()
    try:
        import httpx
        import openai

        transport = (httpx.TransportError, openai.APIConnectionError)
    except ImportError:
        pass
    seen: int = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return cause
        if transport and isinstance(cause, transport):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


async def drain_logging_worker() -> None:
    """Let litellm's logging worker finish on this (the layer's) loop and stop it, so nothing of it is left
    for the interpreter's exit to complain about."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER as worker
    except Exception:
        return
    try:
        await asyncio.wait_for(worker.flush(), timeout=2)
    except Exception:
        pass
    try:
        await asyncio.wait_for(worker.stop(), timeout=2)
    except Exception:
        pass
