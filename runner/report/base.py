"""What a report format declares next to its code (the registry in formats.py is built from these)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TextIO


@dataclass(frozen=True)
class ReportFormat:
    name: str
    description: str
    file_name: str  # the default file name inside a run folder
    write: Callable[[dict[str, Any], TextIO], None]  # (the report as plain data, a text stream)
