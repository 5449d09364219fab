"""One row of the runs list per run, read from the head of its report.json (everything before its cases), never
from the whole file, and kept until the file changes (its mtime and size): 200 runs of 5,000 cases list at
once. A run with results.jsonl and no report.json yet (still going, or killed) shows how far it got, from its
results' lines; a report that cannot be read is listed as unreadable, with the reason.
"""
from __future__ import annotations

import io
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..report.saved import NotAReport, load_report, pass_rate
from ..report.saved_stream import Unstreamable, read_header
from ..results.run_lock import LOCK_NAME, in_use
from .folder import RunsRoot

_FIRST_READ = 64 * 1024  # most heads are a few KB; doubled until the cases' key is found
_STATUS = re.compile(rb'^\{"id":"(?:[^"\\]|\\.)*","status":"(\w+)"', re.MULTILINE)  # a results.jsonl line's start
SUMMARY_FIELDS = ("run_id", "started_at", "paths", "shard", "selection", "agent", "merged_from", "evalrun_version")


class Summaries:
    """run id -> its row, cached by (mtime, size) of the file it was read from."""

    def __init__(self, runs: RunsRoot):
        self.runs = runs
        self._cache: dict[str, tuple[tuple, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def all(self) -> list[dict[str, Any]]:
        """Every run's row, newest first (by start time, then id)."""
        found = self.runs.scan()
        rows = [self.one(run_id, folder, found) for run_id, folder in found.items()]
        with self._lock:
            for gone in set(self._cache) - set(found):
                del self._cache[gone]
        rows.sort(key=lambda row: (_when(row.get("started_at")), row["id"]), reverse=True)
        return rows

    def one(self, run_id: str, folder: Path, found: dict[str, Path]) -> dict[str, Any]:
        report, results = self.runs.file(run_id, "report.json", found), self.runs.file(run_id, "results.jsonl", found)
        source = report or results
        if source is None:
            return {"id": run_id, "state": "unreadable", "problem": "no report.json or results.jsonl to read"}
        stamp = _stamp(source), (_stamp(results) if results is not None and report is not None else None)
        with self._lock:
            cached = self._cache.get(run_id)
        if cached is not None and cached[0] == stamp and (report is not None or not _live(folder)):
            return cached[1]
        row = summary_row(run_id, report) if report is not None else progress_row(run_id, source, folder)
        if report is not None and results is not None and stamp[1] is not None and stamp[1][0] > stamp[0][0] \
                and _live(folder):
            row = {**progress_row(run_id, results, folder), "previous": row}  # a rerun into the same folder
        with self._lock:
            self._cache[run_id] = (stamp, row)
        return row


def summary_row(run_id: str, report: Path) -> dict[str, Any]:
    """The runs list's row of a finished run."""
    try:
        header = read_head(report)
    except NotAReport as exc:
        return {"id": run_id, "state": "unreadable", "problem": str(exc)}
    summary = header.get("summary") or {}
    rate, interval, _passed, decided = pass_rate(summary)
    row = {"id": run_id, "state": "finished", **{k: header.get(k) for k in SUMMARY_FIELDS if header.get(k)},
           "summary": summary, "pass_rate": rate, "pass_rate_interval": list(interval) if interval else None,
           "decided": decided, "agents": agents_of(header), "git": git_of(header)}
    matrix = header.get("matrix")
    if isinstance(matrix, dict):
        row["matrix"] = {"axes": matrix.get("axes"), "variants": len(matrix.get("variants") or [])}
    return row


def read_head(report: Path) -> dict[str, Any]:
    """report.json without its cases, read from its first bytes (checked as load_report checks a head). A report
    in another layout is read whole. NotAReport, naming the problem, when it is not a report evalrun wrote."""
    size = _FIRST_READ
    with report.open("rb") as source:
        while True:
            source.seek(0)
            prefix = source.read(size)
            whole = len(prefix) < size
            try:
                header, _ = read_header(io.BytesIO(prefix))
                return header
            except Unstreamable:
                if not whole:
                    size *= 4
                    continue
            break
    data = load_report(report)  # NotAReport says what is wrong
    return {k: v for k, v in data.items() if k != "cases"}


def progress_row(run_id: str, results: Path, folder: Path) -> dict[str, Any]:
    """The row of a run with no report.json: counts by status from results.jsonl's lines (no line parsed whole)."""
    counts: dict[str, int] = {}
    with results.open("rb") as source:
        data = source.read()
    finished = data[:data.rfind(b"\n") + 1]  # a last line still being written is counted at the next look
    for match in _STATUS.finditer(finished):
        status = match.group(1).decode("ascii")
        counts[status] = counts.get(status, 0) + 1
    rate, interval, _, decided = pass_rate(counts)
    live = _live(folder)
    return {"id": run_id, "state": "running" if live else "incomplete",
            "problem": None if live else "no report.json: the run was stopped before it finished",
            "started_at": _started(results), "summary": {**counts, "total": sum(counts.values())},
            "done": sum(counts.values()), "pass_rate": rate,
            "pass_rate_interval": list(interval) if interval else None, "decided": decided}


def agents_of(header: dict[str, Any]) -> list[str]:
    """The agents (and their models) a run used: --agent, the matrix's variants, else the agents configured."""
    if header.get("agent"):
        return [str(header["agent"])]
    matrix = header.get("matrix")
    if isinstance(matrix, dict) and isinstance(matrix.get("variants"), list):
        return [str(v.get("id")) for v in matrix["variants"] if isinstance(v, dict)]
    agents = (header.get("config") or {}).get("agents") or {}
    out = []
    for name, agent in agents.items() if isinstance(agents, dict) else []:
        model = agent.get("model") if isinstance(agent, dict) else None
        out.append(f"{name} ({model})" if model else str(name))
    return out


def git_of(header: dict[str, Any]) -> str | None:
    """The git commit the run recorded, if any (a `git` object or string in the report's head or config)."""
    for place in (header, header.get("config") or {}):
        value = place.get("git") if isinstance(place, dict) else None
        if isinstance(value, dict):
            value = value.get("commit") or value.get("sha")
        if isinstance(value, str) and value:
            return value
    return None


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def _live(folder: Path) -> bool:
    return (folder / LOCK_NAME).is_file() and in_use(folder)


def _started(results: Path) -> str:
    """When a run with no report.json started: from its id when it follows evalrun's pattern (local time,
    YYYYmmdd-HHMMSS-...), else when its results.jsonl was last written."""
    import datetime as dt

    match = re.match(r"(\d{8})-(\d{6})", results.parent.name)
    if match:
        stamp = dt.datetime.strptime(match.group(1) + match.group(2), "%Y%m%d%H%M%S").astimezone()
    else:
        stamp = dt.datetime.fromtimestamp(os.stat(results).st_mtime).astimezone()
    return stamp.isoformat()


def _when(started: Any) -> float:
    """A start time as seconds, to sort by (a time without its zone is taken as local; unreadable: the oldest)."""
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(str(started)).astimezone().timestamp()
    except ValueError:
        return float("-inf")
