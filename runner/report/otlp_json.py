"""OpenTelemetry SDK spans -> OTLP/JSON, the form evalrun reads traces in and writes its own run as.

The Python SDK exports OTLP as protobuf only. The JSON form is the proto3 JSON mapping of the same
ExportTraceServiceRequest with OTLP's deviations (opentelemetry-proto, "JSON Protobuf Encoding"): ids
as hex rather than base64, enums as integers. So spans are encoded with the encoder the OTLP exporters
use, mapped to JSON by protobuf, and their ids rewritten. Needs the `otel` extra; imported only when used.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["json_lines_exporter", "spans_document", "spans_json_line"]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def spans_document(spans: Iterable[Any]) -> dict:
    """One ExportTraceServiceRequest (an OTLP/HTTP JSON body) holding `spans` (SDK ReadableSpans)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return _hex_ids(MessageToDict(encode_spans(list(spans)), use_integers_for_enums=True))


def spans_json_line(spans: Iterable[Any]) -> str:
    """`spans` as one line of the collector's file exporter (JSON Lines, one request per line)."""
    return json.dumps(spans_document(spans), ensure_ascii=False, separators=(",", ":"))


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: (base64.b64decode(value).hex() if key in _ID_KEYS and isinstance(value, str) else _hex_ids(value))
                for key, value in node.items()}
    if isinstance(node, list):
        return [_hex_ids(value) for value in node]
    return node


def json_lines_exporter(path: str | Path) -> Any:
    """A SpanExporter appending each batch to `path` as one OTLP/JSON line, as the collector's file exporter
    writes: what evalrun reads as a transcript, without running a collector.

        provider.add_span_processor(BatchSpanProcessor(json_lines_exporter("traces.jsonl")))
    """
    import threading

    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class JsonLinesSpanExporter(SpanExporter):
        def __init__(self, target: Path) -> None:
            self.target = target
            self.lock = threading.Lock()

        def export(self, spans: Any) -> Any:
            if not spans:
                return SpanExportResult.SUCCESS
            line = spans_json_line(spans) + "\n"
            try:
                with self.lock, self.target.open("a", encoding="utf-8") as out:
                    out.write(line)
            except OSError:
                return SpanExportResult.FAILURE
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return JsonLinesSpanExporter(Path(path))
