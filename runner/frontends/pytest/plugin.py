"""pytest runs evalrun suites: `pytest suites/` collects each case as a test, named by its id.

Installed with evalrun (entry point `pytest11`). A file is collected when it could be a suite (.yaml,
.yml, .json) and lies in a folder holding an `evalrun.yaml` (found as evalrun finds it: in the file's
folder or above, up to the repository root or pytest's rootdir) or under a folder named in the
`evalrun_paths` ini option. Each such folder is one evalrun project: its cases are collected through
runner.session exactly as `evalrun FOLDER` collects them (every suite format evalrun reads, its
`exclude`, its ids), so the project's other YAML and JSON files are left alone. Anywhere else the
plugin looks at a file's name and nothing more.

Tags become markers (`-m smoke`); `-k`, `-x`, `--lf` and `-n` (pytest-xdist) work on the cases as on
any test. A case that fails, errs or is unscored fails its test with evalrun's explanation; a skipped
case is skipped. The run's verdict (runner.results.verdict, the one the CLI exits with) decides pytest's exit
status too: a run whose cases passed but whose verdict is not OK (a verdict resting on the offline judge
fallback, every case skipped, a report not written) exits non-zero and the terminal summary says why. The plugin never scores: each test plays its case through the run's CaseRunner.

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
from typing import TYPE_CHECKING, Any

import pytest

from ...layout import CONFIG_NAMES, REPORTS_ROOT, SUITE_SUFFIXES
from .projects import Project, Writer, explain

if TYPE_CHECKING:
    from ...session.request import RunOutcome

_WORST_FIRST = ("error", "unscored", "failed", "skipped", "passed")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalrun", "evalrun suites")
    group.addoption("--evalrun-output-dir", metavar="DIR", default=None,
                    help="where the run folder of the evalrun cases goes (default: .evalrun/reports/<run id>)")
    group.addoption("--evalrun-format", dest="evalrun_formats", action="append", default=[], metavar="FMT",
                    help="also write this report format beside report.json (junit, md, html); repeatable")
    group.addoption("--evalrun-baseline", metavar="REPORT", default=None,
                    help="a saved report.json the run must not fall behind (as evalrun run --baseline)")
    group.addoption("--evalrun-max-regression", type=float, default=0.0, metavar="SHARE",
                    help="how far a metric mean may drop below the baseline's (0-1; as --max-regression)")
    parser.addini("evalrun_paths", type="paths", default=[],
                  help="folders whose evalrun suites are collected even without an evalrun.yaml")


def pytest_configure(config: pytest.Config) -> None:
    formats = config.getoption("evalrun_formats")
    if formats:
        from ...report.formats import names

        unknown = [f for f in formats if f not in names()]
        if unknown:
            raise pytest.UsageError(f"--evalrun-format {unknown[0]}: not a report format (known: {', '.join(names())})")
    config.pluginmanager.register(EvalrunSession(config), "evalrun-session")


class EvalrunSession:
    """The plugin's state for one pytest process: the projects found, the cases played here and, in the
    process that reports (not an xdist worker), the run folders being written."""

    def __init__(self, config: pytest.Config):
        # Only the standard library here: this runs in every pytest run, evalrun suites or not.
        self.config = config
        self.worker = hasattr(config, "workerinput")
        if self.worker:  # the controller's run, seen from the folder it was started in
            self.run_id, self.cwd = config.workerinput["evalrun_run_id"], Path(config.workerinput["evalrun_cwd"])  # type: ignore[attr-defined]  # pytest-xdist's, on its workers
        else:
            self.run_id, self.cwd = _new_run_id(), Path.cwd()
        self.ini_paths = [Path(p).resolve() for p in config.getini("evalrun_paths")]
        self.projects: dict[Path, Project] = {}
        self.roots_of_dirs: dict[Path, Path | None] = {}
        self.writers: dict[str, Writer] = {}  # project folder -> its run, in the reporting process
        self.finished: list[tuple[Path, RunOutcome]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    @functools.cached_property
    def base(self) -> Path:
        """The run folder (of the first project): --evalrun-output-dir, else where the CLI puts a run. A folder
        another run is writing to now gives way to a subfolder named after this run, as the CLI's does; decided
        once, by the reporting process, and handed to xdist's workers (they save conversations there)."""
        if self.worker and "evalrun_base" in self.config.workerinput:  # type: ignore[attr-defined]  # pytest-xdist's, on its workers
            return Path(self.config.workerinput["evalrun_base"])  # type: ignore[attr-defined]  # pytest-xdist's, on its workers
        given = self.config.getoption("evalrun_output_dir")
        if given is not None:
            from ...results.run_lock import in_use

            folder = self.cwd / given
            return folder / self.run_id if in_use(folder) else folder
        return self.cwd / REPORTS_ROOT / self.run_id

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.worker and self.config.getoption("evalrun_output_dir") is not None:
            _forget_saved_conversations(self.base)  # before any xdist worker starts

    # ------------------------------------------------------------------ pytest-xdist

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """The controller tells its workers the run's id and folder, so that they save conversations there."""
        node.workerinput["evalrun_run_id"] = self.run_id
        node.workerinput["evalrun_cwd"] = str(self.cwd)
        node.workerinput["evalrun_base"] = str(self.base)

    # ------------------------------------------------------------------ collection

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
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

    def _project_root(self, folder: Path) -> Path | None:
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

    def _writer(self, payload: dict) -> Writer:
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
            failed_enough = session.shouldfail and not interrupted
            on_failure = f"pytest -x/--maxfail: {session.shouldfail}" if failed_enough else None
            for writer in self.writers.values():
                self.finished.append((writer.root, writer.finish(reason, interrupted, on_failure)))
            verdict = self.verdict()
            if verdict is not None and not verdict.ok and _verdict_overrides(session.exitstatus, verdict.exit_code):
                session.exitstatus = verdict.exit_code  # the run's verdict, as the CLI exits with it
        if self.loop is not None:
            _close_loop(self.loop)
            self.loop = None

    def verdict(self):
        """The most serious verdict of the evalrun runs this session wrote (one per project), or None."""
        verdicts = [outcome.verdict for _, outcome in self.finished]
        return min(verdicts, key=lambda v: _SERIOUS_FIRST.index(v.exit_code)) if verdicts else None

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
        verdict = self.verdict()
        if verdict is not None and not verdict.ok:  # cases that passed on their own belong to a run that did not
            cause = verdict.reason.rsplit(": exit ", 1)[0]
            terminalreporter.write_line(f"evalrun: run verdict exit {verdict.exit_code}: {cause}", red=True, bold=True)


_SERIOUS_FIRST = (2, 3, 4, 1, 5, 0)  # interrupted, errors, usage, failed, nothing checked, passed


def _verdict_overrides(exitstatus: int, code: int) -> bool:
    """Whether the run's verdict replaces pytest's own exit status: always over a pass; over "tests failed"
    only when more serious (errors, interrupted), so that another test's failure is not hidden behind a 5."""
    if exitstatus == pytest.ExitCode.OK:
        return True
    return exitstatus == pytest.ExitCode.TESTS_FAILED and code in (2, 3)


def _forget_saved_conversations(base: Path) -> None:
    """A reused --evalrun-output-dir starts its conversations afresh, as the CLI's run folder does. The processes
    that play cases append to conversations.jsonl before the reporting process opens the run, so an earlier
    session's file goes now, in every project's folder (base, base-2, ...)."""
    from ...results.run_lock import in_use
    from ...transcripts.saved_conversations import FILE_NAME

    folder, number = base, 1
    while folder.is_dir():
        if not in_use(folder):  # a run writing there now (another session, a CLI run) keeps its file
            try:
                (folder / FILE_NAME).unlink()
            except OSError:
                pass  # none yet; or not ours to remove: the reader takes the newest line of a key
        number += 1
        folder = base.with_name(f"{base.name}-{number}")


def _new_run_id() -> str:
    """As runner.results.folder.new_run_id makes them (start time, process id, random suffix), without
    importing it: pytest runs that hold no evalrun suite must not pay for evalrun."""
    stamp = _dt.datetime.now().astimezone().strftime("%Y%m%d-%H%M%S-%f")
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(3)}"


def _search_folders(folder: Path, rootdir: Path) -> list[Path]:
    """Where evalrun.yaml is looked for (as runner.config.discovery.config_search): the folder and those above it,
    up to the repository root (a folder holding .git) or pytest's rootdir; outside both, the folder itself."""
    chain = [folder, *folder.parents]
    for i, candidate in enumerate(chain):
        if os.path.lexists(candidate / ".git"):
            return chain[: i + 1]
        if candidate == rootdir:
            return chain[: i + 1]
    return [folder]


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
        from ...session.matrix import run_key  # a --matrix run: a test per case and variant

        for position, ref in self.project.refs_of(self.path):
            item = CaseItem.from_parent(self, name=run_key(ref), project=self.project, position=position, ref=ref)
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


def _outcome_lines(root: Path, outcome: RunOutcome) -> list[str]:
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
