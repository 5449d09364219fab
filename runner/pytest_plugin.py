"""pytest runs evalrun suites: `pytest suites/` collects each case as a test, named by its id.

Installed with evalrun (entry point `pytest11`). A file is collected when it could be a suite (.yaml,
.yml, .json) and lies in a folder holding an `evalrun.yaml` (found as evalrun finds it: in the file's
folder or above, up to the repository root or pytest's rootdir) or under a folder named in the
`evalrun_paths` ini option. Each such folder is one evalrun project: its cases are collected through
runner.api exactly as `evalrun FOLDER` collects them (every suite format evalrun reads, its
`exclude`, its ids), so the project's other YAML and JSON files are left alone. Anywhere else the
plugin looks at a file's name and nothing more.

Tags become markers (`-m smoke`); `-k`, `-x`, `--lf` and `-n` (pytest-xdist) work on the cases as on
any test. A case that fails, errs or is unscored fails its test with evalrun's explanation; a skipped
case is skipped. The plugin never scores: each test plays its case through the run's CaseRunner.

Each project's run folder is written as by the CLI (results.jsonl as cases finish, the live
conversations, report.json and the `--evalrun-format` files at the end). With pytest-xdist the workers
play the cases and send each result, inside their test report, to the controlling process, which alone
writes the folder: one results.jsonl, one report.json, one run, whatever the number of workers.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import pytest

if TYPE_CHECKING:
    from .api import OpenRun, PreparedRun, RunOutcome
    from .results.models import CaseResult

SUITE_SUFFIXES = (".yaml", ".yml", ".json")  # as runner.suite.load collects (kept here: importing it is not free)
CONFIG_NAMES = ("evalrun.yaml", "evalrun.yml")
_WORST_FIRST = ("error", "unscored", "failed", "skipped", "passed")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalrun", "evalrun suites")
    group.addoption("--evalrun-output-dir", metavar="DIR", default=None,
                    help="where the run folder of the evalrun cases goes (default: .evalrun/reports/<run id>)")
    group.addoption("--evalrun-format", dest="evalrun_formats", action="append", default=[], metavar="FMT",
                    help="also write this report format beside report.json (junit, md, html); repeatable")
    parser.addini("evalrun_paths", type="paths", default=[],
                  help="folders whose evalrun suites are collected even without an evalrun.yaml")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(EvalrunSession(config), "evalrun-session")


class EvalrunSession:
    """The plugin's state for one pytest process: the projects found, the cases played here and, in the
    process that reports (not an xdist worker), the run folders being written."""

    def __init__(self, config: pytest.Config):
        # Only the standard library here: this runs in every pytest run, evalrun suites or not.
        self.config = config
        self.worker = hasattr(config, "workerinput")
        if self.worker:  # the controller's run, seen from the folder it was started in
            self.run_id, self.cwd = config.workerinput["evalrun_run_id"], Path(config.workerinput["evalrun_cwd"])
        else:
            self.run_id, self.cwd = _new_run_id(), Path.cwd()
        self.ini_paths = [Path(p).resolve() for p in config.getini("evalrun_paths")]
        self.projects: dict[Path, Project] = {}
        self.roots_of_dirs: dict[Path, Optional[Path]] = {}
        self.writers: dict[str, Writer] = {}  # project folder -> its run, in the reporting process
        self.finished: list[tuple[Path, "RunOutcome"]] = []
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    @functools.cached_property
    def base(self) -> Path:
        """The run folder (of the first project): --evalrun-output-dir, else where the CLI puts a run."""
        given = self.config.getoption("evalrun_output_dir")
        if given is not None:
            return self.cwd / given
        from .api import DEFAULT_REPORTS_ROOT

        return self.cwd / DEFAULT_REPORTS_ROOT / self.run_id

    # ------------------------------------------------------------------ pytest-xdist

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """The controller tells its workers the run's id and folder, so that they save conversations there."""
        node.workerinput["evalrun_run_id"] = self.run_id
        node.workerinput["evalrun_cwd"] = str(self.cwd)

    # ------------------------------------------------------------------ collection

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
        if not file_path.name.endswith(SUITE_SUFFIXES):
            return None
        root = self._project_root(file_path.parent)
        if root is None:
            return None
        project = self.projects.get(root)
        if project is None:
            project = self.projects[root] = Project(self, root, len(self.projects))
        if not project.collects(file_path):
            return None  # not a suite (another tool's file), a transcript, or excluded by evalrun.yaml
        return SuiteFile.from_parent(parent, path=file_path, project=project)

    def _project_root(self, folder: Path) -> Optional[Path]:
        """The evalrun project a folder belongs to: the nearest folder holding an evalrun.yaml, else the
        `evalrun_paths` folder it lies in, else None. Cached per folder: this runs for every YAML file."""
        if folder in self.roots_of_dirs:
            return self.roots_of_dirs[folder]
        found = None
        for candidate in _search_folders(folder.resolve(), Path(self.config.rootpath).resolve()):
            if any(os.path.lexists(candidate / name) for name in CONFIG_NAMES):
                found = candidate
                break
        if found is None:
            real = folder.resolve()
            found = next((p for p in self.ini_paths if p == real or p in real.parents), None)
        self.roots_of_dirs[folder] = found
        return found

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if isinstance(item, CaseItem):
                item.project.selected.append((item.nodeid, item.position))

    # ------------------------------------------------------------------ running

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        payload = getattr(item, "evalrun_payload", None)
        if call.when == "call" and payload is not None:
            outcome.get_result().evalrun = payload  # travels to the xdist controller with the report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.worker:
            return
        payload = getattr(report, "evalrun", None)
        if payload is not None:
            self._writer(payload).save(payload)
        elif report.failed and report.when in ("call", "???"):  # "???": xdist's report of a worker that died
            for writer in self.writers.values():
                if writer.crashed(report):
                    break

    def _writer(self, payload: dict) -> "Writer":
        folder = payload["folder"]
        if folder not in self.writers:
            root = Path(payload["root"])
            # the process that played it: what it read is reused; an xdist controller, which collects
            # nothing, reads the project as its workers did
            project = self.projects.get(root) or Project(self, root, payload["ordinal"])
            self.writers[folder] = Writer(self, root, Path(folder), project)
        writer = self.writers[folder]
        if payload.get("selected") and writer.selected is None:
            writer.select(payload["selected"])
        return writer

    def play_loop(self) -> asyncio.AbstractEventLoop:
        """One event loop for the cases this process plays, one after the other."""
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        return self.loop

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.worker:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            reason = "pytest was interrupted" if interrupted else \
                f"pytest stopped: {session.shouldstop}" if session.shouldstop else None
            on_failure = f"pytest -x/--maxfail: {session.shouldfail}" if session.shouldfail and not interrupted else None
            for writer in self.writers.values():
                self.finished.append((writer.root, writer.finish(reason, interrupted, on_failure)))
        if self.loop is not None:
            _close_loop(self.loop)
            self.loop = None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.finished and not any(p.warnings for p in self.projects.values()):
            return
        terminalreporter.section("evalrun")
        for project in self.projects.values():
            for warning in project.warnings:
                terminalreporter.write_line(str(warning))
        for root, outcome in self.finished:
            for line in _outcome_lines(root, outcome):
                terminalreporter.write_line(line)


def _new_run_id() -> str:
    """As runner.results.folder.new_run_id makes them (start time, process id, random suffix), without
    importing it: pytest runs that hold no evalrun suite must not pay for evalrun."""
    stamp = _dt.datetime.now().astimezone().strftime("%Y%m%d-%H%M%S-%f")
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(3)}"


def _search_folders(folder: Path, rootdir: Path) -> list[Path]:
    """Where evalrun.yaml is looked for (as runner.config.config_search): the folder and those above it,
    up to the repository root (a folder holding .git) or pytest's rootdir; outside both, the folder itself."""
    chain = [folder, *folder.parents]
    for i, candidate in enumerate(chain):
        if os.path.lexists(candidate / ".git"):
            return chain[: i + 1]
        if candidate == rootdir:
            return chain[: i + 1]
    return [folder]


class Project:
    """One evalrun project (a folder with its evalrun.yaml): its cases, read once through runner.api."""

    def __init__(self, session: EvalrunSession, root: Path, ordinal: int):
        self.session, self.root, self.ordinal = session, root, ordinal
        self.selected: list[tuple[str, int]] = []  # (node id, case position) of the tests pytest will run
        self._prepared: Any = None
        self._by_file: Optional[dict[Path, list[tuple[int, Any]]]] = None
        self._problems: dict[Optional[Path], list[str]] = {}  # errors by suite file; None: the project's own
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
        from .api import RunRequest

        output_dir = self.session.config.getoption("evalrun_output_dir")
        return RunRequest(self.paths(), output_dir=self.folder if output_dir is not None else None,
                          formats=list(self.session.config.getoption("evalrun_formats")))

    def _load(self) -> None:
        if self._by_file is not None:
            return
        from .api import RunOutcome, prepare_run

        prepared = self._prepared = prepare_run(self.request())
        self._by_file = {}
        self.warnings = [d for d in prepared.diagnostics if d.severity != "error"]
        if not isinstance(prepared, RunOutcome):
            for position, ref in enumerate(prepared.index.refs):
                self._by_file.setdefault(Path(ref.path).resolve(), []).append((position, ref))
            return
        errors = [d for d in prepared.diagnostics if d.severity == "error"]
        if not errors:
            return  # nothing to run (no case), which is no error
        from .api import collect

        self._broken_files = {Path(f).resolve() for f in collect(self.paths()).files}
        for d in errors:
            path = Path(d.path).resolve()
            self._problems.setdefault(path if path in self._broken_files else None, []).append(str(d))

    def collects(self, path: Path) -> bool:
        """Whether `path` is a test file of this project: a suite with cases, or one whose errors (or the
        project's) it must show."""
        self._load()
        path = path.resolve()
        if self._by_file.get(path):
            return True
        if path.name in CONFIG_NAMES:
            return None in self._problems
        return path in self._broken_files

    def refs_of(self, path: Path) -> list[tuple[int, Any]]:
        self._load()
        return self._by_file.get(path.resolve(), [])

    def problems_of(self, path: Path) -> list[str]:
        self._load()
        return self._problems.get(path.resolve(), [])

    def take_project_problems(self) -> list[str]:
        """The errors of the project itself (its evalrun.yaml, say): shown once, by the first file collected."""
        self._load()
        return self._problems.pop(None, [])

    @property
    def prepared(self) -> "PreparedRun | RunOutcome":
        """The project's run, prepared (or the outcome that stops it: errors, no case)."""
        self._load()
        return self._prepared

    def play(self, position: int) -> list["CaseResult"]:
        """Play one case to its results, here and now (its conversation saved in the run folder)."""
        if self.runner is None:
            from .results.folder import RunFolder

            self.conversations = RunFolder(self.folder, self.session.run_id, None, redact=self.prepared.redact)
            self.runner = self.prepared.case_runner(self.conversations.save_conversation)
        ref = self.prepared.index.refs[position]
        return self.session.play_loop().run_until_complete(self.runner.run(ref))

    def payload(self, position: int, results: list["CaseResult"]) -> dict:
        """What the reporting process needs to save these results: plain data, as pytest-xdist sends it."""
        payload: dict = {"root": str(self.root), "ordinal": self.ordinal, "folder": str(self.folder),
                         "position": position, "results": [r.model_dump_json() for r in results]}
        if not self.selection_sent:  # the first result of a process says which cases pytest will run
            payload["selected"] = [list(entry) for entry in self.selected]
            self.selection_sent = True
        return payload


class SuiteProblem(Exception):
    """A suite file (or its project's evalrun.yaml) has errors: pytest shows them as the file's collection error."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


class SuiteFile(pytest.File):
    def __init__(self, *, project: Project, **kwargs: Any):
        super().__init__(**kwargs)
        self.project = project

    def collect(self):
        problems = [*self.project.take_project_problems(), *self.project.problems_of(self.path)]
        if problems:
            raise SuiteProblem(problems)
        for position, ref in self.project.refs_of(self.path):
            item = CaseItem.from_parent(self, name=ref.id, project=self.project, position=position, ref=ref)
            for tag in ref.tags:
                _register_marker(self.config, tag)
                item.add_marker(tag)
            yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):
        if isinstance(excinfo.value, SuiteProblem):
            return "\n".join(excinfo.value.lines)
        return super().repr_failure(excinfo)


def _register_marker(config: pytest.Config, tag: str) -> None:
    """Tags are markers pytest knows (no unknown-mark warning, and --strict-markers accepts them)."""
    known = config.stash.setdefault(_MARKERS, set())
    if tag not in known:
        known.add(tag)
        config.addinivalue_line("markers", f"{tag}: evalrun tag")


_MARKERS = pytest.StashKey[set]()


class CaseFailed(Exception):
    """The case did not pass; the message is evalrun's explanation."""


class CaseItem(pytest.Item):
    def __init__(self, *, project: Project, position: int, ref: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.project, self.position, self.ref = project, position, ref

    def runtest(self) -> None:
        results = self.project.play(self.position)
        self.evalrun_payload = self.project.payload(self.position, results)
        status = min((r.status for r in results), key=_WORST_FIRST.index)
        if status == "skipped":
            pytest.skip(results[0].skip_reason or "skipped")
        if status != "passed":
            raise CaseFailed(explain(results, self.project.prepared.redact))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, max(self.ref.source.line - 1, 0), f"evalrun case {self.ref.id}"


def explain(results: list["CaseResult"], redact) -> str:
    """The console's explanation of a case, reasons first (pytest's summary line shows the first line)."""
    from .report.console import case_line, explain_case

    lines: list[str] = []
    for result in results:
        where, *reasons = explain_case(result)
        lines += [reason.strip().removeprefix("- ") for reason in reasons]
        lines.append(f"{case_line(result)}  ({where.strip()})")
    return redact("\n".join(lines))


class Writer:
    """The run folder of one project, in the process that reports: every result saved as its test's
    report arrives (from this process or an xdist worker), report.json written when pytest ends."""

    def __init__(self, session: EvalrunSession, root: Path, folder: Path, project: Project):
        self.session, self.root, self.folder, self.project = session, root, folder, project
        self.selected: Optional[dict[str, int]] = None
        self.opened: "OpenRun | RunOutcome | None" = None

    def select(self, selected: list) -> None:
        self.selected = {nodeid: position for nodeid, position in selected}

    def _open(self) -> Optional["OpenRun"]:
        from .api import RunOutcome

        if self.opened is None:
            prepared = self.project.prepared
            if isinstance(prepared, RunOutcome):  # the suites changed under a running session
                self.opened = prepared
            else:
                positions = sorted(set(self.selected.values())) if self.selected else None
                self.opened = prepared.open(folder_path=self.folder, run_id=self.session.run_id, selected=positions)
        return None if isinstance(self.opened, RunOutcome) else self.opened

    def save(self, payload: dict) -> None:
        from .results.models import CaseResult

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
        from .results.models import CaseResult

        ref = self.project.prepared.index.refs[self.selected[report.nodeid]]
        said = str(report.longrepr).strip().splitlines()[-1:] or ["no reason given"]
        opened.save(self.selected[report.nodeid], 0, CaseResult(
            id=ref.id, source=str(ref.source), tags=list(ref.tags), status="error",
            error=f"pytest reported this case's test as failed before evalrun had its result: {said[0]}"))
        return True

    def finish(self, reason: Optional[str], interrupted: bool, on_failure: Optional[str]) -> "RunOutcome":
        from .api import RunOutcome

        opened = self._open()
        if opened is None:
            assert isinstance(self.opened, RunOutcome)
            return self.opened
        return opened.finish(stop_reason=reason, interrupted=interrupted, stopped_on_failure=on_failure)


def _outcome_lines(root: Path, outcome: "RunOutcome") -> list[str]:
    lines = [str(d) for d in outcome.diagnostics if d.severity == "error"]
    summary = outcome.summary
    if summary is not None:
        counts = ", ".join(f"{getattr(summary, k)} {k}" for k in ("passed", "failed", "error", "unscored", "skipped")
                           if getattr(summary, k))
        lines.append(f"{root}: {counts or 'no case ran'}; {summary.exit_reason}")
    if outcome.report_path is not None:
        lines.append(f"report: {outcome.report_path}")
    lines += [f"report: {path}" for path in outcome.extra_reports]
    lines += list(outcome.notes)
    return [outcome.redact(line) for line in lines]


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what an interrupted case left on the loop, then close it."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
