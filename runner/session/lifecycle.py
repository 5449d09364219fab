"""One run, in parts: prepare it (collect, check, narrow: PreparedRun), open its folder (OpenRun: each result
saved as it comes, the tally), finish it (report.json, the --format files, `latest`, the verdict). A step that
ends the run before it plays raises RunEnded (runner.session.ended)."""
from __future__ import annotations

import datetime as _dt
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..config.discovery import find_config, project_home
from ..config.load import LoadedConfig, load_config, suite_roots
from ..layout import EXIT_NO_CASES, EXIT_USAGE, REPORTS_ROOT
from ..results.digest import ResultDigest
from ..results.folder import ResultsNotSaved, RunFolder, describe_os_error, new_run_id, point_latest
from ..results.models import CaseResult, case_label
from ..results.summary import Tally
from ..run.case_index import CaseIndex, index_cases
from ..util.diagnostics import Diagnostic, has_errors, sort_diagnostics
from ..util.secrets import Redactor, protect_config
from .collect import _exclusion
from .ended import RunEnded
from .events import RunEvents
from .matrix import prepare as prepare_matrix, run_key
from .matrix_summary import tally_variants
from .request import RunOutcome, RunRequest
from .usage import option_problem, usage_problems

if TYPE_CHECKING:
    from ..llm.runtime import LLMRuntime
    from ..report.compare import Baseline
    from .matrix import Matrix

REPORT_FORMAT_VERSION = "2"
DEFAULT_REPORTS_ROOT = REPORTS_ROOT  # the name runner.api exported (runner/layout.py)


# ----------------------------------------------------------------------------- one run, in parts
# run() plays every case at once. The pytest plugin (runner.frontends.pytest.plugin) plays them one at a time as
# pytest asks, maybe in several processes (pytest-xdist) whose results one process saves; aevaluate
# plays them on its caller's event loop. All of them go through these parts, so a run's checks, its
# folder, its verdict and its report are the same however it was driven:
#   prepare_run(request) -> PreparedRun      the config, the selected cases, the gates; or the usage problem
#   PreparedRun.executor()                   what runs the cases, and where (runner.run.executors)
#   PreparedRun.case_runner(...)             what plays one case (runner.run.execute.CaseRunner)
#   PreparedRun.open(...) -> OpenRun         the run folder: each result saved as it comes, the tally
#   OpenRun.finish() -> RunOutcome           report.json, the --format files, `latest`; the exit code


@dataclass
class PreparedRun:
    """A run whose configuration, cases and options passed their checks: what will run, and how it is judged."""

    request: RunRequest
    loaded: LoadedConfig
    roots: list[Path]
    index: CaseIndex
    diagnostics: list[Diagnostic]
    home: Path  # the project folder: its .evalrun/ holds the reports, `latest` and the caches
    selection: dict  # as report.json records it (runner.results.models.Selection)
    gate: Baseline | None = None  # the --baseline gate
    llm_runtime: LLMRuntime | None = None  # the LLM layer's runtime, once case_runner() configured it
    matrix: Matrix | None = None  # --matrix: the variants each case plays (runner.session.matrix)

    @property
    def reports_root(self) -> Path:
        return self.home / DEFAULT_REPORTS_ROOT

    @functools.cached_property
    def _protected(self) -> tuple[dict, Redactor]:
        return _config_record(self.loaded, self.request.replay_dir)

    @property
    def config_record(self) -> dict:
        """The config as report.json records it, credentials masked."""
        return self._protected[0]

    @property
    def redact(self) -> Redactor:
        return self._protected[1]

    def case_runner(self, save_conversation: Callable[[str, dict], Path | str | None],
                    on_notice: Callable[[str], None] = lambda message: None):
        """What plays a case and scores it (runner.run.execute.CaseRunner), its live conversations saved
        with `save_conversation`; the LLM layer is set up for this run (its limit, cache, totals)."""
        from ..llm.runtime import configure as configure_llm
        from ..run.execute import CaseRunner

        request, loaded = self.request, self.loaded
        self.llm_runtime = configure_llm(concurrency=request.concurrency,
                                         cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=request.no_cache)
        if self.matrix is not None:
            from .matrix import case_runner

            return case_runner(self.matrix, loaded, self.run_options, self.roots, save_conversation, on_notice)
        return CaseRunner(loaded, self.run_options, roots=self.roots, save_conversation=save_conversation,
                          on_notice=on_notice)

    @functools.cached_property
    def run_options(self):
        from ..run.execute import RunOptions

        request = self.request
        return RunOptions(replay_dir=request.replay_dir, concurrency=request.concurrency, agent=request.agent,
                          conversations_dir=request.conversations_dir, profile=request.profile,
                          eval_config=request.eval_config, quick=request.quick)

    def executor(self):
        """The executor for this run (runner.run.executors); RunEnded when the one asked for (--executor)
        cannot run it."""
        from ..run.executors import ExecutorUnavailable, choose_executor

        request = self.request
        try:
            return choose_executor("local" if self.matrix else request.executor, self.index.refs,
                                   repeats=request.max_repeats,
                                   concurrency=request.concurrency, config=self.loaded.config,
                                   options=self.run_options, auto=request.repeat_auto is not None)
        except ExecutorUnavailable as exc:
            raise RunEnded(RunOutcome(EXIT_USAGE, [*self.diagnostics, Diagnostic("--executor", 1, 1, "error",
                                                                                  str(exc), "usage")])) from None

    def work(self, opened: OpenRun, on_notice: Callable[[str], None] = lambda message: None):
        """What an executor runs: every selected case, played by this run's case runner, saved in `opened`."""
        from ..run.executors import Work

        runner = self.case_runner(opened.folder.save_conversation, on_notice)
        return Work(self.index.refs, self.request.max_repeats, self.request.concurrency, runner, opened.save,
                    opened.stop, opened.folder.serialise, auto=self.request.repeat_auto)

    def open(self, *, folder_path: Path | None = None, run_id: str | None = None,
             selected: Sequence[int] | None = None, events: RunEvents | None = None, stop=None,
             keep_conversations: bool = False) -> OpenRun:
        """The run's folder, ready for results (RunEnded with the problem when it cannot be written).
        `selected`: the positions (in `index.refs`) of the cases that will run, when not all of them;
        `events`: who hears of each saved result (RunEvents); `stop`: the run's runner.run.execute.Stop when the caller
        made it already (signals hold it); `keep_conversations`: the conversations already saved in the folder
        are this run's (pytest's processes save them before the run is opened)."""
        started = _dt.datetime.now(_dt.timezone.utc)
        run_id = run_id or new_run_id(started)
        folder_path = folder_path or self.request.output_dir or self.reports_root / run_id
        try:
            folder, moved = RunFolder.open(folder_path, run_id, redact=self.redact)
            # a rescore or --replay that writes into the folder it reads keeps what it reads (it plays nothing live)
            reads_own = _same_file(folder.conversations_path, self.request.conversations_dir, self.request.replay_dir)
            folder.start_results(keep_conversations=keep_conversations or reads_own)
        except (OSError, ResultsNotSaved) as exc:
            reason = str(exc) if isinstance(exc, ResultsNotSaved) else describe_os_error(exc)
            raise RunEnded(RunOutcome(EXIT_USAGE, [*self.diagnostics, Diagnostic(
                str(folder_path), 1, 1, "error", f"cannot write the run's results to '{folder_path}': {reason}",
                "io")])) from None
        refs = self.index.refs if selected is None else [self.index.refs[p] for p in selected]
        tally = Tally([run_key(ref) for ref in refs], repeats=self.request.max_repeats,
                      policy=self.request.repeat_policy or self.loaded.config.repeat_policy,
                      auto=self.request.repeat_auto)
        return OpenRun(self, folder, run_id, started, tally, [moved] if moved else [], events, stop)


def prepare_run(request: RunRequest) -> PreparedRun:
    """Collect and check the suites, then narrow them to the run's selection: a PreparedRun, or RunEnded
    with the outcome that ends the run here (invalid suites or options: exit 4; no case left: exit 5)."""
    if request.loaded is not None:  # a configuration given as an object (runner.frontends.python): no file is read
        loaded, config_problems = request.loaded, list[Diagnostic]()
    else:
        loaded, config_problems = load_config(request.config_path or find_config(list(request.paths)), for_run=True)
    if request.replay_dir is None:  # the models live cases call: their HTTP client is imported while suites are read
        from ..llm.client import prepare_transports

        prepare_transports([loaded.config.simulator, *loaded.config.agents.values()])
    home = project_home(list(request.paths), loaded.path)
    if loaded.path is None:
        loaded.home = home  # relative paths (the cache) start from the project, not the current folder
    roots = suite_roots(list(request.paths), loaded)
    if request.conversations_dir is not None:  # rescore reads the saved run's conversations
        roots.append(request.conversations_dir.resolve())
    # with an agent for every case (--agent, an agent given to evaluate) the names cases give choose nothing
    # the suites are read on every core the run may use (-j 1 and --executor local: this process alone)
    readers = request.concurrency if request.executor in ("auto", "processes") else 1
    exclusion = _exclusion(loaded)
    if request.conversations_dir is not None:  # rescore: the saved run's folder is data, never collected as suites
        from .rescore import excluding_run_folder

        exclusion = excluding_run_folder(request.conversations_dir.parent, exclusion)
    index: CaseIndex = index_cases(request.paths, exclusion, roots=roots, filters=request.filters,
                                   tags=request.tags, config=loaded.config if request.agent is None else None,
                                   eval_config=request.eval_config, referenceless=request.quick, processes=readers)
    diagnostics = sort_diagnostics([*config_problems, *index.diagnostics])
    if has_errors(diagnostics):
        raise RunEnded(RunOutcome(EXIT_USAGE, diagnostics))
    usage = usage_problems(request, loaded)
    if usage:
        raise RunEnded(RunOutcome(EXIT_USAGE, [*diagnostics, *usage]))
    prepared = PreparedRun(request, loaded, roots, index, diagnostics, home,
                           {"filters": list(request.filters), "tags": list(request.tags), "only": None})
    _narrow(request, prepared)
    prepare_matrix(prepared)  # --matrix: every selected case once per variant
    if request.baseline is not None:
        from ..report.compare import Baseline
        from ..report.saved import NotAReport

        try:
            prepared.gate = Baseline(request.baseline, request.max_regression)
        except NotAReport as exc:
            raise RunEnded(RunOutcome(EXIT_USAGE, [*diagnostics, option_problem("--baseline", str(exc))])) from None
    return prepared


def _narrow(request: RunRequest, prepared: PreparedRun) -> None:
    """The cases of the selection: --shard's part, the saved run's own selection (rescore), the cases
    --last-failed finds; -k and --tag were applied while collecting. Records what was applied."""
    index = prepared.index
    if request.shard is not None:
        from ..util.shard import parse_shard

        part = parse_shard(request.shard)  # the CLI checked it
        index.refs = [ref for ref in index.refs if part.holds(ref.id)]
    saved = request.saved_selection
    if saved is not None:
        from ..run.case_index import selected

        only = None if saved.only is None else set(saved.only)
        index.refs = [ref for ref in index.refs if selected(ref.id, ref.tags, saved.filters, saved.tags)
                      and (only is None or ref.id in only)]
        if request.filters or request.tags or saved.only is not None:
            prepared.selection = {"filters": [], "tags": [], "only": [ref.id for ref in index.refs]}
        else:
            prepared.selection = saved.model_dump()
    if request.last_failed:
        from ..util.files import display_path
        from .last_failed import NoLatestReport, last_failed_ids

        try:
            latest, failed = last_failed_ids(prepared.reports_root)
        except NoLatestReport as exc:
            raise RunEnded(RunOutcome(EXIT_USAGE, [*prepared.diagnostics,
                                                   option_problem("--last-failed", str(exc))])) from None
        index.refs = [ref for ref in index.refs if ref.id in failed]
        prepared.selection["only"] = [ref.id for ref in index.refs]
        if not index.refs:
            raise RunEnded(RunOutcome(EXIT_NO_CASES, [*prepared.diagnostics, option_problem(
                "--last-failed", f"no case to rerun: {display_path(latest)} has no failed, errored or unscored case"
                + (" among the cases selected" if failed else ""), "warning")]))
    if not index.refs:
        raise RunEnded(RunOutcome(EXIT_NO_CASES, prepared.diagnostics))


class OpenRun:
    """A run whose folder is open: `save` each result as its case finishes (from any driver), `finish`
    once at the end. `stop` is what a signal, a full disk or -x asks of whoever plays the cases."""

    def __init__(self, prepared: PreparedRun, folder: RunFolder, run_id: str, started: _dt.datetime, tally: Tally,
                 notes: list[str], events: RunEvents | None = None, stop=None):
        from ..run.execute import Stop

        self.prepared, self.folder, self.run_id, self.started = prepared, folder, run_id, started
        self.tally, self.notes, self.events = tally, notes, events if events is not None else RunEvents()
        self._wants_results = self.events.wants_results
        self.stop = stop if stop is not None else Stop()
        self.first_failure: list[str] = []  # -x: the stop is the run's own verdict, not a fault (exit 1, not 3)

    def save(self, position: int, part: int, result: CaseResult | ResultDigest) -> None:
        """Save one result (`position`: its case's place in the prepared run's cases); never raises.
        `result`: the result, or its digest made by `folder.serialise.digest` (in a worker process). The tally,
        the --baseline gate, -x and `events.saved` read the digest; only `events.result` has the result validated whole."""
        stop, request = self.stop, self.prepared.request
        if stop.reason is not None and not stop.interrupted:
            return  # results can no longer be saved; the cases after the failure count as not run
        try:
            saved = self.folder.add(position, part, result)
        except ResultsNotSaved as exc:
            stop.request(str(exc), interrupted=False)
            return
        self.tally.add(saved, run_key(self.prepared.index.refs[position]))
        if self.prepared.gate is not None:
            self.prepared.gate.add(saved, (position, part))
        self.events.saved(saved)
        if self._wants_results:
            self.events.result(saved.whole())
        if request.exitfirst and saved.status in ("failed", "error") and stop.reason is None:
            self.first_failure.append(f"-x/--exitfirst: '{case_label(saved.id, saved.variant)}' {saved.status}")
            stop.request(self.first_failure[0], interrupted=False)  # nothing new starts; cases in flight are cancelled

    def finish(self, *, stop_reason: str | None = None, interrupted: bool | None = None,
               stopped_on_failure: str | None = None) -> RunOutcome:
        """Write report.json (and the --format files) from the saved results; the outcome has the exit code.
        `stop_reason`/`interrupted`: why the driver stopped early, when it did (the run's own stop otherwise);
        `stopped_on_failure`: the driver stopped after failures as asked (pytest -x), the run's verdict as -x."""
        prepared, request, folder, stop = self.prepared, self.prepared.request, self.folder, self.stop
        loaded, gate, notes, redact = prepared.loaded, prepared.gate, self.notes, prepared.redact
        first_failure = [stopped_on_failure] if stopped_on_failure else self.first_failure
        folder.close_results()
        elapsed = (_dt.datetime.now(_dt.timezone.utc) - self.started).total_seconds()
        judge = loaded.config.judge
        reason = stop_reason if stop_reason is not None else stop.reason
        interrupted = stop.interrupted if interrupted is None else interrupted
        usage = _usage_or_none(prepared.llm_runtime.summary()) if prepared.llm_runtime is not None else None
        baseline, record = gate.compare(self.tally.policy) if gate is not None else (None, None)
        min_pass_rate = request.min_pass_rate if request.min_pass_rate is not None else loaded.config.min_pass_rate
        gates: dict[str, Any] = {"min_pass_rate": min_pass_rate, "stop_reason": reason, "interrupted": interrupted,
                                     "elapsed_s": elapsed, "judge_may_fall_back": bool(getattr(judge, "offline_fallback", False))}
        variants = tally_variants(prepared.matrix, folder, prepared.index.refs, request.repeats,
                                  self.tally.policy) if prepared.matrix is not None else None
        summary = self.tally.summary(**gates, model_usage=usage, first_failure=first_failure[0] if first_failure
                                     else None, baseline=baseline,  # the verdict: runner.results.verdict.decide
                                     variants=variants.settle(**gates) if variants is not None else ())
        summary.cache = getattr(prepared.llm_runtime, "cache_mode", None)  # whether verdicts may rest on cached answers
        summary.baseline = record
        header: dict[str, Any]
        header = {"version": REPORT_FORMAT_VERSION, "evalrun_version": __version__, "run_id": self.run_id,
                  "started_at": self.started.isoformat(), "paths": [str(p.resolve()) for p in request.paths]}
        if request.shard is not None:
            from ..util.shard import parse_shard

            header["shard"] = str(parse_shard(request.shard))
        header.update(selection=prepared.selection, agent=request.agent, config=prepared.config_record)
        if variants is not None:
            header["matrix"] = variants.record()
        try:
            report_path = folder.write_report(header, summary)
        except OSError as exc:  # the results are in results.jsonl; say why report.json is missing
            problem = Diagnostic(str(folder.path), 1, 1, "error", f"cannot write report.json to '{folder.path}': "
                                                                  f"{describe_os_error(exc)}; the results of the "
                                                                  f"finished cases are in {folder.results_path}", "io")
            from ..results.verdict import Verdict, not_written

            verdict = not_written(Verdict(summary.exit_code, summary.exit_reason), "report.json not written")
            summary.exit_code, summary.exit_reason = verdict.exit_code, verdict.reason
            return RunOutcome(verdict.exit_code, [*prepared.diagnostics, problem], summary, None, folder, notes, redact)
        from ..report.render import render_beside

        extra_reports = render_beside(request.formats, report_path, notes) if request.formats else []
        if request.output_dir is None:
            try:
                point_latest(prepared.reports_root, folder.path)
            except OSError as exc:  # the report is written; only the shortcut to it is missing
                notes.append(f"cannot point '{prepared.reports_root / 'latest'}' at the report: "
                             f"{describe_os_error(exc)}")
        folder.release()
        return RunOutcome(summary.exit_code, prepared.diagnostics, summary, report_path, folder, notes, redact,
                          extra_reports, header.get("matrix"))


def _same_file(path: Path, *others: Path | None) -> bool:
    for other in others:
        try:
            if other is not None and os.path.samefile(path, other):
                return True
        except OSError:
            pass  # either is missing: not the same file
    return False


def _usage_or_none(usage):
    return usage if usage.calls else None


def _config_record(loaded: LoadedConfig, replay_dir: Path | None) -> tuple[dict, Redactor]:
    """The config as the report records it (credentials masked), and the redactor of every secret it names."""
    record = loaded.config.model_dump(mode="json", by_alias=True, exclude={"schema_"})
    record["config_file"] = str(loaded.path) if loaded.path else None
    record["replay_dir"] = str(replay_dir) if replay_dir else None
    return protect_config(record)
