"""A finished run as OpenTelemetry spans (`--otlp FILE|ENDPOINT`), so a trace viewer shows the verdicts
beside the conversations.

One trace per run: an `evalrun run` span, and under it a span per case carrying the case's status,
metrics and, when the case was scored on a trace, the conversation's `gen_ai.conversation.id`. Each goal
and each check is a `gen_ai.evaluation.result` event on its case's span (GenAI semantic conventions:
`gen_ai.evaluation.name`, `.score.value`, `.score.label`, `.explanation`), and so is the case's own
verdict. Spans are built from the saved report.json (what every other format renders), so what was
redacted there stays redacted. A FILE gets OTLP/JSON (one request; a `.jsonl` file gets it appended as
one line, as the collector's file exporter writes); an http(s) ENDPOINT gets OTLP/HTTP.
The OpenTelemetry SDK (the `otel` extra) is imported only here, only when asked.
"""
from __future__ import annotations

import json
import math
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..util.secrets import clip

__all__ = ["OtlpExportError", "export_report", "missing_otel", "report_spans"]

_MAX_TEXT = 4096  # an explanation longer than this is cut: span attributes are not the place for a transcript
SEND_DEADLINE_S = 10.0  # sending the spans takes at most this long in all, however slowly the receiver answers
SEND_DEADLINE_ENV = "EVALRUN_OTLP_TIMEOUT"  # seconds, instead of SEND_DEADLINE_S


class OtlpExportError(Exception):
    """The spans could not be written or sent; the message says why."""


def missing_otel() -> str | None:
    """Why `--otlp` cannot work here (the extra is not installed), without importing anything; else None."""
    from importlib.util import find_spec

    for module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.common"):
        try:
            found = find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return (f"--otlp needs the OpenTelemetry SDK ({module} is not installed): "
                    "pip install 'evalrun[otel]'")
    return None


def is_endpoint(target: str) -> bool:
    return urlsplit(target).scheme in ("http", "https")


def export_report(report: dict[str, Any], target: str) -> str:
    """Write or send `report` (a saved report.json's data) as spans; returns a line saying where."""
    spans = report_spans(report)
    if is_endpoint(target):
        _send(spans, target, send_deadline())
        return f"otlp: sent {len(spans)} spans to {_traces_url(target)}"
    _write(spans, Path(target))
    return f"otlp: wrote {len(spans)} spans to {target}"


def send_deadline() -> float:
    """How long sending the spans may take in all: EVALRUN_OTLP_TIMEOUT seconds (at least 0.1), else 10 (also
    for a value that is no finite number: a thread cannot be waited on for ever)."""
    try:
        seconds = float(os.environ.get(SEND_DEADLINE_ENV, "") or SEND_DEADLINE_S)
    except ValueError:
        return SEND_DEADLINE_S
    return max(0.1, seconds) if math.isfinite(seconds) else SEND_DEADLINE_S


def report_spans(report: dict[str, Any]) -> list:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode, set_span_in_context

    kept = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "evalrun",
                                                        "service.version": str(report.get("evalrun_version", ""))}))
    provider.add_span_processor(SimpleSpanProcessor(kept))
    tracer = provider.get_tracer("evalrun")
    summary = report.get("summary") or {}
    start = _nanoseconds(report.get("started_at"))
    end = start + int(float(summary.get("duration_s") or 0) * 1e9)
    run = tracer.start_span("evalrun run", start_time=start, attributes=_clean({
        "evalrun.run.id": report.get("run_id"), "evalrun.paths": [str(p) for p in report.get("paths") or []],
        "evalrun.exit_code": summary.get("exit_code"), "evalrun.exit_reason": summary.get("exit_reason"),
        **{f"evalrun.cases.{k}": summary.get(k) for k in ("total", "passed", "failed", "error", "unscored", "skipped")},
        "evalrun.pass_rate": summary.get("pass_rate")}))
    context = set_span_in_context(run)
    for case in report.get("cases") or []:
        if not isinstance(case, dict):
            continue
        duration = int(float(case.get("duration_s") or 0) * 1e9)
        span = tracer.start_span(f"evaluate {case.get('id')}", context=context, start_time=start,
                                 attributes=_case_attributes(case))
        at = start + duration
        for goal in case.get("goals") or []:
            span.add_event("gen_ai.evaluation.result", _clean({
                "gen_ai.evaluation.name": goal.get("name"), "evalrun.evaluation.kind": "goal",
                "gen_ai.evaluation.score.value": 1.0 if goal.get("achieved") else 0.0,
                "gen_ai.evaluation.score.label": goal.get("status"),
                "gen_ai.evaluation.explanation": _text(goal.get("explanation"))}), timestamp=at)
        for check in case.get("checks") or []:
            span.add_event("gen_ai.evaluation.result", _clean({
                "gen_ai.evaluation.name": check.get("name"), "evalrun.evaluation.kind": "check",
                "gen_ai.evaluation.score.value": check.get("score"), "gen_ai.evaluation.score.label": check.get("status"),
                "gen_ai.evaluation.explanation": _text(check.get("explanation"))}), timestamp=at)
        metrics = case.get("metrics") or {}
        verdict = _verdict(case)
        span.add_event("gen_ai.evaluation.result", _clean({
            "gen_ai.evaluation.name": "case", "evalrun.evaluation.kind": "case",
            "gen_ai.evaluation.score.value": metrics.get("journey_completion"),
            "gen_ai.evaluation.score.label": case.get("status"), "gen_ai.evaluation.explanation": verdict}),
            timestamp=at)
        if case.get("status") in ("failed", "error"):
            span.set_status(Status(StatusCode.ERROR, clip(verdict, 200, '') if verdict else None))
        elif case.get("status") == "passed":
            span.set_status(Status(StatusCode.OK))
        span.end(end_time=at)
    run.end(end_time=max(end, start))
    provider.shutdown()
    return list(kept.get_finished_spans())


def conversation_of(transcript: str) -> str | None:
    """The conversation a transcript_path names after `FILE#`: everything after the first '#' that follows a
    .json/.jsonl file name (a run's conversations.jsonl#<case id>, whose id may hold '#' and '/'), else after
    the last '#' of the file name (a trace file's #ID)."""
    cut = re.search(r"\.jsonl?#", transcript)
    if cut is not None:
        return transcript[cut.end():] or None
    return transcript.rpartition("#")[2] or None if "#" in Path(transcript).name else None


def _case_attributes(case: dict) -> dict:
    transcript = case.get("transcript_path") or ""
    conversation = conversation_of(transcript)
    metrics = case.get("metrics") or {}
    attributes = {
        "evalrun.case.id": case.get("id"), "evalrun.case.status": case.get("status"),
        "evalrun.case.source": case.get("source"), "evalrun.case.tags": [str(t) for t in case.get("tags") or []],
        "evalrun.case.transcript": transcript or None, "gen_ai.conversation.id": conversation,
        "evalrun.case.repeat": case.get("repeat"), "evalrun.case.run": case.get("run"),
        "error.type": "evalrun.case_error" if case.get("status") == "error" else None,
    }
    for name in ("journey_success", "journey_completion", "tool_call_precision", "tool_call_recall",
                 "tool_parameter_f1", "text_match", "turns"):
        attributes[f"evalrun.metric.{name}"] = metrics.get(name)
    return _clean(attributes)


def _verdict(case: dict) -> str:
    status = case.get("status")
    if status == "error":
        return _text(case.get("error"))
    if status == "unscored":
        return _text(case.get("unscored_reason"))
    if status == "skipped":
        return _text(case.get("skip_reason"))
    return _text("\n".join(str(f) for f in case.get("failures") or []))


def _clean(attributes: dict) -> dict:
    """Attributes OpenTelemetry accepts: no None, lists of one type."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None or value == "":
            continue
        if isinstance(value, (bool, int, float, str)):
            out[key] = value
        elif isinstance(value, list):
            out[key] = [str(v) for v in value]
        else:
            out[key] = json.dumps(value, default=str)
    return out


def _text(value: Any) -> str:
    return clip("" if value is None else str(value), _MAX_TEXT)


def _nanoseconds(started_at: Any) -> int:
    try:
        moment = datetime.fromisoformat(str(started_at).replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int(moment.timestamp() * 1e9)


def _write(spans: list, path: Path) -> None:
    from ..util.atomic import write_text_atomically  # written whole or not at all
    from .otlp_json import spans_document, spans_json_line

    try:
        if path.suffix.lower() == ".jsonl":  # one request per line, appended: a file that collects many runs
            with path.open("a", encoding="utf-8") as out:
                out.write(spans_json_line(spans) + "\n")
        else:
            write_text_atomically(path, json.dumps(spans_document(spans), ensure_ascii=False, indent=1) + "\n")
    except OSError as exc:
        raise OtlpExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def _traces_url(endpoint: str) -> str:
    """A bare endpoint (`http://host:4318`) gets OTLP/HTTP's traces path, as OTEL_EXPORTER_OTLP_ENDPOINT does."""
    parts = urlsplit(endpoint)
    return endpoint.rstrip("/") + "/v1/traces" if parts.path in ("", "/") else endpoint


def _send(spans: list, endpoint: str, deadline_s: float = SEND_DEADLINE_S) -> None:
    """POST the spans, all of it within `deadline_s`. The exporter's timeout bounds each read only (a receiver
    that answers a byte at a time never reaches it), so the export runs in a thread of its own, abandoned at the
    deadline: the run's process then ends as it would have, the thread with it."""
    import threading

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from ..util.http_body import status_only_session  # the receiver's answer is never read: it may be a bomb

    url = _traces_url(endpoint)
    exporter = OTLPSpanExporter(endpoint=url, timeout=deadline_s, session=status_only_session())
    outcome: dict = {}

    def export() -> None:
        try:
            outcome["result"] = exporter.export(spans)
        except Exception as exc:
            outcome["error"] = exc
        finally:
            exporter.shutdown()

    sending = threading.Thread(target=export, name="evalrun-otlp-export", daemon=True)
    sending.start()
    sending.join(deadline_s)
    if sending.is_alive():
        raise OtlpExportError(f"cannot send the spans to {url}: the receiver did not answer in full within "
                              f"{deadline_s:g} s")
    if "error" in outcome:
        raise OtlpExportError(f"cannot send the spans to {url}: {outcome['error']}")
    if outcome.get("result") is not SpanExportResult.SUCCESS:
        raise OtlpExportError(f"cannot send the spans to {url}: the receiver did not accept them "
                              "(see the message above)")
