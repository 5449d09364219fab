"""Which runs a folder holds, and the only way a file of one is opened.

PROJECT_OR_RUNS_DIR is a project (its `.evalrun/reports/` is used), a folder of run folders (each holding a
report.json or a results.jsonl: `evalrun run --output-dir`, `evalrun merge -o`), or one run folder. A run's
id is its folder's name. Run ids and case ids come from the URL and are hostile: they are only ever keys into
the runs found by a scan, never joined into a path; symlinked run folders and files are not followed (the
`latest` link names a run already listed), and every file opened is checked to be inside the root once its
links are resolved.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..report.saved import REPORT_NAME
from ..results.folder import RESULTS_NAME

REPORTS_DIR = Path(".evalrun") / "reports"


class NoRuns(Exception):
    """The folder holds no run: the message says where evalrun looked and what to give instead."""


class RunsRoot:
    """The runs under one folder, found again by `scan` at most once a second (a run that starts while the app is
    open appears)."""

    SCAN_KEPT_S = 1.0  # a scan answers the requests of the next second (a page asks for a run and its chunks)

    def __init__(self, given: Path):
        self.given = given
        project = given / REPORTS_DIR
        self.root = (project if project.is_dir() else given).resolve()
        self.single = is_run_folder(self.root)  # the folder given is one run
        self._kept: tuple[float, dict[str, Path]] | None = None

    def scan(self) -> dict[str, Path]:
        """run id -> its folder, for every run under the root."""
        if self.single:
            return {self.root.name: self.root}
        kept = self._kept
        if kept is not None and time.monotonic() - kept[0] < self.SCAN_KEPT_S:
            return kept[1]
        found = self._scan()
        self._kept = (time.monotonic(), found)
        return found

    def _scan(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return found
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if is_run_folder(path):
                found[entry.name] = path
        return found

    def require_runs(self) -> dict[str, Path]:
        """The runs; NoRuns when there is none."""
        if not self.root.is_dir():
            raise NoRuns(f"{self.given} is not a folder: give a project (with .evalrun/reports/) or a folder of "
                         "run folders")
        runs = self.scan()
        if not runs:
            where = self.root if self.root == self.given.resolve() else f"{self.given} ({self.root})"
            raise NoRuns(f"no runs in {where}: a run folder holds {REPORT_NAME} or {RESULTS_NAME}; run "
                         "`evalrun run SUITES` first, or give the folder your runs were written to (--output-dir)")
        return runs

    def file(self, run_id: str, name: str, found: dict[str, Path] | None = None) -> Path | None:
        """The file `name` (one of the names evalrun writes) of run `run_id`, or None: the run is unknown, the
        file is missing, a link, or outside the root. `found`: a scan just made (else one is made)."""
        if name not in (REPORT_NAME, RESULTS_NAME):
            return None
        folder = (self.scan() if found is None else found).get(run_id)
        if folder is None:
            return None
        path = folder / name
        if path.is_symlink() or not path.is_file():
            return None
        real = path.resolve()
        return real if real.is_relative_to(self.root) else None


def is_run_folder(path: Path) -> bool:
    return any((path / name).is_file() and not (path / name).is_symlink() for name in (REPORT_NAME, RESULTS_NAME))
