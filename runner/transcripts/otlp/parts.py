"""OpenTelemetry's GenAI message shape: `[{"role", "parts": [...]}]`, as each producer writes it.

Producers differ (measured in /work/notes/otlp.md §5): tool-call `arguments` an object or a JSON string,
a tool result under `response` or `result`, under role `tool` or `user`; unknown part types (reasoning,
blob, uri) say nothing a goal checks and are passed over.
"""
from __future__ import annotations

from typing import Any

from .blobs import any_message
from .views import AttributeReader, Call, Message, Result

__all__ = ["genai_messages", "part_text"]


def genai_messages(r: AttributeReader, key: str, value: Any) -> list[Message]:
    if value is None:
        return []
    if not isinstance(value, list):
        r.problem(key, f"expected a list of messages, got {type(value).__name__}")
        return []
    out = []
    for n, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            r.problem(key, f"message {n} has no role")
            continue
        parts = item.get("parts")
        if parts is None and "content" in item:  # an OpenAI-shaped message in the same attribute
            out.append(any_message(item))
            continue
        if isinstance(parts, str):  # Logfire and others may nest a JSON string
            parts = r.decode(key, parts)
        if not isinstance(parts, list):
            r.problem(key, f"message {n} has no list of parts")
            continue
        message = Message(role=item["role"])
        texts = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(_text(part.get("content")))
            elif kind == "tool_call":
                message.calls.append(Call(_id(part.get("id")), _text(part.get("name")), part.get("arguments")))
            elif kind == "tool_call_response":
                content = part["response"] if "response" in part else part.get("result")
                message.results.append(Result(_id(part.get("id")), _text(part.get("name")) or None, content))
            # reasoning, blob, file, uri and server-side tool parts say nothing a goal checks
        message.text = "\n".join(t for t in texts if t) or None
        out.append(message)
    return out


def part_text(part: dict) -> str:
    return _text(part.get("content")) if part.get("type", "text") == "text" else ""


# --------------------------------------------------------------------------- OpenAI-shaped messages



def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None
