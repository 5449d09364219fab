"""`--last-failed`: the cases that did not pass in the latest run, to run them again (pytest's --lf).

The latest run is the one `.evalrun/reports/latest` points at, in the project's folder (beside its
evalrun.yaml: runner.config.discovery.project_home), so --lf works from any folder of the project; it is a
symlink, or latest.txt where symlinks are not allowed; only runs without --output-dir move it. Failed, errored and unscored cases are
rerun; a case recorded as several runs (`<id> run N`) or repeats (--repeat) is rerun once when any of
them did not pass.
"""
from __future__ import annotations

import os
from pathlib import Path

RERUN_STATUSES = ("failed", "error", "unscored")


class NoLatestReport(ValueError):
    """There is no latest report to read; the message says what to do."""


def latest_report(reports_root: Path) -> Path | None:
    link = reports_root / "latest"
    if (link / "report.json").is_file():
        return link / "report.json"
    pointer = reports_root / "latest.txt"
    if pointer.is_file():
        target = Path(pointer.read_text(encoding="utf-8").strip()) / "report.json"
        if target.is_file():
            return target
    return None


def last_failed_ids(reports_root: Path) -> tuple[Path, set[str]]:
    """(the latest report, the ids of its cases that did not pass). NoLatestReport when there is none."""
    from ..report.saved import NotAReport, load_report

    path = latest_report(reports_root)
    if path is None:
        shown = _shown(reports_root)
        raise NoLatestReport(f"there is no latest report in {shown} to take the failed cases from: run the "
                             "suites once without --last-failed (and without --output-dir, which leaves "
                             f"{os.path.join(shown, 'latest')} alone)")
    try:
        report = load_report(path)
    except NotAReport as exc:
        raise NoLatestReport(str(exc)) from None
    ids = set()
    for case in report["cases"]:
        if isinstance(case, dict) and case.get("status") in RERUN_STATUSES:
            case_id = str(case.get("id"))
            run = case.get("run")
            if run is not None and case_id.endswith(f" run {run}"):
                case_id = case_id[: -len(f" run {run}")]
            ids.add(case_id)
    return path, ids


def _shown(path: Path) -> str:
    """A path as messages show it: relative to the current folder when that is shorter."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return relative if len(relative) < len(str(path)) else str(path)
