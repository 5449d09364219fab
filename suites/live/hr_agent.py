"""A small deterministic HR agent for the live example: no model, no API key.

evalrun calls `respond(messages, context)` once per user turn (see `agents:` in ../evalrun.yaml). It
reads the whole conversation, and once it knows the username and the period it calls its two tools
(played here, from the tables below) and answers with the dates.
"""
from __future__ import annotations

import json
import re
from datetime import date

ASSIGNMENTS = {"nwaters": "15778303", "johndoe": "15338303"}
TIME_OFF = {"15778303": ["20250105", "20250410"], "15338303": ["20250220"]}

_USERNAME = re.compile(r"\b(?:username is|I'm|I am)\s+([a-z][a-z0-9_]*)", re.IGNORECASE)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def respond(messages: list[dict], context) -> list[dict] | str:
    said = " ".join(m["content"] for m in messages if m["role"] == "user" and isinstance(m.get("content"), str))
    username = _USERNAME.search(said)
    dates = _DATE.findall(said)
    if username is None and len(dates) < 2:
        return "Sure. What is your username, and which period do you mean?"
    if username is None:
        return "What is your username?"
    if len(dates) < 2:
        return "Which period do you mean? Please give a start and an end date."
    return _look_up(username.group(1).lower(), dates[0], dates[1], turn=context.turn)


def _look_up(username: str, start: str, end: str, turn: int) -> list[dict]:
    new = [_call(f"t{turn}-1", "get_assignment_id_hr_agent", {"username": username})]
    assignment = ASSIGNMENTS.get(username)
    if assignment is None:
        new.append(_result(f"t{turn}-1", f"Error: no employee with username {username}"))
        new.append({"role": "assistant", "content": f"I could not find an employee with the username {username}."})
        return new
    new.append(_result(f"t{turn}-1", assignment))
    new.append(_call(f"t{turn}-2", "get_timeoff_schedule_hr_agent",
                     {"assignment_id": assignment, "start_date": start, "end_date": end}))
    days = [d for d in TIME_OFF.get(assignment, []) if start.replace("-", "") <= d <= end.replace("-", "")]
    new.append(_result(f"t{turn}-2", json.dumps(days)))
    period = f"between {_spoken(start)} and {_spoken(end)}"
    if not days:
        text = f"You have no time off {period}."
    else:
        text = f"Your time off {period} is on {', '.join(_spoken(d) for d in days)}."
    new.append({"role": "assistant", "content": text[0].upper() + text[1:]})
    return new


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _spoken(day: str) -> str:
    digits = day.replace("-", "")
    d = date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    return f"{d:%B} {d.day}, {d.year}"
