"""The weather agent as a Google ADK agent traced by ADK's own tracing, for tests/fakes/otel_agent.py."""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from tests.fakes.otel_collect import exporter_class
from tests.fakes.otel_weather import CONVERSATIONS, SYSTEM, get_weather


def run_adk(dialect: str, base_url: str, out: Path) -> None:
    """Google ADK's own tracing (google.adk.telemetry): an LlmAgent on LiteLlm against the fake server;
    `adk` is schema 2 with content on spans, `adk-legacy` the legacy schema (gcp.vertex.agent.* JSON);
    `-multi` puts a root agent in front that transfers to the weather agent. ADK reads its telemetry
    settings from the environment at each invocation, so the four share a process."""
    import asyncio

    if "legacy" in dialect:
        os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
    else:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    provider, collector = adk_tracing()
    collector.batches.clear()
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
    provider.force_flush()
    collector.write(out)


@functools.cache
def adk_tracing():
    """The global tracer provider ADK's tracing writes to, with a collector the ADK dialects take in turn."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    collector = exporter_class()()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    trace.set_tracer_provider(provider)
    return provider, collector


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
