"""Recorded messages -> OpenAI-style messages, message by message, whatever their form.

Accepted: OpenAI chat messages, Anthropic content blocks (tool_use / tool_result), watsonx Orchestrate runs
(`type: text | tool_call | tool_response` with JSON strings in `content`) and tau2-bench simulations (tool calls
without the `function` wrapper, tool results carrying the call id in `id` and an `error` flag). A message of a form
other than role + content is told by its own keys (`_MESSAGE_DIALECTS`); any other is read by its role.
Normalization maps message i to message i (except Anthropic's tool results, one message each), so indices in a
trajectory also point into the recorded file. Which files hold messages is runner.transcripts.formats'.
"""
from __future__ import annotations

import json
from typing import Any

from ..util.deepjson import loads_keeping_deep_arguments
from .recording import TranscriptError

__all__ = ["MAX_ARGUMENT_NESTING", "content_text", "json_keeping_deep_arguments", "normalize_messages"]

MAX_ARGUMENT_NESTING = 100  # deeper arguments are kept as written but not read (as suite files, which nest no deeper)

# "developer" is OpenAI's newer name for the system role.
_ROLE_ALIASES = {"system": "system", "developer": "system", "user": "user",
                 "assistant": "assistant", "tool": "tool", "function": "tool"}

# Messages are numbered from 1 in every message a person reads ("message 1" is the first).

# Content blocks evalrun knows. Text kinds give the message its text; media kinds are kept in the
# recording but say nothing a goal can match; reasoning kinds are the model's private notes and are
# skipped on purpose. Tool blocks (Anthropic's tool_use / tool_result) become calls and results.
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text", "refusal"})
_MEDIA_BLOCKS = frozenset({"image", "image_url", "input_image", "input_audio", "audio", "file", "input_file", "document"})
_REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def content_text(content: Any) -> str:
    """Plain text of a message content: strings as-is, text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in _TEXT_BLOCKS:
                parts.append(str(part.get("text") or part.get("refusal") or ""))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _check_blocks(blocks: list, n: int, allowed: frozenset, where: str = "") -> None:
    """Every block is of a kind evalrun knows: an unknown one is never dropped in silence."""
    for j, block in enumerate(blocks, start=1):
        if isinstance(block, str):
            continue
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or not isinstance(kind, str):
            raise TranscriptError(f"message {n}: content block {j}{where} is not an object with a `type`")
        if kind not in allowed:
            known = sorted(allowed - _TOOL_BLOCKS) + sorted(allowed & _TOOL_BLOCKS)
            raise TranscriptError(
                f"message {n}: content block {j}{where} has type '{kind}', which evalrun does not know; it will not "
                f"leave it out silently (known: {', '.join(known)})")


def _watsonx_payload(msg: dict, n: int) -> dict:
    content = msg.get("content")
    if isinstance(content, str):
        try:
            content = json_keeping_deep_arguments(content)
        except json.JSONDecodeError as e:
            raise TranscriptError(
                f"message {n}: {msg['type']} content is not valid JSON: "
                f"{e.msg} (line {e.lineno} column {e.colno})") from None
        except ValueError as e:
            raise TranscriptError(f"message {n}: {msg['type']} content cannot be read: {e}") from None
    if not isinstance(content, dict):
        raise TranscriptError(f"message {n}: {msg['type']} content is not a JSON object")
    return content


def _normalize_call(call: Any, n: int, j: int) -> dict:
    if not isinstance(call, dict):
        raise TranscriptError(f"message {n}: tool call {j} is not an object")
    # OpenAI nests name/arguments under "function"; tau2 puts them at the top level.
    fn = nested if isinstance(nested := call.get("function"), dict) else call
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise TranscriptError(f"message {n}: tool call {j} has no name")
    return {"id": call.get("id"), "type": "function",
            "function": {"name": name, "arguments": fn.get("arguments")}}


def _is_watsonx_call(msg: dict) -> bool:
    return msg.get("type") == "tool_call"


def _watsonx_call(msg: dict, n: int) -> list[dict]:
    """watsonx: one call per message, role "assistant"."""
    p = _watsonx_payload(msg, n)
    call = _normalize_call({"id": p.get("id"), "name": p.get("name"),
                            "arguments": p.get("args", p.get("arguments"))}, n, 1)
    return [{"role": "assistant", "content": None, "tool_calls": [call]}]


def _is_watsonx_response(msg: dict) -> bool:
    return msg.get("type") == "tool_response"


def _watsonx_response(msg: dict, n: int) -> list[dict]:
    """watsonx: the role is "assistant" too, despite being a result."""
    p = _watsonx_payload(msg, n)
    out = {"role": "tool", "tool_call_id": p.get("tool_call_id"), "content": p.get("content")}
    if p.get("name") is not None:
        out["name"] = p["name"]
    if p.get("error"):
        out["error"] = True
    return [out]


def _normalize_one(msg: Any, n: int) -> list[dict]:
    """The normalised message(s) for recorded message number `n` (from 1). One, except for an
    Anthropic user message holding tool_result blocks: each result becomes a tool message."""
    if not isinstance(msg, dict):
        raise TranscriptError(f"message {n} is not an object (got {type(msg).__name__})")
    normalize = next((normalize for sniff, normalize in _MESSAGE_DIALECTS if sniff(msg)), _role_message)
    return normalize(msg, n)


def _role_message(msg: dict, n: int) -> list[dict]:
    """A message with a role: OpenAI's (and tau2-bench's, Anthropic's content blocks)."""
    if "role" not in msg:
        raise TranscriptError(f"message {n} has no role")
    role = _ROLE_ALIASES.get(msg["role"]) if isinstance(msg["role"], str) else None
    if role is None:
        raise TranscriptError(f"message {n} has unknown role {msg['role']!r}")
    content = msg.get("content")
    blocks = content if isinstance(content, list) else None

    if role == "assistant":
        if blocks is not None:
            _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS | _REASONING_BLOCKS | {"tool_use"})
        out = {"role": "assistant", "content": content_text(content) if blocks is not None else content}
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TranscriptError(f"message {n}: tool_calls is not a list")
        if isinstance(msg.get("function_call"), dict):  # legacy single-call form
            calls = calls + [msg["function_call"]]
        normalized = [_normalize_call(c, n, j) for j, c in enumerate(calls, start=1)]
        for block in blocks or []:  # Anthropic: the input is already an object
            if isinstance(block, dict) and block.get("type") == "tool_use":
                normalized.append(_normalize_call({"id": block.get("id"), "name": block.get("name"),
                                                   "arguments": block.get("input")}, n, len(normalized) + 1))
        if normalized:
            out["tool_calls"] = normalized
        return [out]
    if role == "tool":
        # tau2 puts the call id in "id"; the legacy "function" role has none at all.
        call_id = msg["tool_call_id"] if "tool_call_id" in msg else msg.get("id")
        if blocks is not None:
            _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS)
        out = {"role": "tool", "tool_call_id": call_id, "content": content}
        if msg.get("name") is not None:
            out["name"] = msg["name"]
        if msg.get("error"):
            out["error"] = True
        return [out]
    if blocks is None:
        return [{"role": role, "content": content}]
    _check_blocks(blocks, n, _TEXT_BLOCKS | _MEDIA_BLOCKS | (_TOOL_BLOCKS - {"tool_use"} if role == "user" else frozenset()))
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return [{"role": role, "content": content}]
    messages = [_anthropic_result(block, n) for block in results]
    rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    if rest:  # text the user wrote after the results
        messages.append({"role": role, "content": rest})
    return messages


# Messages of a form other than role + content, each told by its own keys (sniff, normalize); any other
# message is read by its role.
_MESSAGE_DIALECTS = ((_is_watsonx_call, _watsonx_call), (_is_watsonx_response, _watsonx_response))


def _anthropic_result(block: dict, n: int) -> dict:
    content = block.get("content")
    if isinstance(content, list):
        _check_blocks(content, n, _TEXT_BLOCKS | _MEDIA_BLOCKS, where=" of a tool_result")
        content = content_text(content)
    out = {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": content}
    if block.get("is_error"):
        out["error"] = True
    return out


def normalize_messages(raw: list[dict]) -> list[dict]:
    """Any supported recording format -> OpenAI-style messages: one for one, except that an
    Anthropic user message of tool_result blocks becomes one tool message per result.

    Raises TranscriptError naming the offending message by its number (from 1).
    """
    if not isinstance(raw, list):
        raise TranscriptError(f"messages must be a list, got {type(raw).__name__}")
    out: list[dict] = []
    for n, message in enumerate(raw, start=1):
        out.extend(_normalize_one(message, n))
    return out


def json_keeping_deep_arguments(text: str) -> Any:
    """json.loads, except that tool arguments nested too deep for it are kept as their JSON text."""
    try:
        return json.loads(text)
    except RecursionError:
        return loads_keeping_deep_arguments(text, MAX_ARGUMENT_NESTING)
