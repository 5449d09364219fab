"""A small tool-calling weather agent, traced by a real OpenTelemetry instrumentation, exported as OTLP/JSON.

    python tests/fakes/otel_agent.py DIALECT OUT_DIR BASE_URL
    python tests/fakes/otel_agent.py adk+adk-multi OUT_ROOT BASE_URL    (OUT_ROOT/adk, OUT_ROOT/adk-multi)

Runs two conversations (two user turns each) with the `openai` client against BASE_URL (the fake OpenAI
server of the calling test), with DIALECT's instrumentation installed: `genai` (opentelemetry-
instrumentation-openai-v2, content on spans, bare), `genai-agent` (the same plus invoke_agent/execute_tool
spans with a conversation id, made with the SDK's tracer as GenAI frameworks do), `openinference`
(openinference-instrumentation-openai, AGENT/TOOL spans, session.id), `openllmetry` (Traceloop's
opentelemetry-instrumentation-openai, bare), `genai-events` (openai-v2 with the content only in log events,
written to the same file as a collector with one file exporter does), `logfire` (logfire.instrument_openai, a span per turn), and
Google ADK's own tracing: `adk` (schema 2, content on spans), `adk-legacy` (schema 1, gcp.vertex.agent.*),
`adk-multi` / `adk-legacy-multi` (a root agent that transfers to the weather agent).
Writes OUT_DIR/traces.otlp.json (one request), OUT_DIR/traces.jsonl (one request per exported batch, as
the collector's file exporter writes) and OUT_DIR/conversation-N.json (the same conversation as the OpenAI
messages the agent held), and prints the conversation ids as JSON. Runs in its own process because
instrumentations patch the `openai` module for good. Google ADK's dialects of one schema may share a process
(`adk+adk-multi`, `adk-legacy+adk-legacy-multi`: the schema is read from the environment, the rest is the agents
made): ADK brings litellm, ~9 s of imports a process.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SYSTEM = "You are a weather assistant. Use get_weather for weather questions."
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
WEATHER = {"Paris": (18, "sunny"), "Tokyo": (12, "rainy"), "London": (9, "cloudy"), "Oslo": (-2, "snowy")}
CONVERSATIONS = [("conv-weather-0001", ["What's the weather in Paris?", "And in Tokyo?"]),
                 ("conv-weather-0002", ["What's the weather in London?", "And in Oslo?"])]


def weather_model(request: dict):
    """The fake server's model: a user question -> a get_weather call; a tool result -> the answer."""
    from tests.fakes.openai_server import Reply, tool_call

    messages = request["messages"]
    last = messages[-1]
    if "Delegate" in json.dumps(messages[0]) and last["role"] == "user":  # ADK's root agent hands over
        return Reply(tool_calls=[tool_call("transfer_to_agent", {"agent_name": "weather_agent"}, "call_transfer")])
    if last["role"] == "tool":
        data = json.loads(last["content"])
        return Reply(content=f"It is {data['condition']} and {data['temperature_c']}\u00b0C in {data['city']}.")
    asked = [m for m in messages if m["role"] == "user" and "For context" not in json.dumps(m)]
    text = asked[-1]["content"] if isinstance(asked[-1]["content"], str) else json.dumps(asked[-1]["content"])
    city = next(c for c in WEATHER if c in text)
    calls = sum(len(m.get("tool_calls") or []) for m in messages)
    return Reply(tool_calls=[tool_call("get_weather", {"city": city}, f"call_{calls + 1:03d}")])


def get_weather(city: str) -> dict:
    temperature, condition = WEATHER[city]
    return {"city": city, "temperature_c": temperature, "condition": condition}


class Collector:
    """A SpanExporter keeping every exported batch, to write them as OTLP/JSON."""

    def __init__(self):
        self.batches: list[list] = []

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def write(self, out: Path, logs: list | None = None) -> None:
        """traces.otlp.json: one request; traces.jsonl: a request per batch. Log records (GenAI events),
        when there are any, follow as a logs request of their own, as a collector's single file exporter
        for both pipelines writes them (then traces.otlp.json holds two compact lines)."""
        from runner.report.otlp_json import spans_document, spans_json_line

        every = [span for batch in self.batches for span in batch]
        lines = "".join(spans_json_line(b) + "\n" for b in self.batches if b)
        if logs:
            events = logs_json_line(logs) + "\n"
            (out / "traces.otlp.json").write_text(spans_json_line(every) + "\n" + events)
            (out / "traces.jsonl").write_text(lines + events)
            return
        (out / "traces.otlp.json").write_text(json.dumps(spans_document(every), indent=1, ensure_ascii=False))
        (out / "traces.jsonl").write_text(lines)


def logs_json_line(records: list) -> str:
    """SDK log records as one OTLP/JSON logs request (hex ids, as the OTLP JSON encoding wants)."""
    import base64

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    def hexed(node):
        if isinstance(node, dict):
            return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId") and isinstance(v, str) else hexed(v)
                    for k, v in node.items()}
        return [hexed(v) for v in node] if isinstance(node, list) else node

    return json.dumps(hexed(MessageToDict(encode_logs(records), use_integers_for_enums=True)), ensure_ascii=False)


def log_collector():
    """A log record exporter keeping every record (the class name differs between SDK versions)."""
    try:
        from opentelemetry.sdk._logs.export import LogRecordExporter as Base, LogRecordExportResult as Done
    except ImportError:
        from opentelemetry.sdk._logs.export import LogExporter as Base, LogExportResult as Done

    class Records(Base):
        def __init__(self):
            self.records: list = []

        def export(self, batch):
            self.records.extend(batch)
            return Done.SUCCESS

        def shutdown(self):
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return Records()


def exporter_class():
    from opentelemetry.sdk.trace.export import SpanExporter

    return type("CollectorExporter", (Collector, SpanExporter), {})


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


def install(dialect: str):
    """Set up tracing for `dialect`: (collector, hooks)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    collector = exporter_class()()
    if dialect == "logfire":
        import logfire

        logfire.configure(send_to_logfire=False, console=False, service_name="weather",
                          additional_span_processors=[SimpleSpanProcessor(collector)])
        logfire.instrument_openai()
        return collector, LogfireHooks()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("weather_agent_app")
    if dialect == "genai-events":  # the content only in log events: EVENT_ONLY, as the GenAI util emits them
        os.environ.update(OTEL_SEMCONV_STABILITY_OPT_IN="gen_ai_latest_experimental",
                          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="event_only",
                          OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT="true")
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

        global LOGS
        LOGS = log_collector()
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
        set_logger_provider(logger_provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logger_provider)
        return collector, Hooks()
    if dialect in ("genai", "genai-agent"):
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from runner.report.otlp_json import json_lines_exporter

        # the README's one line: evalrun's exporter writes what the collector's file exporter would
        provider.add_span_processor(BatchSpanProcessor(json_lines_exporter(OUT / "exported.jsonl")))
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
        return collector, GenAIHooks(tracer) if dialect == "genai-agent" else Hooks()
    if dialect == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
        return collector, OpenInferenceHooks(tracer)
    if dialect == "openllmetry":
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
        return collector, Hooks()
    raise SystemExit(f"unknown dialect {dialect}")


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


def run_adk(dialects: list[str], base_url: str, outs: list[Path]) -> None:
    """Google ADK's own tracing (google.adk.telemetry): an LlmAgent on LiteLlm against the fake server;
    `adk` is schema 2 with content on spans, `adk-legacy` the legacy schema (gcp.vertex.agent.* JSON);
    `-multi` puts a root agent in front that transfers to the weather agent. Each dialect's spans are
    written to its own folder; those of one process share the schema."""

    if len({"legacy" in dialect for dialect in dialects}) != 1:
        raise SystemExit("ADK's schema is one per process: give legacy and current dialects separately")
    if "legacy" in dialects[0]:
        os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
    else:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    collector = exporter_class()()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    trace.set_tracer_provider(provider)
    for dialect, out in zip(dialects, outs, strict=True):
        collector.batches.clear()
        converse_adk(dialect, base_url, out)
        provider.force_flush()
        collector.write(out)


def converse_adk(dialect: str, base_url: str, out: Path) -> None:
    import asyncio

    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def model():
        return LiteLlm(model="openai/fake-model", api_base=base_url, api_key="sk-test")

    instructions: list[str] = []  # what ADK sent as the system prompt, the first model call's

    def keep_instruction(callback_context, llm_request):
        instructions.append(str(llm_request.config.system_instruction))
        return None

    weather = LlmAgent(name="weather_agent", model=model(), instruction=SYSTEM, tools=[get_weather],
                       description="Answers weather questions", before_model_callback=keep_instruction)
    root = weather
    if dialect.endswith("multi"):
        root = LlmAgent(name="root_agent", model=model(), instruction="Delegate weather questions to weather_agent.",
                        sub_agents=[weather], before_model_callback=keep_instruction)

    async def converse_all() -> None:
        runner = InMemoryRunner(agent=root, app_name="weather_app")
        for n, (conversation_id, turns) in enumerate(CONVERSATIONS, start=1):
            await runner.session_service.create_session(app_name="weather_app", user_id="u1",
                                                        session_id=conversation_id)
            instructions.clear()
            for text in turns:
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(user_id="u1", session_id=conversation_id, new_message=message):
                    pass
            session = await runner.session_service.get_session(app_name="weather_app", user_id="u1",
                                                               session_id=conversation_id)
            messages = [{"role": "system", "content": instructions[0]}] + adk_messages(session.events)
            (out / f"conversation-{n}.json").write_text(json.dumps(messages, indent=1, ensure_ascii=False))

    asyncio.run(converse_all())


def adk_messages(events) -> list[dict]:
    """An ADK session's events as the OpenAI messages evalrun reads: what the conversation was."""
    messages: list[dict] = []
    for event in events:
        for part in (event.content.parts if event.content else None) or []:
            if part.function_call:
                call = part.function_call
                messages.append({"role": "assistant", "content": None, "tool_calls": [{
                    "id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args or {})}}]})
            elif part.function_response:
                answer = part.function_response
                messages.append({"role": "tool", "tool_call_id": answer.id, "content": json.dumps(answer.response)})
            elif part.text:
                messages.append({"role": "user" if event.author == "user" else "assistant", "content": part.text})
    return messages


OUT = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(".")
LOGS = None  # the log collector of the genai-events dialect


def main() -> None:
    dialect, out, base_url = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if "+" in dialect:  # several ADK dialects, each into OUT_ROOT/DIALECT
        dialects = dialect.split("+")
        outs = [out / name for name in dialects]
        for folder in outs:
            folder.mkdir(parents=True, exist_ok=True)
        return run_adk(dialects, base_url, outs)
    out.mkdir(parents=True, exist_ok=True)
    if dialect.startswith("adk"):
        return run_adk([dialect], base_url, [out])
    collector, hooks = install(dialect)
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    for n, (conversation_id, turns) in enumerate(CONVERSATIONS, start=1):
        messages = converse(client, hooks, conversation_id, turns)
        (out / f"conversation-{n}.json").write_text(json.dumps(messages, indent=1, ensure_ascii=False))
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if hasattr(provider, "shutdown"):
        provider.shutdown()  # flushes the batch processors
    collector.write(out, LOGS.records if LOGS is not None else None)


if __name__ == "__main__":
    main()
