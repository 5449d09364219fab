"""OpenTelemetry traces (OTLP/JSON) as a transcript format: one file may hold many conversations."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Conversations, TranscriptFormat


def sniff(data: Any) -> bool:
    from ..otlp import is_otlp

    return is_otlp(data)


def normalize(data: Any) -> list:
    """The messages of a trace file of one conversation (a file of many is read by `conversations`)."""
    from ..otlp import read_trace_conversations

    found, _ = read_trace_conversations(data)
    return found[0].messages if len(found) == 1 else []


def conversations(data: Any, path: Path) -> Conversations:
    from ..otlp import trace_recordings

    return trace_recordings(data, path)


FORMAT = TranscriptFormat("otlp", "OpenTelemetry traces (OTLP/JSON), one document or one per line; FILE#ID names "
                          "one conversation of many", sniff, normalize, markers=(b'"resourceSpans"', b'"resourceLogs"'),
                          conversations=conversations)
