"""Shared by several test modules (once in tests/run/test_agentflow_agent.py): PROJECT, VENVS, venv_python, weather_model."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.openai_server import Reply, tool_call
from tests.helpers.cli_helpers import REPO

PROJECT = Path(__file__).parents[1] / "agentflow_project"


VENVS = {"agentflow": REPO / ".venv-agentflow", "tenxgraph": REPO / ".venv-tenxgraph"}


def weather_model(request: dict):
    """The graph's model, deterministic: a tool call from the user's words, then an answer quoting the results."""
    messages = request.get("messages", [])
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.insert(0, str(message.get("content")))
        return "Here is what I found: " + "; ".join(results)
    text = last.get("content") if isinstance(last.get("content"), str) else " ".join(
        p.get("text", "") for p in last.get("content") or () if isinstance(p, dict))
    if match := re.search(r"forecast in ([A-Z]\w*) and ([A-Z]\w*)", text):  # run at once, finish in any order
        return Reply(tool_calls=[tool_call("get_forecast", {"location": match.group(1)}, "call_f1"),
                                 tool_call("get_forecast", {"location": match.group(2)}, "call_f2")])
    if match := re.search(r"weather in ([A-Z]\w*) and ([A-Z]\w*)", text):
        return Reply(tool_calls=[tool_call("get_weather", {"location": match.group(1)}, "call_a"),
                                 tool_call("get_weather", {"location": match.group(2)}, "call_b")])
    if match := re.search(r"weather in ([A-Z]\w*)", text):  # with an argument the tool does not declare
        return Reply(tool_calls=[tool_call("get_weather", {"location": match.group(1), "bogus": 1}, "call_w")])
    if match := re.search(r"convert (\d+)", text):
        return Reply(tool_calls=[tool_call("to_fahrenheit", {"celsius": int(match.group(1))}, "call_c")])
    if "break" in text:
        return Reply(tool_calls=[tool_call("get_weather", {"location": "Atlantis"}, "call_x")])
    return "Hello! How can I help?"


def venv_python(import_name: str) -> Path:
    python = VENVS[import_name] / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{VENVS[import_name].name} is missing: run .ci/agentflow-venv (needs a Python >= 3.12) to test "
                    f"type: agentflow with the `{import_name}` import name")
    return python
