"""A matrix run holds each case once per variant (the --matrix contract): the report readers every format and
`evalrun view` use accept the same id under two variants, and still refuse a case listed twice in one variant."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.report.saved import NotAReport, load_report
from runner.report.saved_stream import stream_report


def case(variant: str, status: str = "passed") -> dict:
    return {"id": "lookup", "status": status, "source": "s.yaml:1:3", "variant": variant}


def report(tmp_path: Path, cases: list[dict]) -> Path:
    head = {"version": "2", "evalrun_version": "0.1.0", "started_at": "2026-01-01T00:00:00+00:00", "config": {},
            "summary": {"total": len(cases), "passed": len(cases), "failed": 0, "error": 0, "skipped": 0,
                        "pass_rate": 1.0, "mean_journey_completion": None, "mean_tool_call_precision": None,
                        "mean_tool_call_recall": None, "exit_code": 0, "duration_s": 1.0},
            "matrix": {"axes": {"agent": ["a", "b"]}, "variants": [], "disagreements": []}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps({**head, "cases": cases}, separators=(",", ":")))
    return path


def test_one_case_under_two_variants_is_two_results(tmp_path):
    path = report(tmp_path, [case("agent=a"), case("agent=b", "failed")])
    assert [c["variant"] for c in load_report(path)["cases"]] == ["agent=a", "agent=b"]
    _, cases = stream_report(path)
    assert [c.data["variant"] for c in cases] == ["agent=a", "agent=b"]


def test_one_case_twice_in_one_variant_is_still_refused(tmp_path):
    path = report(tmp_path, [case("agent=a"), case("agent=a")])
    with pytest.raises(NotAReport,
                       match=r"cases\[1\]: case 'lookup' variant agent=a is listed twice \(also cases\[0\]\)"):
        load_report(path)
