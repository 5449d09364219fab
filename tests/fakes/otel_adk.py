"""The weather agent as a Google ADK agent traced by ADK's own tracing, for tests/fakes/otel_agent.py."""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from tests.fakes.otel_collect import exporter_class
from tests.fakes.otel_weather import CONVERSATIONS, SYSTEM, get_weather


def run_adk(dialect: str, base_url: str, out: Path) -> None:
    """Google ADK's own tracing (google.adk.telemetry): an LlmAgent on the fake server (fake_server_model);
    `adk` is schema 2 with content on spans, `adk-legacy` the legacy schema (gcp.vertex.agent.* JSON);
    `-multi` puts a root agent in front that transfers to the weather agent. ADK reads its telemetry
    settings from the environment at each invocation, so the four share a process."""
    import asyncio

    if "legacy" in dialect:
        os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
    else:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    provider, collector = adk_tracing()
    collector.batches.clear()
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def model():
        return fake_server_model(base_url)

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


def fake_server_model(base_url: str):
    """An ADK model asking the fake OpenAI server with chat completions, as LiteLlm("openai/...") does, without
    litellm's import (~4 s of CPU, most of the ADK process's cost). The spans under test are ADK's own around
    each model call (its request's contents and config, its response): attribute for attribute those LiteLlm's
    calls give (compared when this replaced it), as the fake server sees the same requests."""
    import httpx
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class FakeServerLlm(BaseLlm):
        async def generate_content_async(self, llm_request, stream=False):
            messages = [{"role": "system", "content": str(llm_request.config.system_instruction)}]
            for content in llm_request.contents:  # one message a content, as LiteLlm sends it
                parts = content.parts or []
                messages += [{"role": "tool", "tool_call_id": part.function_response.id,
                              "content": json.dumps(part.function_response.response)}
                             for part in parts if part.function_response]
                texts = [part.text for part in parts if part.text]
                calls = [{"id": part.function_call.id, "type": "function", "function": {
                    "name": part.function_call.name, "arguments": json.dumps(part.function_call.args or {})}}
                    for part in parts if part.function_call]
                if texts or calls:
                    messages.append({"role": "assistant" if content.role == "model" else "user",
                                     "content": (texts[0] if len(texts) == 1 else
                                                 [{"type": "text", "text": text} for text in texts] or None),
                                     **({"tool_calls": calls} if calls else {})})
            tools = [{"type": "function", "function": {
                "name": declaration.name, "description": declaration.description or "",
                "parameters": declaration.parameters.model_dump(mode="json", exclude_none=True)
                if declaration.parameters else declaration.parameters_json_schema or {}}}
                for tool in llm_request.config.tools or [] for declaration in tool.function_declarations or []]
            async with httpx.AsyncClient(base_url=base_url) as client:
                answer = await client.post("/chat/completions", json={"model": "fake-model", "messages": messages,
                                                                      **({"tools": tools} if tools else {})})
            answer.raise_for_status()
            reply = answer.json()
            message = reply["choices"][0]["message"]
            parts = [types.Part(text=message["content"])] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                parts.append(types.Part(function_call=types.FunctionCall(
                    id=call["id"], name=call["function"]["name"], args=json.loads(call["function"]["arguments"]))))
            usage = reply.get("usage") or {}
            yield LlmResponse(content=types.Content(role="model", parts=parts), finish_reason=types.FinishReason.STOP,
                              partial=False, model_version=reply.get("model"), usage_metadata=types.GenerateContentResponseUsageMetadata(
                                  prompt_token_count=usage.get("prompt_tokens"),
                                  candidates_token_count=usage.get("completion_tokens"),
                                  total_token_count=usage.get("total_tokens"),
                                  cached_content_token_count=(usage.get("prompt_tokens_details") or {}).get(
                                      "cached_tokens") or 0))

    return FakeServerLlm(model="openai/fake-model")


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
