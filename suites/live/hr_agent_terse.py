"""A second version of hr_agent.py, for `--matrix agent=hr_agent,hr_agent_terse`: the same tools and tables, but it
only understands "username is NAME", so a user who introduces themselves ("I'm johndoe") is asked again and that
case fails. A small, deterministic difference between two agent versions: no model, no API key."""
from __future__ import annotations

import re

from . import hr_agent

_USERNAME = re.compile(r"\busername is\s+([a-z][a-z0-9_]*)", re.IGNORECASE)


def respond(messages: list[dict], context) -> list[dict] | str:
    said = " ".join(m["content"] for m in messages if m["role"] == "user" and isinstance(m.get("content"), str))
    username = _USERNAME.search(said)
    dates = hr_agent._DATE.findall(said)
    if username is None:
        return "What is your username? Please write: my username is ..."
    if len(dates) < 2:
        return "Which period do you mean? Please give a start and an end date."
    return hr_agent._look_up(username.group(1).lower(), dates[0], dates[1], turn=context.turn)
