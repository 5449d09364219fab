"""The first point where two conversations part: the step a reader of a regression should look at first.

A conversation (OpenAI-style messages, as a case's `transcript` holds them) is read as a list of steps: each
message's text, each tool call it makes, each tool result. Two conversations are walked step by step; the
first pair that differs is the divergence, with both sides. Tool-call ids are left out of the comparison (a
run makes new ones every time); arguments are compared as parsed JSON (key order and spacing do not count).
Pure functions on plain data: nothing here reads a file.
"""
from __future__ import annotations

import json
from typing import Any

_MISSING = object()


def steps(messages: Any) -> list[dict[str, Any]]:
    """The steps of a conversation, in order; each {"message": n (from 1), "role", "kind", ...}. kind is
    "text" (text), "tool_call" (tool, arguments) or "tool_result" (tool, text)."""
    out: list[dict[str, Any]] = []
    if not isinstance(messages, list):
        return out
    names: dict[str, str] = {}  # tool_call_id -> tool name, to name a tool result by its tool
    for n, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            out.append({"message": n, "role": "?", "kind": "text", "text": _text(message)})
            continue
        role = str(message.get("role") or "?")
        text = _text(message.get("content"))
        if role == "tool":
            tool = names.get(str(message.get("tool_call_id")), str(message.get("name") or ""))
            out.append({"message": n, "role": role, "kind": "tool_result", "tool": tool, "text": text})
            continue
        if text:
            out.append({"message": n, "role": role, "kind": "text", "text": text})
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else (call if isinstance(call, dict) else {})
            tool = str(function.get("name") or "?")
            if isinstance(call, dict) and call.get("id") is not None:
                names[str(call["id"])] = tool
            out.append({"message": n, "role": role, "kind": "tool_call", "tool": tool,
                        "arguments": _arguments(function.get("arguments"))})
    return out


def first_divergence(a: Any, b: Any) -> dict[str, Any] | None:
    """Where conversations `a` and `b` first differ, or None when they are the same step for step.
    {"step": i (from 0), "what": one line, "kind": "tool" | "arguments" | "text" | "role" | "extra" | "missing",
    "a": a's step or None, "b": b's step or None, "arguments": [argument paths that differ] (kind "arguments")}."""
    left, right = steps(a), steps(b)
    for i in range(max(len(left), len(right))):
        x = left[i] if i < len(left) else None
        y = right[i] if i < len(right) else None
        found = _differ(x, y)
        if found is not None:
            kind, what, paths = found
            return {"step": i, "kind": kind, "what": what, "a": x, "b": y, **({"arguments": paths} if paths else {})}
    return None


def _differ(x: dict | None, y: dict | None) -> tuple[str, str, list[str]] | None:
    if x is None:
        return None if y is None else ("extra", f"only the second conversation goes on: {_said(y)}", [])
    if y is None:
        return "missing", f"only the first conversation goes on: {_said(x)}", []
    if (x["role"], x["kind"]) != (y["role"], y["kind"]):
        return "role", f"{_said(x)} / {_said(y)}", []
    if x["kind"] in ("tool_call", "tool_result") and x["tool"] != y["tool"]:
        return "tool", f"a different tool: {x['tool']} / {y['tool']}", []
    if x["kind"] == "tool_call":
        paths = _paths_differing(x["arguments"], y["arguments"])
        if paths:
            return "arguments", f"{x['tool']} called with different arguments: {', '.join(paths)}", paths
        return None
    if x["text"] != y["text"]:
        what = "a different tool result" if x["kind"] == "tool_result" else f"a different {x['role']} message"
        return "text", f"{what} (message {x['message']} / {y['message']})", []
    return None


def _said(step: dict) -> str:
    if step["kind"] == "tool_call":
        return f"{step['role']} calls {step['tool']} (message {step['message']})"
    if step["kind"] == "tool_result":
        return f"the result of {step['tool'] or 'a tool'} (message {step['message']})"
    article = "an" if step["role"][:1] in tuple("aeio") else "a"  # "a user", "an assistant"
    return f"{article} {step['role']} message (message {step['message']})"


def _paths_differing(x: Any, y: Any, at: str = "") -> list[str]:
    """The dot paths at which two parsed argument values differ (a whole value when its type differs)."""
    if isinstance(x, dict) and isinstance(y, dict):
        out: list[str] = []
        for key in list(x) + [k for k in y if k not in x]:
            out += _paths_differing(x.get(key, _MISSING), y.get(key, _MISSING), f"{at}.{key}" if at else str(key))
        return out
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        out = []
        for n, (p, q) in enumerate(zip(x, y, strict=True)):
            out += _paths_differing(p, q, f"{at}[{n}]")
        return out
    same = x is not _MISSING and y is not _MISSING and type(x) is type(y) and x == y
    if not same and isinstance(x, (int, float)) and isinstance(y, (int, float)) \
            and not isinstance(x, bool) and not isinstance(y, bool):
        same = x == y  # 50 and 50.0 are the same amount
    return [] if same else [at or "(the arguments)"]


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] if isinstance(part, dict) and isinstance(part.get("text"), str)
                         else json.dumps(part, sort_keys=True) for part in content)
    return json.dumps(content, sort_keys=True)
