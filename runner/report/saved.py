"""Reading a saved run for the report formats: report.json as plain data, and the few facts every
format derives from it (which suite file a case came from, why it did not pass, the pass rate with
its interval). Nothing here scores: a report shows what the run decided.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ..results.stats import wilson_interval

REPORT_NAME = "report.json"
PROBLEM_STATUSES = ("failed", "error", "unscored")


class NotAReport(ValueError):
    """The path holds no report evalrun wrote; the message says what to give instead."""


def report_file(path: Path) -> Path:
    """`path` itself when it is a file, else the report.json of the run folder it names."""
    target = path / REPORT_NAME if path.is_dir() else path
    if not target.is_file():
        raise NotAReport(f"{path} holds no {REPORT_NAME}: give a run's folder (for example "
                         ".evalrun/reports/latest) or its report.json")
    return target


def load_report(path: Path) -> dict[str, Any]:
    """The report as plain dicts, parsed once (no models built: a report may hold 50,000 cases)."""
    target = report_file(path)
    try:
        with target.open("rb") as source:
            data = json.load(source)
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotAReport(f"{target} is not a report evalrun wrote: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("summary"), dict) or not isinstance(data.get("cases"), list):
        raise NotAReport(f"{target} is not a report evalrun wrote: it has no summary and cases")
    return data


def suite_file(case: dict) -> str:
    """The suite file of a case, from its `source` (path:line:column)."""
    source = str(case.get("source") or "")
    parts = source.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0]
    return source or "(unknown file)"


def reasons(case: dict) -> list[str]:
    """Why a case did not pass, one line each, in the words the run used."""
    status = case.get("status")
    if status == "failed":
        return [str(line) for line in case.get("failures") or []] or ["failed (no reason was recorded)"]
    if status == "error":
        return [str(case.get("error") or "ended in error (no reason was recorded)")]
    if status == "unscored":
        return [str(case.get("unscored_reason") or "could not be scored (no reason was recorded)")]
    if status == "skipped":
        return [str(case.get("skip_reason") or "skipped")]
    return []


def extra_calls_text(names: list[str]) -> str:
    """`2 extra calls: cancel_order, issue_refund` (a tool called more than once: `get_order ×2`); '' for none."""
    if not names:
        return ""
    counted = {name: names.count(name) for name in dict.fromkeys(names)}
    listed = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counted.items())
    return f"{len(names)} extra call{'s' if len(names) > 1 else ''}: {listed}"


def one_line_reason(case: dict) -> str:
    lines = reasons(case)
    if not lines:
        return ""
    first = " ".join(lines[0].split())
    return first + (f" (+{len(lines) - 1} more)" if len(lines) > 1 else "")


def pass_rate(summary: dict) -> tuple[Optional[float], Optional[tuple[float, float]], int, int]:
    """(rate, 95% Wilson interval, passed, decided): over passed + failed cases, as the run counts it."""
    passed = int(summary.get("passed") or 0)
    decided = passed + int(summary.get("failed") or 0)
    if not decided:
        return None, None, passed, 0
    return passed / decided, wilson_interval(passed, decided), passed, decided


def percent(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def pass_rate_text(summary: dict) -> str:
    rate, interval, passed, decided = pass_rate(summary)
    if rate is None:
        return "n/a (no case was passed or failed)"
    return f"{percent(rate)} ({passed}/{decided}; 95% CI {percent(interval[0])}–{percent(interval[1])})"
