"""The evalrun projects a pytest run holds: reading their cases, playing them, writing their run folders.

runner.frontends.pytest.plugin holds the pytest side (hooks, collectors, tests); this module what it asks of
runner.session. A `Project` is one folder with its evalrun.yaml, read once as `evalrun PATHS` reads it and
played one case at a time in any process of the run; a `Writer` is its run folder in the process that
reports (the only process, or pytest-xdist's controller), fed by the results the tests' reports carry.

Only the standard library is imported at the top: pytest loads this with the plugin in every run.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from ...results.models import CaseResult
    from ...session.lifecycle import OpenRun, PreparedRun
    from ...session.request import RunOutcome

from ...layout import CONFIG_NAMES


class Project:
    """One evalrun project (a folder with its evalrun.yaml): its cases, read once through runner.session.
    `session` is the plugin's (runner.frontends.pytest.plugin.EvalrunSession): the config, the run's id and folder,
    the event loop cases play on."""

    def __init__(self, session: Any, root: Path, ordinal: int):
        self.session, self.root, self.ordinal = session, root, ordinal
        self.selected: list[tuple[str, int]] = []  # (node id, case position) of the tests pytest will run
        self._prepared: Any = None
        self.ended: RunOutcome | None = None  # the outcome that ended the project's run before any case
        self._by_file: dict[Path, list[tuple[int, Any]]] | None = None
        self._problems: dict[Path | None, list[str]] = {}  # errors by suite file; None: the project's own
        self._broken_files: set[Path] = set()  # a project with errors: its suite files, which show them
        self.warnings: list[Any] = []
        self.runner: Any = None
        self.conversations: Any = None
        self.selection_sent = False

    @property
    def folder(self) -> Path:
        """This project's run folder: the run's, with a suffix for the second project of one pytest run on."""
        base = self.session.base
        return base if self.ordinal == 0 else base.with_name(f"{base.name}-{self.ordinal + 1}")

    def paths(self) -> list[Path]:
        """What the project's run is given, as `evalrun` would be: the paths named to pytest that lie in the
        project (a file or folder named is collected even when evalrun.yaml excludes it), else its folder."""
        config = self.session.config
        named = [(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args]
        inside = [p for p in named if p == self.root or self.root in p.parents]
        kept = [p for p in inside if not any(q in p.parents for q in inside)]  # one path inside another: once
        return list(dict.fromkeys(kept)) or [self.root]

    def request(self):
        from ...session.request import RunRequest

        config = self.session.config
        output_dir, baseline = config.getoption("evalrun_output_dir"), config.getoption("evalrun_baseline")
        return RunRequest(self.paths(), output_dir=self.folder if output_dir is not None else None,
                          formats=list(config.getoption("evalrun_formats")),
                          baseline=config.invocation_params.dir / baseline if baseline is not None else None,
                          max_regression=config.getoption("evalrun_max_regression"))

    def _load(self) -> None:
        if self._by_file is not None:
            return
        from ...session.ended import RunEnded
        from ...session.lifecycle import prepare_run

        self._by_file = {}
        try:
            prepared = self._prepared = prepare_run(self.request())
        except RunEnded as ended:  # the session's boundary: the run ends before any case
            self.ended = self._prepared = ended.outcome
        self.warnings = [d for d in self._prepared.diagnostics if d.severity != "error"]
        if self.ended is None:
            for position, ref in enumerate(prepared.index.refs):
                self._by_file.setdefault(Path(ref.path).resolve(), []).append((position, ref))
            return
        errors = [d for d in self.ended.diagnostics if d.severity == "error"]
        if not errors:
            return  # nothing to run (no case), which is no error
        from ...session.collect import collect

        self._broken_files = {Path(f).resolve() for f in collect(self.paths()).files}
        for d in errors:
            path = Path(d.path).resolve()
            self._problems.setdefault(path if path in self._broken_files else None, []).append(str(d))

    def collects(self, path: Path) -> bool:
        """Whether `path` is a test file of this project: a suite with cases, or one whose errors (or the
        project's) it must show."""
        self._load()
        path = path.resolve()
        if self._by_file.get(path):  # type: ignore[union-attr]  # _load() set it
            return True
        if path.name in CONFIG_NAMES:
            return None in self._problems
        return path in self._broken_files

    def refs_of(self, path: Path) -> list[tuple[int, Any]]:
        self._load()
        return self._by_file.get(path.resolve(), [])  # type: ignore[union-attr]  # _load() set it

    def problems_of(self, path: Path) -> list[str]:
        self._load()
        return self._problems.get(path.resolve(), [])

    def take_project_problems(self) -> list[str]:
        """The errors of the project itself (its evalrun.yaml, say): shown once, by the first file collected."""
        self._load()
        return self._problems.pop(None, [])

    @property
    def prepared(self) -> PreparedRun | RunOutcome:
        """The project's run, prepared (or the outcome that stops it: errors, no case)."""
        self._load()
        return self._prepared

    def play(self, position: int) -> list[CaseResult]:
        """Play one case to its results, here and now (its conversation saved in the run folder)."""
        if self.runner is None:
            from ...results.folder import RunFolder

            self.conversations = RunFolder(self.folder, self.session.run_id, None, redact=self.prepared.redact)
            self.runner = self.prepared.case_runner(self.conversations.save_conversation)  # type: ignore[union-attr]  # not ended (checked first): a PreparedRun
        from ...util.signals import InterruptBetweenSteps

        ref = self.prepared.index.refs[position]  # type: ignore[union-attr]  # not ended (checked first): a PreparedRun
        # a Ctrl-C now must stop the session (pytest's KeyboardInterrupt), not become this case's error
        return InterruptBetweenSteps().run(self.session.play_loop(), self.runner.run(ref))

    def payload(self, position: int, results: list[CaseResult]) -> dict:
        """What the reporting process needs to save these results: plain data, as pytest-xdist sends it."""
        payload: dict = {"root": str(self.root), "ordinal": self.ordinal, "folder": str(self.folder),
                         "position": position, "results": [r.model_dump_json() for r in results]}
        if not self.selection_sent:  # the first result of a process says which cases pytest will run
            payload["selected"] = [list(entry) for entry in self.selected]
            self.selection_sent = True
        return payload


class Writer:
    """The run folder of one project, in the process that reports: every result saved as its test's
    report arrives (from this process or an xdist worker), report.json written when pytest ends."""

    def __init__(self, session: Any, root: Path, folder: Path, project: Project):
        self.session, self.root, self.folder, self.project = session, root, folder, project
        self.selected: dict[str, int] | None = None
        self.opened: OpenRun | None = None
        self.ended: RunOutcome | None = None  # the outcome of a run that could not be opened

    def select(self, selected: list) -> None:
        self.selected = dict(selected)

    def _open(self) -> OpenRun | None:
        """The open run; None when it ended before (self.ended says how)."""
        from ...session.ended import RunEnded

        if self.opened is None and self.ended is None:
            _ = self.project.prepared  # read once
            if self.project.ended is not None:  # the suites changed under a running session
                self.ended = self.project.ended
            else:
                positions = sorted(set(self.selected.values())) if self.selected else None
                try:
                    self.opened = self.project.prepared.open(folder_path=self.folder, run_id=self.session.run_id,  # type: ignore[union-attr]  # not ended (checked first): a PreparedRun
                                                             selected=positions, keep_conversations=True)
                except RunEnded as ended:
                    self.ended = ended.outcome
        return self.opened

    def save(self, payload: dict) -> None:
        from ...results.models import CaseResult

        opened = self._open()
        if opened is None:
            return
        for part, line in enumerate(payload["results"]):
            opened.save(payload["position"], part, CaseResult.model_validate_json(line))

    def crashed(self, report: pytest.TestReport) -> bool:
        """A test of ours that failed without a result (its xdist worker died): the case's error, so that
        the report does not lose it. False when the test is not one of this project's."""
        if not self.selected or report.nodeid not in self.selected:
            return False
        opened = self._open()
        if opened is None:
            return True
        from ...results.models import CaseResult

        ref = self.project.prepared.index.refs[self.selected[report.nodeid]]  # type: ignore[union-attr]  # not ended (checked first): a PreparedRun
        said = str(report.longrepr).strip().splitlines()[-1:] or ["no reason given"]
        opened.save(self.selected[report.nodeid], 0, CaseResult(
            id=ref.id, source=str(ref.source), tags=list(ref.tags), status="error",
            error=f"pytest reported this case's test as failed before evalrun had its result: {said[0]}"))
        return True

    def finish(self, reason: str | None, interrupted: bool, on_failure: str | None) -> RunOutcome:
        opened = self._open()
        if opened is None:
            return self.ended  # type: ignore[return-value]  # not opened: `ended` says how
        return opened.finish(stop_reason=reason, interrupted=interrupted, stopped_on_failure=on_failure)


def explain(results: list[CaseResult], redact) -> str:
    """The console's explanation of a case, reasons first (pytest's summary line shows the first line)."""
    from ...report.console import case_line, explain_case

    lines: list[str] = []
    for result in results:
        where, *reasons = explain_case(result)
        lines += [reason.strip().removeprefix("- ") for reason in reasons]
        lines.append(f"{case_line(result)}  ({where.strip()})")
    return redact("\n".join(lines))
