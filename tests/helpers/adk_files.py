"""Small eval files in Google ADK's shapes, written here (ADK's own files are not copied into the project;
tests/bench/adk_agreement.py reads them from where they are)."""
from __future__ import annotations

from typing import Any

# Every attribute ADK's model_dump_json writes on a Part, most of them null
_NULL_PART = {"video_metadata": None, "thought": None, "code_execution_result": None, "executable_code": None,
              "file_data": None, "function_call": None, "function_response": None, "inline_data": None}


def content(role: str, text: str | None) -> dict:
    return {"parts": [{**_NULL_PART, "text": text}], "role": role}


def invocation(invocation_id: str, user: str, calls: list[tuple[str, dict]], answer: str | None) -> dict:
    return {"invocation_id": invocation_id, "user_content": content("user", user),
            "final_response": content("model", answer),
            "intermediate_data": {"tool_uses": [{"id": None, "args": args, "name": name} for name, args in calls],
                                  "intermediate_responses": []},
            "creation_timestamp": 1747341775.89}


def eval_set(*cases: dict, eval_set_id: str = "56540925-a5ff", **extra: Any) -> dict:
    return {"eval_set_id": eval_set_id, "name": eval_set_id, "description": None, "eval_cases": list(cases),
            "creation_timestamp": 1747341775.9, **extra}


def eval_case(eval_id: str, *invocations: dict, **extra: Any) -> dict:
    return {"eval_id": eval_id, "conversation": list(invocations), "session_input": None,
            "creation_timestamp": 1747341775.9, **extra}


# A two-turn home-automation conversation, shaped as adk-python's fixtures are
HOME = eval_set(eval_case(
    "tests/integration/fixture/home_automation_agent/test_files/simple_multi_turn_conversation.test.json",
    invocation("9f51a1ac", "Turn off device_2 in the Bedroom.",
               [("set_device_info", {"location": "Bedroom", "device_id": "device_2", "status": "OFF"})],
               "I have set the device_2 status to off."),
    invocation("c82d54d0", "Turn on device_2 in the Bedroom.",
               [("set_device_info", {"location": "Bedroom", "status": "ON", "device_id": "device_2"})],
               "I have set the device_2 status to on.")))

# ADK's older list format: one conversation, one entry per turn
OLD_TURNS = [
    {"query": "Hi, roll a die with 16 sides", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 16}}],
     "reference": "I rolled a 16 sided die and got 13."},
    {"query": "Is it prime?", "expected_tool_use": [{"tool_name": "check_prime", "tool_input": {"nums": [13]}}],
     "expected_intermediate_agent_responses": [{"author": "prime_agent", "text": "Checking."}]},
]


def recording(*turns: tuple[str, list[tuple[str, dict]], str | None]) -> list[dict]:
    """An actual conversation, OpenAI-shaped: per turn the user, one message per call and its result, the answer."""
    import json

    messages: list[dict] = []
    for user, calls, answer in turns:
        messages.append({"role": "user", "content": user})
        for name, args in calls:
            call_id = f"c{len(messages)}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": "ok"})
        if answer is not None:
            messages.append({"role": "assistant", "content": answer})
    return messages
