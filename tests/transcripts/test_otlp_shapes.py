"""Trace shapes no library installed here produces (OpenLLMetry up to 0.54 cannot sit beside 0.62 in one
environment; traceloop-sdk does not resolve with pip; Logfire's version-1 request/response data): real SDK
spans carrying the attribute names those libraries document and write (read from their wheels, see
/work/notes/otlp.md §3-4), rebuilt as the same conversation."""
from __future__ import annotations

import json

from runner.transcripts.read import build_trajectory
from runner.transcripts.transcript_file import read_recording
from tests.fakes.otel_spans import Traces

WEATHER = {"city": "Paris", "temperature_c": 18}


def _summary(path) -> list[tuple]:
    trajectory = build_trajectory(read_recording(path).messages)
    calls = [(c.id, c.name, c.arguments, json.loads(c.result) if c.result else None) for c in trajectory.tool_calls]
    users = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    return [users, calls, [t.text for t in trajectory.texts]]


EXPECTED = [["What's the weather in Paris?"], [("call_001", "get_weather", {"city": "Paris"}, WEATHER)],
            ["It is 18°C in Paris."]]


def test_openllmetry_054_flattened_prompt_and_completion_keys(tmp_path):
    traces = Traces()
    base = {"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "You are a weather assistant.", "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "What's the weather in Paris?"}
    with traces.span("openai.chat", {**base, "gen_ai.completion.0.role": "assistant",
                                     "gen_ai.completion.0.finish_reason": "tool_calls",
                                     "gen_ai.completion.0.tool_calls.0.id": "call_001",
                                     "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                                     "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}'}):
        pass
    with traces.span("openai.chat", {**base, "gen_ai.prompt.2.role": "assistant",
                                     "gen_ai.prompt.2.tool_calls.0.id": "call_001",
                                     "gen_ai.prompt.2.tool_calls.0.name": "get_weather",
                                     "gen_ai.prompt.2.tool_calls.0.arguments": '{"city": "Paris"}',
                                     "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.tool_call_id": "call_001",
                                     "gen_ai.prompt.3.content": json.dumps(WEATHER),
                                     "gen_ai.completion.0.role": "assistant",
                                     "gen_ai.completion.0.content": "It is 18°C in Paris."}):
        pass
    assert _summary(traces.write(tmp_path / "t.jsonl", lines=True)) == EXPECTED


def test_traceloop_sdk_agent_and_tool_spans_without_a_call_id(tmp_path):
    """traceloop-sdk's `{name}.tool` spans carry the function's kwargs and no call id: joined by name."""
    traces = Traces()
    conversation = {"gen_ai.conversation.id": "conv-1", "gen_ai.agent.name": "weather_agent"}
    history = [{"role": "user", "parts": [{"type": "text", "content": "What's the weather in Paris?"}]}]
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_001", "name": "get_weather",
                                            "arguments": {"city": "Paris"}}]}
    with traces.span("weather_agent.agent", {"traceloop.span.kind": "agent", "traceloop.entity.name": "weather_agent",
                                             **conversation}):
        with traces.span("openai.chat", {"gen_ai.operation.name": "chat", **conversation,
                                         "gen_ai.input.messages": json.dumps(history),
                                         "gen_ai.output.messages": json.dumps([call])}):
            pass
        with traces.span("get_weather.tool", {"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather",
                                              "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Paris"}}),
                                              "traceloop.entity.output": json.dumps(WEATHER)}):
            pass
        answer = {"role": "assistant", "parts": [{"type": "text", "content": "It is 18°C in Paris."}]}
        with traces.span("openai.chat", {"gen_ai.operation.name": "chat", **conversation,
                                         "gen_ai.input.messages": json.dumps(history + [call]),  # no result part
                                         "gen_ai.output.messages": json.dumps([answer])}):
            pass
    assert _summary(traces.write(tmp_path / "t.json")) == EXPECTED


def test_logfire_version_1_request_and_response_data(tmp_path):
    traces = Traces()
    system = {"role": "system", "content": "You are a weather assistant."}
    user = {"role": "user", "content": "What's the weather in Paris?"}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_001", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    result = {"role": "tool", "tool_call_id": "call_001", "content": json.dumps(WEATHER)}
    for messages, reply in (([system, user], call),
                            ([system, user, call, result], {"role": "assistant", "content": "It is 18°C in Paris."})):
        with traces.span("Chat Completion with {request_data[model]!r}", {
                "logfire.msg_template": "Chat Completion with {request_data[model]!r}",
                "request_data": json.dumps({"model": "fake-model", "messages": messages}),
                "response_data": json.dumps({"message": reply, "usage": {}})}):
            pass
    assert _summary(traces.write(tmp_path / "t.jsonl", lines=True)) == EXPECTED


def test_an_agent_taking_over_without_a_call_is_a_transfer(tmp_path):
    """OpenInference nests a sub-agent's AGENT span in its parent's: the hand-over becomes a
    transfer_to_agent call, as ADK records one, and each answer names its agent."""
    traces = Traces()
    with traces.span("triage", {"openinference.span.kind": "AGENT", "agent.name": "triage", "session.id": "s-1",  # noqa: SIM117 - nesting is the trace's shape
                                "input.value": "What's the weather in Paris?", "input.mime_type": "text/plain"}):
        with traces.span("weather", {"openinference.span.kind": "AGENT", "agent.name": "weather_agent",
                                     "output.value": "It is 18°C in Paris.", "output.mime_type": "text/plain"}):
            pass
    messages = read_recording(traces.write(tmp_path / "t.json")).messages
    assert messages == [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": None, "name": "triage", "tool_calls": [
            {"id": None, "type": "function",
             "function": {"name": "transfer_to_agent", "arguments": '{"agent_name": "weather_agent"}'}}]},
        {"role": "tool", "tool_call_id": None, "name": "transfer_to_agent", "content": None},
        {"role": "assistant", "content": "It is 18°C in Paris.", "name": "weather_agent"}]


def test_vercel_ai_sdk_generate_text_with_a_tool_over_two_turns(tmp_path):
    """The AI SDK (JavaScript) records `ai.generateText` > `ai.generateText.doGenerate` / `ai.toolCall`, the
    provider messages in its own part shapes (`tool-call` with `input`, `tool-result` with `output`)."""
    traces = Traces()
    meta = {"ai.telemetry.metadata.sessionId": "chat-42"}
    user = {"role": "user", "content": [{"type": "text", "text": "What's the weather in Paris?"}]}
    call = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_001", "toolName": "get_weather",
                                              "input": {"city": "Paris"}}]}
    result = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_001", "toolName": "get_weather",
                                           "output": {"type": "json", "value": WEATHER}}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "It is 18°C in Paris."}]}
    system = {"role": "system", "content": "You are a weather assistant."}
    turns = [([system, user], [call, result], "It is 18°C in Paris."),
             ([system, user, call, result, answer, {"role": "user", "content": "Thanks!"}], [], "You're welcome.")]
    for history, steps, final in turns:
        with traces.span("ai.generateText", {"ai.operationId": "ai.generateText", **meta,
                                             "ai.prompt": json.dumps({"system": "You are a weather assistant.",
                                                                      "messages": history[1:]}),
                                             "ai.response.text": final}):
            if steps:
                with traces.span("ai.generateText.doGenerate", {
                        "ai.operationId": "ai.generateText.doGenerate", **meta,
                        "ai.prompt.messages": json.dumps(history), "ai.response.toolCalls": json.dumps(
                            [{"toolCallType": "function", "toolCallId": "call_001", "toolName": "get_weather",
                              "input": '{"city":"Paris"}'}])}):
                    pass
                with traces.span("ai.toolCall", {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "get_weather",
                                                 "ai.toolCall.id": "call_001", "ai.toolCall.args": '{"city":"Paris"}',
                                                 "ai.toolCall.result": json.dumps(WEATHER)}):
                    pass
            with traces.span("ai.generateText.doGenerate", {"ai.operationId": "ai.generateText.doGenerate", **meta,
                                                            "ai.prompt.messages": json.dumps(history + steps),
                                                            "ai.response.text": final}):
                pass
    recording = read_recording(traces.write(tmp_path / "t.jsonl", lines=True))
    assert recording.conversation_id == "chat-42"
    users, calls, texts = _summary(tmp_path / "t.jsonl")
    assert users == ["What's the weather in Paris?", "Thanks!"]
    assert calls == EXPECTED[1]
    assert texts == ["It is 18°C in Paris.", "You're welcome."]


def test_langsmith_and_langfuse_keep_the_request_and_response_whole(tmp_path):
    """LangSmith's OTel mode: `gen_ai.prompt` / `gen_ai.completion` hold a run's inputs and outputs;
    Langfuse: `langfuse.observation.input` / `.output`, `langfuse.observation.type` generation / tool."""
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_001", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    user = {"role": "user", "content": "What's the weather in Paris?"}
    result = {"role": "tool", "tool_call_id": "call_001", "content": json.dumps(WEATHER)}
    shapes = {
        "langsmith": ({"langsmith.span.kind": "llm", "langsmith.trace.session_id": "s-1"}, "gen_ai.prompt",
                      "gen_ai.completion", {"langsmith.span.kind": "tool", "gen_ai.tool.name": "get_weather",
                                            "gen_ai.tool.call.id": "call_001"}),
        "langfuse": ({"langfuse.observation.type": "generation", "session.id": "s-1"}, "langfuse.observation.input",
                     "langfuse.observation.output", {"langfuse.observation.type": "tool"}),
    }
    for name, (llm, input_key, output_key, tool) in shapes.items():
        traces = Traces()
        with traces.span("agent run", {}):
            with traces.span("llm", {**llm, input_key: json.dumps({"messages": [user]}),
                                     output_key: json.dumps({"choices": [{"message": call}]})}):
                pass
            with traces.span("get_weather", {**tool, input_key: '{"city": "Paris"}', output_key: json.dumps(WEATHER)}):
                pass
            with traces.span("llm", {**llm, input_key: json.dumps({"messages": [user, call, result]}),
                                     output_key: json.dumps({"choices": [{"message": {
                                         "role": "assistant", "content": "It is 18°C in Paris."}}]})}):
                pass
        assert _summary(traces.write(tmp_path / f"{name}.json")) == EXPECTED, name


def test_span_events_with_their_body_in_attributes(tmp_path):
    """Older GenAI tracing put each message on the model call's span as an event: the body as one JSON
    attribute `gen_ai.event.content`, or its fields (`content`, `id`, `message`) as attributes."""
    traces = Traces()
    call = {"tool_calls": [{"id": "call_001", "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    with traces.span("chat fake-model", {"gen_ai.operation.name": "chat"}) as span:
        span.add_event("gen_ai.user.message", {"gen_ai.event.content": json.dumps(
            {"role": "user", "content": "What's the weather in Paris?"})})
        span.add_event("gen_ai.choice", {"gen_ai.event.content": json.dumps(
            {"message": call, "finish_reason": "tool_calls", "index": 0})})
    with traces.span("chat fake-model", {"gen_ai.operation.name": "chat"}) as span:
        span.add_event("gen_ai.user.message", {"content": "What's the weather in Paris?"})
        span.add_event("gen_ai.assistant.message", {"tool_calls": json.dumps(call["tool_calls"])})
        span.add_event("gen_ai.tool.message", {"content": json.dumps(WEATHER), "id": "call_001"})
        span.add_event("gen_ai.choice", {"message": json.dumps([{"text": "It is 18°C in Paris."}]),
                                         "finish_reason": "end_turn"})
    assert _summary(traces.write(tmp_path / "t.jsonl", lines=True)) == EXPECTED
