"""The plain view of a span every dialect reader fills in, and attribute access that names what it cannot read.

`SpanView` is what a span says about a conversation: the messages the model saw (`inputs`), the ones it
produced (`outputs`), or a tool run. `AttributeReader` decodes JSON-string attributes under evalrun's limits
(size, nesting) and turns each bad value into a `Problem` naming the trace, span and attribute.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .spans import Problem, Span

__all__ = ["MAX_ATTRIBUTE_CHARS", "AttributeReader", "Call", "Message", "Result", "SpanView", "ToolRun"]

MAX_ATTRIBUTE_CHARS = 8 * 1024 * 1024  # one attribute's JSON text; a longer one is named, not parsed


@dataclass
class Call:
    id: str | None
    name: str
    arguments: Any  # an object, a JSON string as recorded, or None when not recorded


@dataclass
class Result:
    id: str | None
    name: str | None
    content: Any


@dataclass
class Message:
    role: str
    text: str | None = None
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)


@dataclass
class ToolRun:
    id: str | None
    name: str
    arguments: Any = None
    result: Any = None
    has_result: bool = False


@dataclass
class SpanView:
    kind: str  # "agent", "chat", "tool" or "other"
    agent_name: str | None = None
    conversation_id: str | None = None
    system: str | None = None
    inputs: list[Message] | None = None
    outputs: list[Message] | None = None
    tool: ToolRun | None = None
    problems: list[Problem] = field(default_factory=list)


class AttributeReader:
    """Attribute access that turns bad values into problems naming the span and attribute."""

    def __init__(self, span: Span, problems: list[Problem]) -> None:
        self.span, self.problems = span, problems

    def json(self, key: str, *, text_ok: bool = False) -> Any:
        """The attribute's value, JSON strings decoded (structured values as they are); None when absent
        or unreadable (then a problem says why). `text_ok`: a string that is not JSON is the value."""
        value = self.span.attributes.get(key)
        if not isinstance(value, str):
            return value
        if len(value) > MAX_ATTRIBUTE_CHARS:
            self.problem(key, f"the value is {len(value):,} characters long, above evalrun's limit of "
                              f"{MAX_ATTRIBUTE_CHARS:,}; it was not read")
            return None
        return self.decode(key, value, text_ok=text_ok)

    def decode(self, key: str, value: str, *, text_ok: bool = False) -> Any:
        from ...util.read_limits import json_limits

        stripped = value.strip()
        if text_ok and not stripped.startswith(("{", "[", '"')):
            return value
        limit = json_limits(value, max_values=None)
        if limit is not None:
            self.problem(key, limit[3].replace("the file", "the value"))
            return None
        try:
            return json.loads(value)
        except (ValueError, RecursionError) as exc:
            if text_ok and not stripped.startswith(("{", "[")):
                return value
            cut = ""
            if isinstance(exc, json.JSONDecodeError) and exc.pos >= len(value.rstrip()):
                cut = (f" (it ends after {len(value):,} characters: cut short, as OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT "
                       "does; raise or unset the limit where the traces are made)")
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "it cannot be decoded"
            self.problem(key, f"not valid JSON: {reason}{cut}")
            return None

    def problem(self, key: str, reason: str) -> None:
        self.problems.append(self.span.problem(key, reason))
