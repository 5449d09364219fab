"""Write report formats from a saved run: `evalrun run --format` right after report.json is written,
and `evalrun report RUN_DIR --format` any time later. A format that can stream (html) reads report.json
one case at a time; the others share one reading of it, made only when one of them is asked for. Each
file is written under a temporary name and renamed into place, so a reader never sees half."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..util.atomic import open_atomically
from . import formats
from .saved import load_report, report_file
from .saved_stream import Unstreamable

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def render(fmt: str, source: Path, out_path: Path | None = None) -> Path:
    """Write format `fmt` of the run at `source` (a run folder or its report.json) to `out_path`
    (default: the format's file name in the run folder). Returns where it went. NotAReport, KeyError
    (unknown format) or OSError on failure."""
    return render_many([fmt], source, {fmt: out_path} if out_path is not None else None)[0]


def render_many(names: Sequence[str], source: Path, out_paths: dict[str, Path] | None = None,
                problems: list[str] | None = None) -> list[Path]:
    """Every format in `names` from one reading of the report. With `problems`, a format that cannot
    be written (OSError) is described there and the others are still written; without, it raises."""
    chosen = [formats.get(name) for name in dict.fromkeys(names)]  # unknown names fail before any work
    report_path = report_file(source)
    loaded: list[dict[str, Any]] = []  # the report read whole, once, when a format needs it

    def report() -> dict[str, Any]:
        if not loaded:
            loaded.append(load_report(report_path))
        return loaded[0]

    written = []
    for fmt in chosen:
        target = (out_paths or {}).get(fmt.name) or report_path.parent / fmt.file_name
        if _same_file(target, report_path):  # `--format json` into the run folder: report.json is there already
            report()  # ... and must be a report
            written.append(report_path)
            continue
        try:
            written.append(_write(fmt, report, report_path, target))
            if fmt.name == "md":
                append_step_summary(target)
        except OSError as exc:
            if problems is None:
                raise
            problems.append(f"cannot write the {fmt.name} report to {target}: {exc.strerror or exc}")
    return written


def render_beside(names: Sequence[str], report_path: Path, notes: list[str]) -> list[Path]:
    """A run's --format files, rendered from the report.json just written (never from memory, so they
    equal what `evalrun report` makes later); report.json itself is not listed again. A format that
    cannot be written is a note in `notes`, not a failed run."""
    try:
        return [path for path in render_many(names, report_path, problems=notes) if path != report_path]
    except (OSError, ValueError) as exc:  # report.json could not be read back
        notes.append(f"cannot write the {', '.join(names)} report(s) beside {report_path}: {exc}")
        return []


def _same_file(target: Path, report_path: Path) -> bool:
    try:
        return target.resolve() == report_path.resolve()
    except OSError:
        return False


def _write(fmt: formats.ReportFormat, report: Callable[[], dict[str, Any]], report_path: Path, target: Path) -> Path:
    if fmt.write_saved is not None:
        try:
            with open_atomically(target) as out:
                fmt.write_saved(report_path, out)
            return target
        except Unstreamable:  # another layout or an invalid report: read whole, which names any problem
            pass
    with open_atomically(target) as out:
        fmt.write(report(), out)
    return target


def append_step_summary(markdown_file: Path) -> Path | None:
    """Append the Markdown summary to $GITHUB_STEP_SUMMARY (GitHub Actions shows it on the run's
    page) when that variable is set; the summary file itself is left as it is."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as out:
        out.write(markdown_file.read_text(encoding="utf-8"))
        out.write("\n")
    return Path(target)
