"""One run as the web app reads it: the HTML report's data model (runner.report.html_data), made by the
report's own code (html_split, else saved_stream, else load_report). The run's index rows, one small row per
case, go to the browser whole; the whole cases stay in gzip chunks of about html_data.CHUNK_BYTES, each
inflated only when one of its cases is asked for. The last few runs opened are kept (LRU), keyed by the files'
mtime and size, so memory holds a few runs, never the history.
"""
from __future__ import annotations

import base64
import bisect
import gzip
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..report.compare import case_key
from ..report.html_data import write_data, write_encoded
from ..report.html_split import encode
from ..report.saved import load_report, parse_report_json
from ..report.saved_stream import SavedCase, Unstreamable, browser_json, stream_report
from .folder import RunsRoot

KEPT_RUNS = 4
_ELEMENT = 'id="evalrun-data">'


@dataclass
class RunData:
    run_id: str
    header: dict[str, Any]  # report.json without its cases (for a run still going: what its lines tell)
    rows: list[dict[str, Any]]  # html_data.index_row of every case, plus its "key" (and "variant")
    starts: list[int]  # the first case of each chunk
    chunks: list[str]  # gzip+base64 of each chunk's JSON list of whole cases
    finished: bool = True
    _inflated: OrderedDict[int, list] = field(default_factory=OrderedDict)

    def chunk(self, k: int) -> list[dict[str, Any]]:
        if k not in self._inflated:
            self._inflated[k] = json.loads(gzip.decompress(base64.b64decode(self.chunks[k])))
            while len(self._inflated) > 2:
                self._inflated.popitem(last=False)
        return self._inflated[k]

    def case(self, i: int) -> dict[str, Any]:
        k = bisect.bisect_right(self.starts, i) - 1
        return self.chunk(k)[i - self.starts[k]]

    def cases(self) -> Iterable[dict[str, Any]]:
        """Every case whole, a chunk at a time."""
        for k in range(len(self.chunks)):
            yield from self.chunk(k)

    def positions(self, key: str) -> list[int]:
        return [i for i, row in enumerate(self.rows) if row["key"] == key]


def view_key(case: dict[str, Any]) -> str:
    """A case's key in the app: the comparison's key (its id, its recorded run, its matrix variant)."""
    return case_key(case)


def plain_key(case: dict[str, Any]) -> str:
    """The key without its variant: a plain id asks for the case in every variant."""
    return case_key({**case, "variant": None})


class RunStore:
    def __init__(self, runs: RunsRoot):
        self.runs = runs
        self._kept: OrderedDict[tuple, RunData] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}  # one load of a run at a time: a second request waits for it

    def get(self, run_id: str) -> RunData:
        """The run's data; KeyError for an unknown run, NotAReport (naming the problem) for an unreadable one."""
        report, results = self.runs.file(run_id, "report.json"), self.runs.file(run_id, "results.jsonl")
        if report is None and results is None:
            raise KeyError(run_id)
        source = report or results
        assert source is not None  # one of the two exists (checked above)
        stat = source.stat()
        key = (run_id, str(source), stat.st_mtime_ns, stat.st_size)
        with self._lock:
            loading = self._loading.setdefault(run_id, threading.Lock())
        with loading:
            return self._get(key, run_id, report, results)

    def _get(self, key: tuple, run_id: str, report: Path | None, results: Path | None) -> RunData:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        if report is not None:
            data = read_run(run_id, report)
        else:
            assert results is not None  # get() found one of the two
            data = read_progress(run_id, results)
        with self._lock:
            self._kept[key] = data
            while len(self._kept) > KEPT_RUNS:
                self._kept.popitem(last=False)
        return data


def read_run(run_id: str, report: Path) -> RunData:
    split = encode(report)
    if split is not None:
        header, encoded = split
        out = io.StringIO()
        write_encoded(encoded.chunks, encoded.starts, encoded.rows, out, {})
        return _finish(run_id, header, out.getvalue())
    try:
        header, streamed = stream_report(report)
        out = io.StringIO()
        write_data(streamed, out, {})
    except Unstreamable:
        data = load_report(report)  # NotAReport names what is wrong
        header = {k: v for k, v in data.items() if k != "cases"}
        out = io.StringIO()
        write_data((SavedCase(case, browser_json(case)) for case in data["cases"]), out, {})
    return _finish(run_id, header, out.getvalue())


def read_progress(run_id: str, results: Path) -> RunData:
    """A run with no report.json yet: its finished cases from results.jsonl (a last line still being written
    is left for the next read)."""
    cases, counts = [], dict[str, int]()
    with results.open("rb") as source:
        for line in source:
            if not line.endswith(b"\n"):
                break
            try:
                case = parse_report_json(line)
            except ValueError:
                continue
            if isinstance(case, dict) and isinstance(case.get("id"), str):
                cases.append(SavedCase(case, browser_json(case)))
                counts[str(case.get("status"))] = counts.get(str(case.get("status")), 0) + 1
    out = io.StringIO()
    write_data(cases, out, {})
    header = {"run_id": run_id, "summary": {**counts, "total": len(cases)}}
    data = _finish(run_id, header, out.getvalue(), variants=True)
    data.finished = False
    return data


def _finish(run_id: str, header: dict[str, Any], element: str, variants: bool = False) -> RunData:
    """The RunData of the page's data element (html_data's <script> element, read back)."""
    text = element[element.index(_ELEMENT) + len(_ELEMENT):element.rindex("</script>")]
    data = json.loads(text)
    rows = json.loads(gzip.decompress(base64.b64decode(data["index"])))
    run = RunData(run_id, header, rows, data["starts"], data["chunks"])
    if variants or header.get("matrix"):  # the index has no variant: read it from the cases (a matrix run only)
        for row, case in zip(rows, run.cases(), strict=False):
            if case.get("variant"):
                row["variant"] = case["variant"]
    for row in rows:
        row["key"] = view_key(row)
    return run

