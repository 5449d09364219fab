"""A small deterministic weather agent for the ADK example: no model, no API key.

evalrun calls `respond(messages, context)` once per user turn (`agents:` in ../evalrun.yaml; the eval set's
`session_input.app_name` names it). It looks for the cities the user's last message names, calls its one
tool, get_weather(location), once per city in the order they were named, and answers from the results.
The session's initial state (`session_input.state`, given as `context.runtime_context`) may set
`unit: C` for Celsius. It also plays the Agentflow eval set in ../../shared/data/agentflow/.
"""
from __future__ import annotations

import json
import re

WEATHER = {"New York": ("sunny", 72), "Tokyo": ("sunny", 75), "London": ("cloudy", 55), "Paris": ("rainy", 60)}
_CITY = re.compile("|".join(re.escape(city) for city in WEATHER), re.IGNORECASE)


def get_weather(location: str) -> dict:
    """The tool: the current conditions and temperature (°F) of a city."""
    condition, fahrenheit = WEATHER[location]
    return {"location": location, "condition": condition, "temperature_f": fahrenheit}


def respond(messages: list[dict], context) -> list[dict] | str:
    last = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    cities = [_canonical(match.group(0)) for match in _CITY.finditer(last)]
    if not cities:
        if re.search(r"\bthank", last, re.IGNORECASE):
            return "You're welcome!"
        return "Which city would you like the weather for?"
    unit = str((context.runtime_context or {}).get("unit", "F")).upper()
    new, reports = [], []
    for n, city in enumerate(dict.fromkeys(cities), start=1):
        call_id = f"t{context.turn}-{n}"
        new.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"location": city})}}]})
        report = get_weather(city)
        new.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(report)})
        reports.append(report)
    new.append({"role": "assistant", "content": _answer(reports, unit)})
    return new


def _canonical(name: str) -> str:
    return next(city for city in WEATHER if city.lower() == name.lower())


def _degrees(report: dict, unit: str) -> str:
    if unit == "C":
        return f"{round((report['temperature_f'] - 32) * 5 / 9)}°C"
    return f"{report['temperature_f']}°F"


def _answer(reports: list[dict], unit: str) -> str:
    if len(reports) == 1:
        r = reports[0]
        return f"The weather in {r['location']} is currently {r['condition']} with a temperature of {_degrees(r, unit)}."
    first, *others = reports
    rest = " while ".join(f"{r['location']} is {r['condition']} at {_degrees(r, unit)}" for r in others)
    return f"{first['location']} is {first['condition']} at {_degrees(first, unit)} while {rest}."
