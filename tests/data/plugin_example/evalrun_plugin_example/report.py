"""`--format csv`: one line per case, its id and status."""
import csv
from typing import Any, TextIO

from runner.report.base import ReportFormat


def write(report: dict[str, Any], out: TextIO) -> None:
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(["id", "status"])
    for case in report.get("cases", []):
        rows.writerow([case.get("id", ""), case.get("status", "")])


FORMAT = ReportFormat("csv", "one line per case: its id and status", "cases.csv", write)
