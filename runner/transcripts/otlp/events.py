"""GenAI events: each message of a model call as an event of its own, a log record or a span event.

Log records keep the message in `body` (`gen_ai.user.message` ... `gen_ai.choice`, or the newer
`gen_ai.client.inference.operation.details` with the whole input and output as attributes). Span events
keep it in their attributes: one JSON attribute `gen_ai.event.content`, or the fields themselves; the
older `gen_ai.content.prompt` / `gen_ai.content.completion` events hold the request's messages and the
response.
"""
from __future__ import annotations

from typing import Any

from .blobs import any_message, request_messages, response_messages
from .parts import genai_messages, part_text
from .views import AttributeReader, Message, SpanView

__all__ = ["read_events"]


_MESSAGE_EVENTS = ("gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message")
_EVENT_FIELDS = ("content", "message", "id", "tool_calls", "role", "finish_reason")


def read_events(r: AttributeReader, view: SpanView) -> None:
    """The messages of GenAI events: log records (`body`) or span events (their attributes, or one JSON
    attribute `gen_ai.event.content`), and the older
    `gen_ai.content.prompt` / `gen_ai.content.completion` span events."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in sorted(r.span.events, key=lambda e: (e.time, e.position)):
        name = event.event_name
        if name == "gen_ai.client.inference.operation.details":
            inputs += genai_messages(r, "gen_ai.input.messages", _structured(r, event.attributes, "gen_ai.input.messages"))
            outputs += genai_messages(r, "gen_ai.output.messages",
                                       _structured(r, event.attributes, "gen_ai.output.messages"))
            system = _structured(r, event.attributes, "gen_ai.system_instructions")
            if isinstance(system, list) and view.system is None:
                view.system = "\n".join(part_text(p) for p in system if isinstance(p, dict)) or None
        elif name == "gen_ai.content.prompt":
            inputs += request_messages(_structured(r, event.attributes, "gen_ai.prompt")) or []
        elif name == "gen_ai.content.completion":
            outputs += response_messages(_structured(r, event.attributes, "gen_ai.completion")) or []
        elif name in _MESSAGE_EVENTS:
            body = _event_body(r, event)
            item = {"role": name.split(".")[1], "content": body.get("content"), "tool_calls": body.get("tool_calls"),
                    "tool_call_id": body.get("id")}
            inputs.append(any_message(item))
        elif name == "gen_ai.choice":
            message = _event_body(r, event).get("message")
            if isinstance(message, dict):
                outputs.append(any_message({"role": "assistant", **message}))
            elif isinstance(message, list):  # the message's content blocks alone
                outputs.append(any_message({"role": "assistant", "content": message}))
    if inputs or outputs:
        view.inputs, view.outputs = inputs, outputs


def _event_body(r: AttributeReader, event: Any) -> dict:
    if isinstance(event.body, dict) and event.body:
        return event.body
    attributes = event.attributes
    if "gen_ai.event.content" in attributes:
        content = _structured(r, attributes, "gen_ai.event.content")
        return content if isinstance(content, dict) else {}
    body = {}
    for key in _EVENT_FIELDS:  # Strands and others: the fields as attributes, JSON kept as strings
        value = attributes.get(key)
        if isinstance(value, str) and value.strip()[:1] in ("{", "["):
            value = r.decode(key, value, text_ok=True)
        if value is not None:
            body[key] = value
    return body


def _structured(r: AttributeReader, attributes: dict, key: str) -> Any:
    value = attributes.get(key)
    return r.decode(key, value) if isinstance(value, str) else value


# --------------------------------------------------------------------------- tool runs
