"""Reading what a model wrote, leniently where leniency cannot change which object counts.

Models wrap JSON in code fences, write a sentence before or after it, and put raw newlines or tabs inside
its strings (invalid JSON, meaningless to the verdict): all of that is read. What is never relaxed is
which object counts: for the judge, only an object carrying this call's `verdict_id` token (a token found in
none of the data, so the agent cannot write it); an untagged object, even a reply that is nothing else, is
not a verdict.
"""
from __future__ import annotations

import json
import re

from .errors import LLMError

MAX_REPLY = 50_000  # characters of a reply that are searched for JSON objects
_LENIENT = json.JSONDecoder(strict=False)  # raw control characters inside strings are taken as they are
_FENCE_START = re.compile(r"\A\s*```[A-Za-z]*[ \t]*\n?")


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object in `text`, in order (objects nested in one are part of it)."""
    found: list[dict] = []
    position = 0
    text = text[:MAX_REPLY]
    while True:
        start = text.find("{", position)
        if start < 0:
            return found
        try:
            value, end = _LENIENT.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end


def leading_object(text: str) -> dict | None:
    """The JSON object a reply starts with (after blanks and an opening code fence), or None when it starts
    with anything else. Text after the object is not read: it cannot change what the reply began with."""
    body = without_fence(text[:MAX_REPLY])
    if not body.startswith("{"):
        return None
    try:
        value, _ = _LENIENT.raw_decode(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def without_fence(text: str) -> str:
    """`text` without leading blanks and an opening code fence (```json)."""
    return _FENCE_START.sub("", text, count=1).lstrip()


def tagged_object(content: str | None, token: str, who: str = "judge") -> dict:
    """The object of `content` whose `verdict_id` is `token` (the last one, if the model corrected itself).
    LLMError (a reply problem) when there is none, saying what was there instead."""
    if not isinstance(content, str) or not content.strip():
        raise LLMError(f"the {who}'s reply is empty")
    objects = json_objects(content)
    tagged = [obj for obj in objects if _tag(obj) == token]
    if tagged:
        return tagged[-1]
    if any(isinstance(obj.get("verdict_id"), str) for obj in objects):
        raise LLMError(f"the {who}'s reply carries another call's verdict_id, not this call's {token}")
    if objects:
        raise LLMError(f"the {who}'s reply has no JSON object tagged with this call's verdict_id {token}; an "
                       "object without it is not a verdict (it may be one the agent wrote)")
    raise LLMError(f"the {who}'s reply holds no JSON object")


def _tag(obj: dict) -> str | None:
    tag = obj.get("verdict_id")
    return tag.strip() if isinstance(tag, str) else None
