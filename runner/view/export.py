"""`evalrun view --export DIR`: the same app as static files, over the runs of a folder. The data travel as
script files (data/*.js), each calling the app's loader with one JSON value, so the export also opens from
disk (file://, where a page may not fetch). A run id never becomes a file name: runs are numbered. A run is
compared with the one before it (newest first: each run with the next older one); the case pages hold each
case's status across the exported runs.
"""
from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

from ..report.html import script_json
from .api import ViewApi, run_json, shown
from .history import entry, history
from .run_data import plain_key
from .server import STATIC, static_text

EXPORT_MARK = '<meta name="evalrun-export" content="1">'  # the app reads data/*.js instead of asking a server


def export(given: Path, out: Path) -> int:
    """Write the app and the data of every readable run under `given` into `out`; returns how many runs."""
    api = ViewApi(given)
    listing = api.runs_list()
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)  # the data of an earlier export: a run removed since must not linger
    data.mkdir(parents=True)
    readable, files = [], dict[str, Any]()
    cases: dict[str, list[dict[str, Any]]] = {}
    for row in listing["runs"]:
        if row.get("state") == "unreadable":
            continue
        name = f"run-{len(files)}"
        try:
            run = api.run_data(row["id"])
        except Exception as exc:  # a report readable in its head but not whole: listed as unreadable
            row.update(state="unreadable", problem=str(exc))
            continue
        files[row["id"]] = name
        _write(data / f"{name}.js", name, run_json(run))
        for k in range(len(run.chunks)):
            _write(data / f"{name}-chunk-{k}.js", f"{name}-chunk-{k}", run.chunk(k))
        for case in run.rows:  # under its key, and under its plain id too when it has a variant (as the server)
            for key in dict.fromkeys((case["key"], plain_key(case))):  # a plain id: every variant
                cases.setdefault(key, []).append(entry(row, case))
        readable.append(row["id"])
    comparisons = {}
    for n, (new, old) in enumerate(itertools.pairwise(readable)):
        name = f"compare-{n}"
        _write(data / f"{name}.js", name, api.compare(old, new))
        comparisons[f"{old}\n{new}"] = name
    _write(data / "cases.js", "cases", {key: history(key, found, len(readable), 0) for key, found in cases.items()})
    _write(data / "runs.js", "runs", {**listing, "files": files, "comparisons": comparisons, "export": True})
    (out / "static").mkdir(exist_ok=True)
    for name in STATIC:
        text = static_text(name)
        if name == "index.html":
            (out / name).write_text(text.replace("<!--export-->", EXPORT_MARK), encoding="utf-8")
        else:
            (out / "static" / name).write_text(text, encoding="utf-8")
    return len(readable)


def _write(path: Path, name: str, value: Any) -> None:
    """data/NAME.js: one call of the app's loader, its value as the HTML report writes JSON into a script
    (no <, > or &, nothing but ASCII): inert as script text whatever the run holds; this process's secrets are
    masked before it is escaped."""
    path.write_text(f"evalrunData({json.dumps(name)},{script_json(shown(value))});\n", encoding="ascii")
