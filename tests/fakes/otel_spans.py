"""Traces built span by span with the real OpenTelemetry SDK, encoded as OTLP/JSON by evalrun's encoder.

For shapes no installed instrumentation makes here (ADK's attributes, sub-agents, the SDK's attribute
limits cutting values short), tests set the documented attribute names on real SDK spans:

    traces = Traces(max_span_attribute_length=120)
    with traces.span("invoke_agent weather_agent", {"gen_ai.operation.name": "invoke_agent"}):
        ...
    traces.write(path)            # one OTLP request; traces.write(path, lines=True): one span per line
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from runner.report.otlp_json import spans_document, spans_json_line


class Traces:
    def __init__(self, **limits: Any) -> None:
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(span_limits=SpanLimits(**limits))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("evalrun-tests")

    @contextmanager
    def span(self, name: str, attributes: dict | None = None) -> Iterator[Any]:
        with self.tracer.start_as_current_span(name, attributes=attributes or {}) as span:
            yield span

    @property
    def spans(self) -> list:
        return list(self.exporter.get_finished_spans())

    def document(self) -> dict:
        return spans_document(self.spans)

    def write(self, path: Path, *, lines: bool = False) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if lines:
            path.write_text("".join(spans_json_line([s]) + "\n" for s in self.spans), encoding="utf-8")
        else:
            path.write_text(json.dumps(self.document(), ensure_ascii=False), encoding="utf-8")
        return path


def parts(role: str, *items: dict, finish_reason: str | None = None) -> dict:
    message: dict[str, Any] = {"role": role, "parts": list(items)}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return message


def text(content: str) -> dict:
    return {"type": "text", "content": content}


def call(call_id: str, name: str, arguments: Any) -> dict:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def response(call_id: str, value: Any) -> dict:
    return {"type": "tool_call_response", "id": call_id, "response": value}


def genai_turn(traces: Traces, conversation_id: str | None, history: list[dict], user: str,
               tool_calls: list[tuple[str, str, dict, Any]], answer: str, agent: str = "weather_agent") -> list[dict]:
    """One user turn as a GenAI framework traces it (invoke_agent > chat, execute_tool..., chat), with the
    messages as JSON strings; returns the history after the turn."""
    conversation = {"gen_ai.conversation.id": conversation_id} if conversation_id else {}
    history = history + [parts("user", text(user))]
    with traces.span(f"invoke_agent {agent}", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
                                               **conversation}):
        if tool_calls:
            output = parts("assistant", *[call(i, n, a) for i, n, a, _ in tool_calls], finish_reason="tool_call")
            chat(traces, history, output, agent)
            history = history + [output]
            for call_id, name, arguments, result in tool_calls:
                with traces.span(f"execute_tool {name}", {
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
                        "gen_ai.tool.call.arguments": json.dumps(arguments), "gen_ai.tool.call.result": json.dumps(result)}):
                    pass
            history = history + [parts("tool", *[response(i, json.dumps(r)) for i, _, _, r in tool_calls])]
        final = parts("assistant", text(answer), finish_reason="stop")
        chat(traces, history, final, agent)
    return history + [final]


def chat(traces: Traces, history: list[dict], output: dict, agent: str | None = None) -> None:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-model",
                  "gen_ai.input.messages": json.dumps(history), "gen_ai.output.messages": json.dumps([output])}
    if agent:
        attributes["gen_ai.agent.name"] = agent
    with traces.span("chat fake-model", attributes):
        pass
