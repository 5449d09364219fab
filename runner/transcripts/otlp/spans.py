"""OTLP/JSON documents -> spans with plain Python attribute values.

Accepts what real exporters write (opentelemetry-proto docs/specification.md, "JSON Protobuf Encoding"):
one `resourceSpans` document (an OTLP/HTTP JSON body), or the collector's file exporter, one document per
line; ids as hex in any case; 64-bit integers as decimal strings or as numbers; unknown fields ignored.
The same span sent twice (exporters retry) is kept once. Log records (`resourceLogs`, the GenAI events)
are read beside the spans they name. Nothing here trusts the file: a malformed span becomes a problem
naming it, never an exception that loses the rest.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from ...util.secrets import clip

__all__ = ["LogRecord", "Problem", "Span", "TraceFile", "decode_documents", "is_otlp_document"]

_HEX = re.compile(r"[0-9a-fA-F]+")
_MAX_VALUE_DEPTH = 64  # kvlist/array nesting of one attribute value; deeper is refused, not recursed into


@dataclass(frozen=True)
class Problem:
    """Something in the file that could not be read, named so a person can find it."""

    trace_id: str
    span_id: str
    span_name: str
    attribute: str
    reason: str

    def __str__(self) -> str:
        where = f"trace {self.trace_id}, span '{self.span_name}' ({self.span_id})"
        return f"{where}, attribute {self.attribute}: {self.reason}" if self.attribute else f"{where}: {self.reason}"


@dataclass
class LogRecord:
    event_name: str
    attributes: dict[str, Any]
    body: Any
    time: int
    position: int


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    dropped_attributes: int
    scope: str
    position: int  # order in the file, the last tie-breaker
    resource: dict[str, Any] = field(default_factory=dict)
    events: list[LogRecord] = field(default_factory=list)

    def problem(self, attribute: str, reason: str) -> Problem:
        return Problem(self.trace_id, self.span_id, self.name, attribute, reason)


@dataclass
class TraceFile:
    spans: list[Span]
    problems: list[Problem]


def is_otlp_document(value: Any) -> bool:
    """A decoded JSON value shaped like an OTLP traces (or logs) request."""
    return isinstance(value, dict) and ("resourceSpans" in value or "resourceLogs" in value)


def decode_documents(documents: list[Any]) -> TraceFile:
    """Every span of every document (duplicates dropped), with log records attached to their span."""
    spans: dict[tuple[str, str], Span] = {}
    problems: list[Problem] = []
    logs: list[tuple[str, str, LogRecord]] = []
    position = 0
    for number, document in enumerate(documents, start=1):
        if not is_otlp_document(document):
            problems.append(Problem("?", "?", "?", "", f"document {number} is not an OTLP traces request "
                                    "(no `resourceSpans`)"))
            continue
        for resource_spans in _list(document.get("resourceSpans")):
            resource = _attributes(_dict(_dict(resource_spans).get("resource")).get("attributes"), None, problems)
            for scope_spans in _list(_dict(resource_spans).get("scopeSpans")):
                scope = _text(_dict(_dict(scope_spans).get("scope")).get("name"))
                for raw in _list(_dict(scope_spans).get("spans")):
                    position += 1
                    span = _span(raw, scope, position, resource, problems)
                    if span is not None:
                        spans.setdefault((span.trace_id, span.span_id), span)
        for resource_logs in _list(document.get("resourceLogs")):
            for scope_logs in _list(_dict(resource_logs).get("scopeLogs")):
                for raw in _list(_dict(scope_logs).get("logRecords")):
                    position += 1
                    found = _log_record(raw, position, problems)
                    if found is not None:
                        logs.append(found)
    for trace_id, span_id, record in logs:
        span = spans.get((trace_id, span_id))
        if span is None:  # a logs-only file (the content went to events): the events stand for their span
            span = spans[(trace_id, span_id)] = Span(
                trace_id=trace_id, span_id=span_id, parent_id=None, name="(log events)", start=record.time,
                end=record.time, attributes={"gen_ai.operation.name": "chat"}, dropped_attributes=0, scope="",
                position=record.position)
        if span.name == "(log events)":
            span.start, span.end = min(span.start, record.time), max(span.end, record.time)
            for key in ("gen_ai.conversation.id", "gen_ai.agent.name"):
                if key in record.attributes:
                    span.attributes.setdefault(key, record.attributes[key])
        span.events.append(record)
    return TraceFile(spans=list(spans.values()), problems=problems)


def _span(raw: Any, scope: str, position: int, resource: dict, problems: list[Problem]) -> Span | None:
    raw = _dict(raw)
    name = clip(_text(raw.get("name")), 200, "")
    trace_id = _hex_id(raw.get("traceId"), 16)
    span_id = _hex_id(raw.get("spanId"), 8)
    if trace_id is None or span_id is None:
        problems.append(Problem(clip(str(raw.get("traceId")), 40, ""), clip(str(raw.get("spanId")), 40, ""), name, "",
                                "the span has no valid traceId/spanId (hex, 32 and 16 digits)"))
        return None
    parent = raw.get("parentSpanId")
    parent_id = _hex_id(parent, 8) if parent else None
    span = Span(trace_id=trace_id, span_id=span_id, parent_id=parent_id, name=name,
                start=_int(raw.get("startTimeUnixNano")), end=_int(raw.get("endTimeUnixNano")),
                attributes={}, dropped_attributes=_int(raw.get("droppedAttributesCount")), scope=scope,
                position=position, resource=resource)
    span.attributes = _attributes(raw.get("attributes"), span, problems)
    for event in _list(raw.get("events")):  # span events: the older GenAI per-message events
        event = _dict(event)
        span.events.append(LogRecord(event_name=_text(event.get("name")),
                                     attributes=_attributes(event.get("attributes"), span, problems),
                                     body=None, time=_int(event.get("timeUnixNano")), position=position))
    return span


def _log_record(raw: Any, position: int, problems: list[Problem]) -> tuple[str, str, LogRecord] | None:
    raw = _dict(raw)
    trace_id, span_id = _hex_id(raw.get("traceId"), 16), _hex_id(raw.get("spanId"), 8)
    if trace_id is None or span_id is None:
        return None  # an event tied to no span cannot be placed in a conversation
    attributes = _attributes(raw.get("attributes"), None, problems)
    name = _text(raw.get("eventName")) or _text(attributes.get("event.name"))
    body, error = _any_value(raw.get("body"), 0)
    time = _int(raw.get("timeUnixNano")) or _int(raw.get("observedTimeUnixNano"))
    record = LogRecord(event_name=name, attributes=attributes, body=None if error else body, time=time,
                       position=position)
    return trace_id, span_id, record


def _attributes(raw: Any, span: Span | None, problems: list[Problem]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in _list(raw):
        item = _dict(item)
        key = item.get("key")
        if not isinstance(key, str):
            continue
        value, error = _any_value(item.get("value"), 0)
        if error is not None:
            if span is not None:
                problems.append(span.problem(key, error))
            continue
        out[key] = value
    return out


def _any_value(raw: Any, depth: int) -> tuple[Any, str | None]:
    """(value, error) of an OTLP AnyValue: strings, numbers, booleans, lists and dicts."""
    if depth > _MAX_VALUE_DEPTH:
        return None, f"the value is nested more than {_MAX_VALUE_DEPTH} levels deep"
    if not isinstance(raw, dict) or not raw:
        return None, None  # an empty AnyValue is a present but unset value
    if "stringValue" in raw:
        return _text(raw["stringValue"]), None
    if "boolValue" in raw:
        return bool(raw["boolValue"]), None
    if "intValue" in raw:
        value = raw["intValue"]
        try:
            number = int(value)
        except (TypeError, ValueError):
            return None, f"intValue {clip(str(value), 40, '')!r} is not an integer"
        if not -(2 ** 63) <= number < 2 ** 63:
            return None, "intValue is outside the 64-bit range"
        return number, None
    if "doubleValue" in raw:
        value = raw["doubleValue"]
        if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
            return float(value.replace("Infinity", "inf")), None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), None
        return None, f"doubleValue {clip(str(value), 40, '')!r} is not a number"
    if "arrayValue" in raw:
        values = []
        for item in _list(_dict(raw["arrayValue"]).get("values")):
            value, error = _any_value(item, depth + 1)
            if error is not None:
                return None, error
            values.append(value)
        return values, None
    if "kvlistValue" in raw:
        pairs: dict[str, Any] = {}
        for item in _list(_dict(raw["kvlistValue"]).get("values")):
            item = _dict(item)
            value, error = _any_value(item.get("value"), depth + 1)
            if error is not None:
                return None, error
            if isinstance(item.get("key"), str):
                pairs[item["key"]] = value
        return pairs, None
    if "bytesValue" in raw:
        try:
            return base64.b64decode(str(raw["bytesValue"]), validate=True), None
        except ValueError:
            return None, "bytesValue is not base64"
    return None, None


def _hex_id(value: Any, size: int) -> str | None:
    """An id as lower-case hex of `size` bytes; ids of another length or not hex are refused."""
    if not isinstance(value, str) or len(value) != 2 * size or not _HEX.fullmatch(value):
        return None
    return value.lower()


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:  # '²' is a digit too
        return int(value)
    if isinstance(value, float) and value == value and abs(value) < 2 ** 64:
        return int(value)
    return 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}
