"""Shared by several test modules (once in tests/checks/test_checks_trajectory.py): conversation."""
from __future__ import annotations

import json

from runner.transcripts.read import build_trajectory


def conversation(*calls, final="Done."):
    """OpenAI messages with one assistant message per call: ("tool", {args}) or "tool"."""
    messages = [{"role": "user", "content": "hi"}]
    for n, call in enumerate(calls, 1):
        name, args = (call, {}) if isinstance(call, str) else call
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    if final is not None:
        messages.append({"role": "assistant", "content": final})
    return build_trajectory(messages)
