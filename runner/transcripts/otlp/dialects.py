"""What one span says about a conversation, whatever instrumentation wrote it.

Each reader below knows one dialect's attribute names and turns them into the same plain view:
messages the model saw (`inputs`), messages it produced (`outputs`), or a tool run. The dialects
are the ones teams export: OpenTelemetry's GenAI conventions (parts JSON on spans, structured values,
the older per-message events), OpenInference (`llm.input_messages.N.message.*`), OpenLLMetry up to
0.54 (`gen_ai.prompt.N.*`), Google ADK's legacy `gcp.vertex.agent.*` request/response JSON, Logfire's
`request_data`/`response_data`, and Traceloop's `traceloop.entity.*`. A value that cannot be read is a
`Problem` naming the span and attribute; it never stops the other spans from being read.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .blobs import any_message, read_pair, request_messages
from .events import read_events
from .parts import genai_messages, part_text
from .spans import Span
from .views import AttributeReader, Call, Message, Result, SpanView, ToolRun

__all__ = ["CONVERSATION_KEYS", "is_adk_context", "view_span"]

# Where each dialect keeps the conversation's id, most specific first.
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id", "gcp.vertex.agent.session_id",
                     "traceloop.association.properties.conversation_id",
                     "traceloop.association.properties.session_id", "langsmith.trace.session_id",
                     "langfuse.session.id", "ai.telemetry.metadata.conversationId", "ai.telemetry.metadata.sessionId")
_VERCEL_AGENTS = {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
_CHAT_OPERATIONS = {"chat", "generate_content", "text_completion"}
# ADK hands a conversation to a sub-agent by rewriting the other agent's turns as user text.
_ADK_CONTEXT = "For context:"


def view_span(span: Span) -> SpanView:
    a = span.attributes
    view = SpanView(kind=_kind(span))
    view.agent_name = _first_text(a, "gen_ai.agent.name", "agent.name") or (
        _text(a.get("traceloop.entity.name")) if a.get("traceloop.span.kind") == "agent" else None)
    view.conversation_id = _first_text(a, *CONVERSATION_KEYS)
    reader = AttributeReader(span, view.problems)
    for read in _MESSAGE_READERS:
        if view.inputs is None and view.outputs is None:
            read(reader, view)
    if view.kind == "tool":
        view.tool = _tool_run(reader)
    if view.inputs is None and view.outputs is None and span.events:
        read_events(reader, view)
    if view.system is None:
        system = reader.json("gen_ai.system_instructions")
        if isinstance(system, list):
            view.system = "\n".join(part_text(p) for p in system if isinstance(p, dict)) or None
        elif isinstance(system, str):
            view.system = system
    return view


def _kind(span: Span) -> str:
    a = span.attributes
    operation = a.get("gen_ai.operation.name")
    oi_kind = str(a.get("openinference.span.kind", "")).upper()
    tl_kind = a.get("traceloop.span.kind")
    ls_kind = a.get("langsmith.span.kind")
    lf_kind = a.get("langfuse.observation.type")
    vercel = str(a.get("ai.operationId") or "")
    if operation == "create_agent":
        return "other"
    if (operation == "invoke_agent" or oi_kind == "AGENT" or tl_kind == "agent" or lf_kind == "agent"
            or vercel in _VERCEL_AGENTS):
        return "agent"
    if (operation == "execute_tool" or oi_kind == "TOOL" or tl_kind == "tool" or ls_kind == "tool"
            or lf_kind == "tool" or vercel == "ai.toolCall"):
        return "tool"
    if "gcp.vertex.agent.tool_call_args" in a or "gcp.vertex.agent.tool_response" in a:
        return "tool"
    if (operation in _CHAT_OPERATIONS or oi_kind == "LLM" or a.get("llm.request.type") == "chat"
            or ls_kind == "llm" or lf_kind == "generation" or vercel.endswith((".doGenerate", ".doStream"))
            or _adk_request(a) or "request_data" in a or any(k.startswith("gen_ai.prompt.") for k in a)):
        return "chat"
    return "other"


def _adk_request(a: dict) -> bool:
    value = a.get("gcp.vertex.agent.llm_request")
    return isinstance(value, str) and value.strip() not in ("", "{}")


# --------------------------------------------------------------------------- the GenAI parts shape

def _read_genai(r: AttributeReader, view: SpanView) -> None:
    a = r.span.attributes
    if "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a:
        return
    view.inputs = genai_messages(r, "gen_ai.input.messages", r.json("gen_ai.input.messages"))
    view.outputs = genai_messages(r, "gen_ai.output.messages", r.json("gen_ai.output.messages"))


def _read_logfire_v1(r: AttributeReader, view: SpanView) -> None:
    a = r.span.attributes
    if "request_data" not in a:
        return
    request = r.json("request_data")
    response = r.json("response_data")
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list):
        return
    view.inputs = [any_message(m) for m in messages if isinstance(m, dict)]
    message = response.get("message") if isinstance(response, dict) else None
    view.outputs = [any_message(message)] if isinstance(message, dict) else []


# --------------------------------------------------------------------------- flattened, indexed keys

def _indexed(a: dict, prefix: str) -> dict[int, dict[str, Any]]:
    """`prefix.N.rest` keys grouped by N (as a number: 10 comes after 2), each as {rest: value}."""
    pattern = re.compile(re.escape(prefix) + r"\.(\d{1,6})\.(.+)")
    groups: dict[int, dict[str, Any]] = {}
    for key, value in a.items():
        match = pattern.fullmatch(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return dict(sorted(groups.items()))


def _flat_message(fields: dict[str, Any], *, role_key: str, content_key: str, call_prefix: str,
                  call_keys: tuple[str, str, str], result_id_key: str) -> Message:
    role = _text(fields.get(role_key)) or "unknown"
    message = Message(role=role)
    content = fields.get(content_key)
    if content is None:  # OpenInference's list content: contents.K.message_content.text
        pieces = _indexed(fields, content_key + "s")
        content = "\n".join(_text(p.get("message_content.text")) for p in pieces.values()
                            if p.get("message_content.text")) or None
    if role == "tool":
        message.results.append(Result(_id(fields.get(result_id_key)), None, content))
        return message
    message.text = content if isinstance(content, str) and content else None
    id_key, name_key, args_key = call_keys
    for call in _indexed(fields, call_prefix).values():
        message.calls.append(Call(_id(call.get(id_key)), _text(call.get(name_key)), call.get(args_key)))
    return message


def _read_openinference(r: AttributeReader, view: SpanView) -> None:
    a = r.span.attributes
    if not any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        return
    spec: dict[str, Any]
    spec = {"role_key": "message.role", "content_key": "message.content", "call_prefix": "message.tool_calls",
                "call_keys": ("tool_call.id", "tool_call.function.name", "tool_call.function.arguments"),
                "result_id_key": "message.tool_call_id"}
    view.inputs = [_flat_message(f, **spec) for f in _indexed(a, "llm.input_messages").values()]
    view.outputs = [_flat_message(f, **spec) for f in _indexed(a, "llm.output_messages").values()]
    _note_dropped(r)


def _read_openllmetry_flat(r: AttributeReader, view: SpanView) -> None:
    a = r.span.attributes
    if not any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in a):
        return
    spec: dict[str, Any] = {"role_key": "role", "content_key": "content", "call_prefix": "tool_calls",
                "call_keys": ("id", "name", "arguments"), "result_id_key": "tool_call_id"}
    view.inputs = [_flat_message(f, **spec) for f in _indexed(a, "gen_ai.prompt").values()]
    view.outputs = [_flat_message(f, **spec) for f in _indexed(a, "gen_ai.completion").values()]
    _note_dropped(r)


def _note_dropped(r: AttributeReader) -> None:
    if r.span.dropped_attributes:
        r.problem("", f"{r.span.dropped_attributes} attributes were dropped at the span's attribute limit "
                      "(OTEL_ATTRIBUTE_COUNT_LIMIT); flattened messages lose the oldest ones first")


# --------------------------------------------------------------------------- Google ADK, legacy schema

def _read_adk_legacy(r: AttributeReader, view: SpanView) -> None:
    if not _adk_request(r.span.attributes):
        return
    request = r.json("gcp.vertex.agent.llm_request")
    response = r.json("gcp.vertex.agent.llm_response")
    if not isinstance(request, dict):
        return
    config = given if isinstance(given := request.get("config"), dict) else {}
    if isinstance(config.get("system_instruction"), str):
        view.system = config["system_instruction"]
    view.inputs = [_adk_content(c) for c in request.get("contents") or [] if isinstance(c, dict)]
    content = response.get("content") if isinstance(response, dict) else None
    view.outputs = [_adk_content(content)] if isinstance(content, dict) else []


def _adk_content(content: dict) -> Message:
    role = {"model": "assistant"}.get(_text(content.get("role")), _text(content.get("role")) or "user")
    message = Message(role=role)
    texts = []
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
        call = part.get("function_call")
        if isinstance(call, dict):
            message.calls.append(Call(_id(call.get("id")), _text(call.get("name")), call.get("args")))
        answer = part.get("function_response")
        if isinstance(answer, dict):
            message.results.append(Result(_id(answer.get("id")), _text(answer.get("name")) or None,
                                          answer.get("response")))
    message.text = "\n".join(texts) or None
    return message


# --------------------------------------------------------------------------- requests and responses as JSON

def _read_vercel(r: AttributeReader, view: SpanView) -> None:
    """The Vercel AI SDK: `ai.prompt.messages` on each provider call, `ai.prompt` on the call around them,
    the answer as `ai.response.text` and `ai.response.toolCalls`."""
    a = r.span.attributes
    if view.kind == "chat" and "ai.prompt.messages" in a:
        view.inputs = request_messages(r.json("ai.prompt.messages")) or []
    elif view.kind == "agent" and "ai.prompt" in a:
        view.inputs = request_messages(r.json("ai.prompt", text_ok=True)) or []
    else:
        return
    answer = Message("assistant", text=a.get("ai.response.text") or None)
    calls = r.json("ai.response.toolCalls") if "ai.response.toolCalls" in a else None
    if view.kind == "chat":
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                answer.calls.append(Call(_id(call.get("toolCallId")), _text(call.get("toolName")),
                                         call["input"] if "input" in call else call.get("args")))
    view.outputs = [answer] if answer.text or answer.calls else []


def _read_request_response(r: AttributeReader, view: SpanView) -> None:
    """A model call kept as its request and response: LangSmith, Langfuse, OpenInference without its
    flattened messages."""
    if view.kind not in ("chat", "agent"):
        return
    for input_key, output_key in (("langfuse.observation.input", "langfuse.observation.output"),
                                  ("gen_ai.prompt", "gen_ai.completion"), ("input.value", "output.value")):
        if view.kind == "agent" and input_key == "input.value":
            continue  # an agent's input.value is its turn's text: _read_io_values
        inputs, outputs = read_pair(r, input_key, output_key)
        if inputs is not None or outputs is not None:
            view.inputs, view.outputs = inputs or [], outputs or []
            return


# --------------------------------------------------------------------------- OpenInference agent spans

def _read_io_values(r: AttributeReader, view: SpanView) -> None:
    """An agent span's `input.value`/`output.value` (OpenInference) as the turn's user text and answer."""
    a = r.span.attributes
    if view.kind != "agent" or ("input.value" not in a and "output.value" not in a):
        return
    user = a.get("input.value")
    answer = a.get("output.value")
    view.inputs = [Message("user", text=user)] if isinstance(user, str) and user else []
    view.outputs = [Message("assistant", text=answer)] if isinstance(answer, str) and answer else []
    if a.get("input.mime_type") == "application/json" or a.get("output.mime_type") == "application/json":
        view.inputs, view.outputs = [], []  # a framework's call arguments, not a turn's text


_MESSAGE_READERS: list[Callable[[AttributeReader, SpanView], None]] = [
    _read_genai, _read_openinference, _read_openllmetry_flat, _read_adk_legacy, _read_logfire_v1, _read_vercel,
    _read_io_values, _read_request_response]


# --------------------------------------------------------------------------- the older per-message events

def _tool_run(r: AttributeReader) -> ToolRun:
    a = r.span.attributes
    name = (_first_text(a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name") or _text(a.get("traceloop.entity.name"))
            or r.span.name.removeprefix("execute_tool ").strip())
    run = ToolRun(id=_id(a.get("gen_ai.tool.call.id") or a.get("tool.id") or a.get("tool_call.id")
                         or a.get("ai.toolCall.id")), name=name)
    if "gen_ai.tool.call.arguments" in a and str(a.get("openinference.span.kind", "")).upper() != "TOOL":
        run.arguments = r.json("gen_ai.tool.call.arguments", text_ok=True)
    elif "gcp.vertex.agent.tool_call_args" in a:
        run.arguments = r.json("gcp.vertex.agent.tool_call_args")
    elif "traceloop.entity.input" in a:
        entity = r.json("traceloop.entity.input")
        if isinstance(entity, dict) and isinstance(entity.get("kwargs"), dict) and not entity.get("args"):
            run.arguments = entity["kwargs"]
    else:  # OpenInference (tool.parameters is the schema), the AI SDK, Langfuse, LangSmith
        key: str | None
        key = next((k for k in ("input.value", "ai.toolCall.args", "ai.toolCall.input", "langfuse.observation.input",
                                "gen_ai.prompt") if k in a), None)
        if key is not None:
            run.arguments = r.json(key, text_ok=True)
    for key in ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response", "traceloop.entity.output",
                "output.value", "ai.toolCall.result", "ai.toolCall.output", "langfuse.observation.output",
                "gen_ai.completion"):
        if key in a:
            run.result, run.has_result = a[key], True
            break
    return run


# --------------------------------------------------------------------------- small helpers

def _first_text(a: dict, *keys: str) -> str | None:
    for key in keys:
        value = a.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


def is_adk_context(text: str | None) -> bool:
    return bool(text and text.lstrip().startswith(_ADK_CONTEXT))
