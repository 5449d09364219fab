"""What the app asks for, answered as plain JSON-ready data: the server (server.py) and the static export
(export.py) both answer from here. Every run id and case key is a lookup key; an unknown one is a 404.

A run folder may come from anywhere (a CI artifact, an older evalrun): what the server sends and the export
writes passes through `shown`, so a secret of this process (runner/util/secrets.py) never leaves it, whatever
the folder holds."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from ..report.saved import NotAReport
from ..util.secrets import Redactor, redact, redact_data
from .comparison import compare_runs
from .folder import RunsRoot
from .history import case_history
from .run_data import RunData, RunStore
from .summaries import Summaries

HEADER_LEFT_OUT = ("cases",)


def shown(value: Any) -> Any:
    """`value` as it may leave this process: every string masked (runner/util/secrets.py), when there is a
    secret to mask (the data as it is otherwise: a run of thousands of cases is not copied for nothing)."""
    return redact_data(value) if Redactor() else value


class NotFound(Exception):
    """An unknown run or case: the message names it."""


class Unreadable(Exception):
    """The run's report cannot be read: the message says why."""


class ViewApi:
    def __init__(self, given: Path):
        self.runs = RunsRoot(given)
        self.summaries = Summaries(self.runs)
        self.store = RunStore(self.runs)

    def runs_list(self) -> dict[str, Any]:
        return {"root": str(self.runs.root), "runs": self.summaries.all()}

    def run_data(self, run_id: str) -> RunData:
        try:
            return self.store.get(run_id)
        except KeyError:
            raise NotFound(f"no run '{run_id}' in {self.runs.root}") from None
        except NotAReport as exc:
            raise Unreadable(str(exc)) from None

    def run(self, run_id: str) -> dict[str, Any]:
        data = self.run_data(run_id)
        return run_json(data)

    def chunk_gzip(self, run_id: str, k: int) -> bytes:
        """The chunk as the gzip member the report made (sent with Content-Encoding: gzip), made again with
        this process's secrets masked when it has any."""
        import base64

        data = self.run_data(run_id)
        if not 0 <= k < len(data.chunks):
            raise NotFound(f"run '{run_id}' has no chunk {k}")
        member = base64.b64decode(data.chunks[k])
        if not Redactor():
            return member
        return gzip.compress(redact(gzip.decompress(member).decode("utf-8")).encode("utf-8"), mtime=0)

    def compare(self, old: str, new: str) -> dict[str, Any]:
        return compare_runs(self.run_data(old), self.run_data(new))

    def case(self, key: str) -> dict[str, Any]:
        return case_history(key, self.runs, self.summaries, self.store)


def run_json(data: RunData) -> dict[str, Any]:
    header = {k: v for k, v in data.header.items() if k not in HEADER_LEFT_OUT}
    return {"id": data.run_id, "header": header, "rows": data.rows, "starts": data.starts,
            "chunks": len(data.chunks), "finished": data.finished, "matrix": matrix_grid(data)}


def matrix_grid(data: RunData) -> dict[str, Any] | None:
    """A matrix run's grid: a row per case, a column per variant (the report's `matrix` object gives the
    columns, their pass rate and cost), cases where variants disagree first. None for a run without a matrix."""
    matrix = data.header.get("matrix")
    if not isinstance(matrix, dict):
        return None
    variants = [v for v in matrix.get("variants") or [] if isinstance(v, dict)]
    columns = [str(v.get("id")) for v in variants]
    cells: dict[str, dict[str, list[str]]] = {}
    for row in data.rows:
        cells.setdefault(str(row.get("id")), {}).setdefault(str(row.get("variant")), []).append(row["status"])
    disagreements = [str(case) for case in matrix.get("disagreements") or []]
    rest = [case for case in cells if case not in set(disagreements)]
    grid = []
    for case in [c for c in disagreements if c in cells] + rest:
        statuses = {variant: _one_status(found) for variant, found in cells[case].items()}
        grid.append({"case": case, "cells": statuses,
                     "disagree": len({statuses.get(c) for c in columns}) > 1})
    return {"axes": matrix.get("axes"), "variants": variants, "columns": columns, "grid": grid}


def _one_status(statuses: list[str]) -> str:
    return statuses[0] if len(set(statuses)) == 1 else "mixed"
