"""`--format json`: report.json, which every run writes anyway. Asked for by name it is accepted (CI
scripts list every format they read); `evalrun report RUN_DIR --format json -o FILE` writes a copy,
checked like any saved report and written in one piece."""
from __future__ import annotations

import json
from typing import Any, TextIO

from .base import ReportFormat


def write(report: dict[str, Any], out: TextIO) -> None:
    json.dump(report, out, ensure_ascii=False)
    out.write("\n")


FORMAT = ReportFormat("json", "the report as JSON (always written: report.json)", "report.json", write)
