"""What collects the weather agent's spans and log records in tests/fakes/otel_agent.py, and writes them as
OTLP/JSON, one request or one per batch as the collector's file exporter writes."""
from __future__ import annotations

import json
from pathlib import Path


class Collector:
    """A SpanExporter keeping every exported batch, to write them as OTLP/JSON."""

    def __init__(self):
        self.batches: list[list] = []

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def write(self, out: Path, logs: list | None = None) -> None:
        """traces.otlp.json: one request; traces.jsonl: a request per batch. Log records (GenAI events),
        when there are any, follow as a logs request of their own, as a collector's single file exporter
        for both pipelines writes them (then traces.otlp.json holds two compact lines)."""
        from runner.report.otlp_json import spans_document, spans_json_line

        every = [span for batch in self.batches for span in batch]
        lines = "".join(spans_json_line(b) + "\n" for b in self.batches if b)
        if logs:
            events = logs_json_line(logs) + "\n"
            (out / "traces.otlp.json").write_text(spans_json_line(every) + "\n" + events)
            (out / "traces.jsonl").write_text(lines + events)
            return
        (out / "traces.otlp.json").write_text(json.dumps(spans_document(every), indent=1, ensure_ascii=False))
        (out / "traces.jsonl").write_text(lines)


def logs_json_line(records: list) -> str:
    """SDK log records as one OTLP/JSON logs request (hex ids, as the OTLP JSON encoding wants)."""
    import base64

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    def hexed(node):
        if isinstance(node, dict):
            return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId") and isinstance(v, str) else hexed(v)
                    for k, v in node.items()}
        return [hexed(v) for v in node] if isinstance(node, list) else node

    return json.dumps(hexed(MessageToDict(encode_logs(records), use_integers_for_enums=True)), ensure_ascii=False)


def log_collector():
    """A log record exporter keeping every record (the class name differs between SDK versions)."""
    try:
        from opentelemetry.sdk._logs.export import LogRecordExporter as Base, LogRecordExportResult as Done
    except ImportError:
        from opentelemetry.sdk._logs.export import LogExporter as Base, LogExportResult as Done

    class Records(Base):
        def __init__(self):
            self.records: list = []

        def export(self, batch):
            self.records.extend(batch)
            return Done.SUCCESS

        def shutdown(self):
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return Records()


def exporter_class():
    from opentelemetry.sdk.trace.export import SpanExporter

    return type("CollectorExporter", (Collector, SpanExporter), {})
