"""What a report format declares next to its code (the registry in formats.py is built from these)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO


@dataclass(frozen=True)
class ReportFormat:
    name: str
    description: str
    file_name: str  # the default file name inside a run folder
    write: Callable[[dict[str, Any], TextIO], None]  # (the report as plain data, a text stream)
    # (a saved report.json, a text stream): writes the format while reading the cases one at a time;
    # raises saved_stream.Unstreamable for a file it cannot read that way (then `write` is used)
    write_saved: Callable[[Path, TextIO], None] | None = None
