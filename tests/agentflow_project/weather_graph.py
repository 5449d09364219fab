"""A weather graph built with Agentflow / 10xGraph for the `type: agentflow` tests: an Agent node on an OpenAI-
compatible server ($WEATHER_LLM_URL, the tests' fake) and a ToolNode with three tools (one async), compiled at import time as
projects do. $AGENTFLOW_IMPORT picks the import name: agentflow (10xscale-agentflow) or tenxgraph (10xGraph)."""
from __future__ import annotations

import asyncio
import importlib
import os

_lib = os.environ.get("AGENTFLOW_IMPORT", "agentflow")
_graph = importlib.import_module(f"{_lib}.core.graph")
END = importlib.import_module(f"{_lib}.utils.constants").END


def get_weather(location: str, unit: str = "C") -> str:
    """The current weather for a location."""
    if location == "Atlantis":
        raise ValueError("no weather station in Atlantis")
    return f"{location}: sunny, 21 {unit}"


def to_fahrenheit(celsius: float) -> str:
    """A temperature in Celsius, in Fahrenheit."""
    return f"{celsius * 9 / 5 + 32:.1f} F"


async def get_forecast(location: str) -> str:
    """Tomorrow's forecast for a location (slow for Slowtown: parallel calls then finish out of order)."""
    await asyncio.sleep(0.5 if location == "Slowtown" else 0.0)
    return f"{location}: rain tomorrow"


def route(state) -> str:
    last = state.context[-1] if state.context else None
    if last is not None and last.role == "assistant" and getattr(last, "tools_calls", None):
        return "TOOL"
    return END


def build():
    graph = _graph.StateGraph()
    graph.add_node("MAIN", _graph.Agent(model="weather-model", provider="openai", base_url=os.environ["WEATHER_LLM_URL"],
                                        api_key="sk-test", tool_node="TOOL", reasoning_config=None, retry_config=False,
                                        system_prompt=[{"role": "system", "content": "You report the weather."}]))
    graph.add_node("TOOL", _graph.ToolNode([get_weather, to_fahrenheit, get_forecast]))
    graph.add_conditional_edges("MAIN", route, {"TOOL": "TOOL", END: END})
    graph.add_edge("TOOL", "MAIN")
    graph.set_entry_point("MAIN")
    return graph.compile()


app = build()  # at import time, with compile()'s shared default callback manager: the case evalrun must handle
