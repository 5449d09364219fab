"""The weather agent of tests/fakes/otel_agent.py: its prompt, tool, conversations and the fake server's model."""
from __future__ import annotations

import json

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
