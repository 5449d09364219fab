"""Whole requests and responses kept as one JSON attribute, and the message shapes they hold.

Several dialects record a model call as the request and response objects themselves rather than as
GenAI parts: OpenInference's `input.value` / `output.value` (when its flattened messages are absent),
LangSmith's `gen_ai.prompt` / `gen_ai.completion`, Langfuse's `langfuse.observation.input` / `.output`,
the Vercel AI SDK's `ai.prompt.messages` / `ai.response.*`, Logfire's `request_data` / `response_data`.
`any_message` reads the message shapes they carry: OpenAI chat messages (`tool_calls`, `tool_call_id`),
content parts in OpenAI's, Anthropic's (`tool_use`, `tool_result`) and the AI SDK's (`tool-call`,
`tool-result`) spelling, and GenAI parts.
"""
from __future__ import annotations

from typing import Any

from .views import AttributeReader, Call, Message, Result

__all__ = ["any_message", "request_messages", "response_messages"]

_TEXT_PARTS = {"text", "input_text", "output_text"}
_CALL_PARTS = {"tool-call", "tool_use", "tool_call", "function_call"}
_RESULT_PARTS = {"tool-result", "tool_result", "tool_call_response", "function_call_output"}


def any_message(item: dict, default_role: str = "assistant") -> Message:
    role = given if isinstance(given := item.get("role"), str) else default_role
    role = {"model": "assistant", "function": "tool", "ai": "assistant", "human": "user"}.get(role, role)
    message = Message(role=role)
    content = item.get("content", item.get("parts"))
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                _part(part, message, texts)
    for call in item.get("tool_calls") or []:
        if isinstance(call, dict):
            fn = nested if isinstance(nested := call.get("function"), dict) else call
            message.calls.append(Call(_id(call.get("id") or call.get("toolCallId")),
                                      _text(fn.get("name") or fn.get("toolName")),
                                      _first(fn, "arguments", "args", "input")))
    if role == "tool" and not message.results:
        message.results.append(Result(_id(item.get("tool_call_id") or item.get("id")),
                                      _text(item.get("name")) or None, "\n".join(texts) if texts else content))
        return message
    message.text = "\n".join(t for t in texts if t) or None
    return message


def _part(part: dict, message: Message, texts: list[str]) -> None:
    kind = part.get("type")
    if kind is None and _keyed_part(part, message):
        return
    if kind in _TEXT_PARTS or (kind is None and isinstance(part.get("text"), str)):
        texts.append(_text(part.get("text") if "text" in part else part.get("content")))
    elif kind in _CALL_PARTS:
        message.calls.append(Call(_id(part.get("toolCallId") or part.get("id") or part.get("call_id")),
                                  _text(part.get("toolName") or part.get("name")),
                                  _first(part, "input", "args", "arguments")))
    elif kind in _RESULT_PARTS:
        output = _first(part, "output", "result", "response", "content")
        if isinstance(output, dict) and set(output) <= {"type", "value"} and "value" in output:
            output = output["value"]  # the AI SDK's {type: "json" | "text", value}
        message.results.append(Result(_id(part.get("toolCallId") or part.get("tool_use_id") or part.get("id")
                                          or part.get("call_id")),
                                      _text(part.get("toolName") or part.get("name")) or None, output))


def _keyed_part(part: dict, message: Message) -> bool:
    """Parts named by their one key: Bedrock's Converse blocks (`toolUse`, `toolResult`, as Strands Agents
    records them) and Gemini's (`functionCall`, `functionResponse`)."""
    use = part.get("toolUse")
    if isinstance(use, dict):
        message.calls.append(Call(_id(use.get("toolUseId")), _text(use.get("name")), use.get("input")))
        return True
    answer = part.get("toolResult")
    if isinstance(answer, dict):
        content = answer.get("content")
        if isinstance(content, list):  # [{"text": ...} | {"json": ...}]
            pieces = [c.get("text") if "text" in c else c.get("json") for c in content if isinstance(c, dict)]
            content = pieces[0] if len(pieces) == 1 else pieces
        message.results.append(Result(_id(answer.get("toolUseId")), None, content))
        return True
    for key in ("functionCall", "function_call"):
        call = part.get(key)
        if isinstance(call, dict):
            message.calls.append(Call(_id(call.get("id")), _text(call.get("name")), call.get("args")))
            return True
    for key in ("functionResponse", "function_response"):
        answer = part.get(key)
        if isinstance(answer, dict):
            message.results.append(Result(_id(answer.get("id")), _text(answer.get("name")) or None,
                                          answer.get("response")))
            return True
    return False


def request_messages(value: Any) -> list[Message] | None:
    """The messages of a request: a list of messages, or an object with `messages` (and `system`), or a
    bare prompt; None when the value holds none of these."""
    if isinstance(value, str):
        return [Message("user", text=value)] if value else []
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return [any_message(m, "user") for m in value]
    if isinstance(value, dict):
        messages = value.get("messages")
        out = []
        if isinstance(value.get("system"), str):
            out.append(Message("system", text=value["system"]))
        if isinstance(messages, list):
            return out + [any_message(m, "user") for m in messages if isinstance(m, dict)]
        if isinstance(value.get("prompt"), str):
            return out + [Message("user", text=value["prompt"])]
        if isinstance(value.get("input"), str):
            return out + [Message("user", text=value["input"])]
    return None


def response_messages(value: Any) -> list[Message] | None:
    """The model's answer in a response: OpenAI's `choices`, a message, a list of messages (the
    assistant's), or bare text; None when the value holds none of these."""
    if isinstance(value, str):
        return [Message("assistant", text=value)] if value else []
    if isinstance(value, dict):
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            return [any_message(message)] if isinstance(message, dict) else None
        if isinstance(value.get("message"), dict):
            return [any_message(value["message"])]
        if "role" in value:
            return [any_message(value)]
        for key in ("output", "text", "content", "answer"):
            if isinstance(value.get(key), str):
                return [Message("assistant", text=value[key])]
        return None
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return [any_message(m) for m in value if m.get("role") in ("assistant", "model", "ai")]
    return None


def read_pair(r: AttributeReader, input_key: str, output_key: str) -> tuple[list[Message] | None,
                                                                           list[Message] | None]:
    """(inputs, outputs) from a request and a response attribute; None for one that says nothing."""
    inputs = request_messages(r.json(input_key, text_ok=True)) if input_key in r.span.attributes else None
    outputs = response_messages(r.json(output_key, text_ok=True)) if output_key in r.span.attributes else None
    return inputs, outputs


def _first(item: dict, *keys: str) -> Any:
    for key in keys:
        if key in item:
            return item[key]
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None
