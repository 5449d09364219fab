"""A small tool-calling weather agent, traced by a real OpenTelemetry instrumentation, exported as OTLP/JSON.

    python tests/fakes/otel_agent.py OUT_ROOT BASE_URL DIALECT...

For each DIALECT, runs two conversations (two user turns each) with the `openai` client against BASE_URL (the
fake OpenAI server of the calling test), with DIALECT's instrumentation installed: `genai` (opentelemetry-
instrumentation-openai-v2, content on spans, bare), `genai-agent` (the same plus invoke_agent/execute_tool
spans with a conversation id, made with the SDK's tracer as GenAI frameworks do), `openinference`
(openinference-instrumentation-openai, AGENT/TOOL spans, session.id), `openllmetry` (Traceloop's
opentelemetry-instrumentation-openai, bare), `genai-events` (openai-v2 with the content only in log events,
written to the same file as a collector with one file exporter does), `logfire` (logfire.instrument_openai,
a span per turn), and Google ADK's own tracing (tests/fakes/otel_adk.py): `adk` (schema 2, content on spans),
`adk-legacy` (schema 1, gcp.vertex.agent.*), `adk-multi` / `adk-legacy-multi` (a root agent that transfers
to the weather agent). Writes OUT_ROOT/DIALECT/traces.otlp.json (one request), .../traces.jsonl (one request
per exported batch, as the collector's file exporter writes) and .../conversation-N.json (the same
conversation as the OpenAI messages the agent held).

Several dialects share a process (the imports are most of the cost) where nothing of
one leaks into the next: each dialect gets its own environment (restored after it), its own tracer provider
and collector, and its `openai` instrumentation is removed before the next dialect runs. What cannot be
undone decides the grouping, checked by `check_group`: `logfire` configures the global provider, so it comes
last; `genai-events` opts in to the experimental GenAI semantic conventions, which OpenTelemetry reads once
per process, so it shares a process with no other openai-v2 dialect; ADK's tracing goes to the global
provider, so the ADK dialects share a process with no other. And a
dialect whose instrumentation leaves its wrapper behind when removed (Traceloop's does) can only come last:
`main` stops if one did.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.otel_collect import exporter_class, log_collector
from tests.fakes.otel_weather import CONVERSATIONS, SYSTEM, TOOLS, get_weather


class Hooks:
    """Spans a framework adds around the instrumented model calls; none for a bare instrumentation."""

    def turn(self, conversation_id: str, text: str):
        return contextlib.nullcontext()

    def turn_answer(self, span, answer: str) -> None:
        pass

    def tool(self, conversation_id: str, call):
        return contextlib.nullcontext()

    def tool_result(self, span, result: str) -> None:
        pass


class GenAIHooks(Hooks):
    def __init__(self, tracer):
        self.tracer = tracer

    def turn(self, conversation_id, text):
        span = self.tracer.start_as_current_span("invoke_agent weather_agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent",
            "gen_ai.conversation.id": conversation_id,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])})
        return span

    def turn_answer(self, span, answer):
        span.set_attribute("gen_ai.output.messages", json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]))

    def tool(self, conversation_id, call):
        return self.tracer.start_as_current_span(f"execute_tool {call.function.name}", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id, "gen_ai.tool.call.arguments": call.function.arguments})

    def tool_result(self, span, result):
        span.set_attribute("gen_ai.tool.call.result", result)


class OpenInferenceHooks(Hooks):
    def __init__(self, tracer):
        self.tracer = tracer

    @contextlib.contextmanager
    def turn(self, conversation_id, text):
        from openinference.instrumentation import using_session

        with using_session(conversation_id), self.tracer.start_as_current_span("weather_agent", attributes={
                "openinference.span.kind": "AGENT", "agent.name": "weather_agent",
                "session.id": conversation_id, "input.value": text, "input.mime_type": "text/plain"}) as span:
            yield span

    def turn_answer(self, span, answer):
        span.set_attribute("output.value", answer)
        span.set_attribute("output.mime_type", "text/plain")

    def tool(self, conversation_id, call):
        return self.tracer.start_as_current_span(call.function.name, attributes={
            "openinference.span.kind": "TOOL", "tool.name": call.function.name,
            "tool.parameters": json.dumps(TOOLS[0]["function"]["parameters"]),  # the schema, as OpenInference does
            "input.value": call.function.arguments, "input.mime_type": "application/json"})

    def tool_result(self, span, result):
        span.set_attribute("output.value", result)


class LogfireHooks(Hooks):
    def turn(self, conversation_id, text):
        import logfire

        return logfire.span("agent turn {agent_name}", agent_name="weather_agent")


def install(dialect: str, out: Path):
    """Set up tracing for `dialect`: (provider, collector, hooks, logs collector or None, undo)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    collector = exporter_class()()
    if dialect == "logfire":  # configures the global provider: the last dialect of its process
        import logfire

        logfire.configure(send_to_logfire=False, console=False, service_name="weather",
                          additional_span_processors=[SimpleSpanProcessor(collector)])
        logfire.instrument_openai()
        from opentelemetry import trace

        return trace.get_tracer_provider(), collector, LogfireHooks(), None, lambda: None
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    tracer = provider.get_tracer("weather_agent_app")
    if dialect == "genai-events":  # the content only in log events: EVENT_ONLY, as the GenAI util emits them
        os.environ.update(OTEL_SEMCONV_STABILITY_OPT_IN="gen_ai_latest_experimental",
                          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only",
                          OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT="true")
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

        logs = log_collector()
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider, logger_provider=logger_provider)
        return provider, collector, Hooks(), logs, instrumentor.uninstrument
    if dialect in ("genai", "genai-agent"):
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from runner.report.otlp_json import json_lines_exporter

        # the README's one line: evalrun's exporter writes what the collector's file exporter would
        provider.add_span_processor(BatchSpanProcessor(json_lines_exporter(out / "exported.jsonl")))
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        return provider, collector, GenAIHooks(tracer) if dialect == "genai-agent" else Hooks(), None, \
            instrumentor.uninstrument
    if dialect == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        return provider, collector, OpenInferenceHooks(tracer), None, instrumentor.uninstrument
    if dialect == "openllmetry":
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        return provider, collector, Hooks(), None, instrumentor.uninstrument
    raise SystemExit(f"unknown dialect {dialect}")


def run_openai(dialect: str, base_url: str, out: Path) -> None:
    """The agent on the `openai` client, traced by `dialect`'s instrumentation, removed again at the end."""
    import openai

    provider, collector, hooks, logs, undo = install(dialect, out)
    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    try:
        for n, (conversation_id, turns) in enumerate(CONVERSATIONS, start=1):
            messages = converse(client, hooks, conversation_id, turns)
            (out / f"conversation-{n}.json").write_text(json.dumps(messages, indent=1, ensure_ascii=False))
    finally:
        undo()
    provider.shutdown()  # flushes the batch processors
    collector.write(out, logs.records if logs is not None else None)


def converse(client, hooks: Hooks, conversation_id: str, turns: list[str]) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": SYSTEM}]
    for text in turns:
        with hooks.turn(conversation_id, text) as turn_span:
            messages.append({"role": "user", "content": text})
            while True:
                reply = client.chat.completions.create(model="fake-model", messages=messages, tools=TOOLS)
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True, exclude={"refusal", "annotations", "audio"}))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    with hooks.tool(conversation_id, call) as tool_span:
                        result = json.dumps(get_weather(**json.loads(call.function.arguments)))
                        hooks.tool_result(tool_span, result)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            hooks.turn_answer(turn_span, message.content)
    return messages


OPENAI_V2 = ("genai", "genai-agent", "genai-events")


def check_group(dialects: list[str]) -> None:
    """Refuse a group whose dialects would leak into each other (see the module's doc)."""
    adk = [d for d in dialects if d.startswith("adk")]
    if adk and len(adk) < len(dialects):
        raise SystemExit("the ADK dialects go in a process of their own (ADK traces to the global provider)")
    if "logfire" in dialects[:-1]:
        raise SystemExit("logfire configures the global tracer provider: it must be the last dialect")
    if "genai-events" in dialects and len([d for d in dialects if d in OPENAI_V2]) > 1:
        raise SystemExit("genai-events opts in to semantic conventions read once per process: "
                         "no other openai-v2 dialect may share its process")


def openai_patch_points() -> tuple:
    """What the instrumentations wrap: chat completions' create, the client's request (as the classes hold them:
    a wrapper compares equal to what it wraps)."""
    import inspect

    import openai
    from openai.resources.chat.completions import AsyncCompletions, Completions

    points = ((Completions, "create"), (AsyncCompletions, "create"), (openai.OpenAI, "request"),
              (openai.AsyncOpenAI, "request"))
    return tuple(id(inspect.getattr_static(owner, name)) for owner, name in points)


@contextlib.contextmanager
def own_environment():
    """The dialect's environment variables end with it."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit("usage: python tests/fakes/otel_agent.py OUT_ROOT BASE_URL DIALECT...")
    out_root, base_url, dialects = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    check_group(dialects)
    patched = openai_patch_points() if not dialects[0].startswith("adk") else None
    for n, dialect in enumerate(dialects):
        out = out_root / dialect
        out.mkdir(parents=True, exist_ok=True)
        with own_environment():
            if dialect.startswith("adk"):
                from tests.fakes.otel_adk import run_adk

                run_adk(dialect, base_url, out)
            else:
                run_openai(dialect, base_url, out)
        if patched is not None and n < len(dialects) - 1 and openai_patch_points() != patched:
            raise SystemExit(f"{dialect} left `openai` instrumented after uninstrument(): run it last in its process")


if __name__ == "__main__":
    main()
