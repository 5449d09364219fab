"""One case across runs: its status in each run, newest first, and whether it is flaky (it passed in some runs and
not in others). Read from each run's results.jsonl, where every line is one case and starts with its id and
status: only the lines of that case are parsed (a run with no results.jsonl, such as a merged report, is read
through the run store). The newest MAX_RUNS runs are searched.
"""
from __future__ import annotations

import itertools
import json
import re
from typing import Any

from ..report.saved import NotAReport, one_line_reason, parse_report_json
from .folder import RunsRoot
from .run_data import RunStore, plain_key, view_key
from .summaries import Summaries

MAX_RUNS = 50


def case_history(key: str, runs: RunsRoot, summaries: Summaries, store: RunStore) -> dict[str, Any]:
    rows = [row for row in summaries.all() if row.get("state") != "unreadable"]
    searched, found = rows[:MAX_RUNS], []
    case_id = _id_of(key)
    found_runs = runs.scan()
    for row in searched:
        results = runs.file(row["id"], "results.jsonl", found_runs)
        try:
            entries = (_from_results(results, key, case_id) if results is not None
                       else _from_store(store, row["id"], key))
        except (OSError, NotAReport, KeyError):
            continue
        found += [entry(row, case) for case in entries]
    return history(key, found, len(searched), max(0, len(rows) - len(searched)))


def entry(run_row: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """One run's result of the case (a whole case or its index row), as the case page lists it."""
    return {"run": run_row["id"], "started_at": run_row.get("started_at"), "status": case.get("status"),
            "repeat": case.get("repeat"), "variant": case.get("variant"), "reason": one_line_reason(case),
            "duration_s": case.get("duration_s")}


def history(key: str, found: list[dict[str, Any]], searched: int, left_out: int) -> dict[str, Any]:
    """The case page's data (`found` newest first). Flaky: its repeats in one run did not agree, or it went from
    passing to not passing and back (or the other way) over the runs; one change is a change, not flakiness."""
    return {"case": key, "runs": found, "flaky": flaky(found), "searched": searched, "left_out": left_out}


def flaky(found: list[dict[str, Any]]) -> bool:
    by_run: dict[tuple, set[bool]] = {}  # variants of a matrix run are different agents or models: not repeats
    for e in reversed(found):  # oldest first
        if e["status"] != "skipped":
            by_run.setdefault((e["run"], e.get("variant")), set()).add(e["status"] == "passed")
    if len({variant for _, variant in by_run}) > 1:  # a plain id over variants: each variant's own sequence
        return any(flaky([e for e in found if e.get("variant") == v]) for v in {v for _, v in by_run})
    if any(len(outcomes) > 1 for outcomes in by_run.values()):
        return True
    sequence = [next(iter(outcomes)) for outcomes in by_run.values()]
    return sum(1 for x, y in itertools.pairwise(sequence) if x != y) >= 2


def _id_of(key: str) -> str:
    """The case id in an app key: `id`, `id (run N)`, `id [variant]`, `id (run N) [variant]`."""
    key = re.sub(r" \[[^\]]*\]$", "", key)
    return re.sub(r" \(run \d+\)$", "", key)


def _from_results(results, key: str, case_id: str) -> list[dict[str, Any]]:
    prefix = b'{"id":' + json.dumps(case_id, ensure_ascii=False).encode("utf-8", "surrogatepass") + b',"status":"'
    pattern = re.compile(b"^" + re.escape(prefix), re.MULTILINE)
    data = results.read_bytes()
    out = []
    for match in pattern.finditer(data):
        end = data.find(b"\n", match.start())
        try:
            case = parse_report_json(data[match.start():end if end >= 0 else len(data)])
        except ValueError:
            continue  # the line still being written
        if isinstance(case, dict) and key in (view_key(case), plain_key(case)):  # a plain id: every variant
            out.append(case)
    return out


def _from_store(store: RunStore, run_id: str, key: str) -> list[dict[str, Any]]:
    run = store.get(run_id)
    return [run.case(i) for i, row in enumerate(run.rows) if key in (row["key"], plain_key(row))]
