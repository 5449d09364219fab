"""What a run says: each case's line as it is saved (CaseLines), problems with files or options, the saved
failures (--save-failures), the spans (--otlp), and paths shown relative to the current folder."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...session.events import RunEvents

if TYPE_CHECKING:
    from ...report.console import Progress


class CaseLines(RunEvents):
    """The console while a run goes on (the run's RunEvents): each case's line as its result is saved (with -q only the lines that
    need a look), -v's goal lines under it, the progress line on a terminal, and the cascade's stage notes
    counted for the summary. It reads each result's digest (runner.results.digest); the whole result only for
    -v: a pool run's results are then validated again from their lines, in this process."""

    def __init__(self, out, *, verbose: bool, quiet: bool, err=None):
        from ...report.console import StageNotes

        self.out, self.err, self.verbose, self.quiet = out, err, verbose, quiet
        self.stage_notes = StageNotes()
        self.progress: Progress | None = None

    def started(self, total: int) -> None:
        from ...report.console import Progress

        self.progress = Progress(self.out, total)

    def notice(self, message: str) -> None:
        if self.err is not None:
            self.err.line(message)

    def saved(self, saved) -> None:
        from ...report.console import case_line, goal_lines

        self.stage_notes.add(saved)
        line: str | None = None
        if self.verbose or not self.quiet or saved.status in ("failed", "error", "unscored") or saved.judge_fallbacks:
            line = case_line(saved, self.out.color)
            if self.verbose:
                line = "\n".join([line, *goal_lines(saved.whole())])
        if self.progress is not None:
            self.progress.case(line, saved.status)
        elif line is not None:
            self.out.line(line)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress.finish()

    start, __call__ = started, saved  # the names it had before RunEvents


def save_failures(target: Path, outcome, err, paths: list[Path], config: Path | None) -> None:
    """Write --save-failures' file and say how to rerun it: with --config when the file lies where a rerun
    would not find the evalrun.yaml this run used (outside its folder)."""
    from ...authoring.write.failures import NotOurs, save_failures as write_failures
    from ...results.folder import describe_os_error

    command = "evalrun " + " ".join(sys.argv[1:])
    needed = config_for_rerun(target, paths, config)
    rerun = f"evalrun run {target}" + (f" --config {needed.resolve()}" if needed is not None else "")
    try:
        saved = write_failures(outcome.results(only_problems=True), target, command, rerun)
    except NotOurs as exc:
        err.line(f"--save-failures: {exc}")
        return
    except OSError as exc:
        err.line(f"--save-failures: cannot write {target}: {describe_os_error(exc)}")
        return
    except ValueError as exc:  # the results file went away after the run
        err.line(f"--save-failures: cannot read the results back: {exc}")
        return
    if not saved:
        err.line(f"--save-failures: no case failed or ended in error; {target} was not written")
        return
    said = f"evalrun run {target}"
    if needed is not None:
        said += (f" --config {shown(needed)} ({target} lies outside the folder of {shown(needed)}, so a rerun "
                 "does not find it by itself)")
    err.line(f"saved {len(saved)} case{'' if len(saved) == 1 else 's'} that did not pass to {target}: {said}")


def config_for_rerun(target: Path, paths: list[Path], config: Path | None) -> Path | None:
    """The evalrun.yaml a rerun of `target` must be given with --config: the one this run used, when a run
    of `target` alone, started from any folder, would not find it. None when it would (or the run had none)."""
    from ...config.discovery import find_config
    from ...util.files import real_path

    used = config if config is not None else find_config(paths)
    if used is None:
        return None
    folder = real_path(target.parent)  # from the file's own folder: the narrowest search a rerun can make
    found = find_config([target], cwd=folder)
    return None if found is not None and real_path(found) == real_path(used) else used


def shown(path: Path) -> str:
    """A path as the console shows it: relative to the current folder when it lies below it."""
    import os

    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def diagnostic_line(diagnostic, command: str) -> str:
    """A problem with a file as a compiler prints it (path:line:col: error: ...); a problem with a
    command-line option as a usage error that names the option (evalrun run: error: --agent: ...)."""
    if diagnostic.path.startswith("-"):
        said = diagnostic.message if diagnostic.message.startswith(diagnostic.path) \
            else f"{diagnostic.path}: {diagnostic.message}"
        return f"evalrun {command}: {diagnostic.severity}: {said}"
    return str(diagnostic)


def export_spans(report_path: Path, target: str, exit_code: int, out, err) -> int:
    """--otlp: the saved report as spans. A failed export is said, and a run that would exit 0 exits 3:
    spans a team counts on did not arrive."""
    from ...report.otlp import OtlpExportError, export_report
    from ...report.saved import NotAReport, load_report

    try:
        out.line(export_report(load_report(report_path), target))
    except (OtlpExportError, NotAReport) as exc:
        err.line(f"evalrun: --otlp: {exc}")
        return exit_code or 3
    return exit_code
