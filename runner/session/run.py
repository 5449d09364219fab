"""The run, whole: prepare, choose the executor, open the folder, play every case, finish; signals handled from
the first file read to the last byte written (runner.signals). RunEnded is caught here, once."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..results.digest import ResultDigest
from ..results.models import CaseResult, Selection
from .ended import RunEnded
from .gc_passes import fewer_gc_passes
from .lifecycle import prepare_run
from .request import RunOutcome, RunRequest
from .verdict import EXIT_INTERRUPTED


def run(paths: Sequence[Path], *, config_path: Optional[Path] = None, replay_dir: Optional[Path] = None,
        filters: Sequence[str] = (), tags: Sequence[str] = (), output_dir: Optional[Path] = None,
        concurrency: int = 8, no_cache: bool = False, agent: Optional[str] = None,
        conversations_dir: Optional[Path] = None, formats: Sequence[str] = (), min_pass_rate: Optional[float] = None,
        exitfirst: bool = False, baseline: Optional[Path] = None, max_regression: float = 0.0,
        repeats: int = 1, repeat_policy: Optional[str] = None, shard: Optional[str] = None,
        last_failed: bool = False, profile: Optional[str] = None, saved_selection: Optional[Selection] = None,
        eval_config: Optional[Path] = None, quick: bool = False, executor: str = "auto",
        on_notice: Callable[[str], None] = lambda message: None,
        on_start: Callable[[int], None] = lambda total: None,
        on_result: Optional[Callable[[CaseResult], None]] = None,
        on_saved: Optional[Callable[[ResultDigest], None]] = None, handle_signals: bool = True) -> RunOutcome:
    """Collect, check and run the cases under `paths`, streaming results to the run folder; write
    report.json; the exit code is in the outcome. `on_start` learns how many cases will run;
    `on_result` sees each result, whole, as it is saved (a result scored in a worker process is then read back
    from its line: 0.1-0.6 ms each); `on_saved` sees each saved result's digest (runner.results.digest: what
    the console's line reads, and `whole()`); `on_notice` hears of a pause ahead (a model loading)."""
    request = RunRequest(paths, config_path=config_path, replay_dir=replay_dir, filters=filters, tags=tags,
                         output_dir=output_dir, concurrency=concurrency, no_cache=no_cache, agent=agent,
                         conversations_dir=conversations_dir, formats=formats, min_pass_rate=min_pass_rate,
                         exitfirst=exitfirst, baseline=baseline, max_regression=max_regression, repeats=repeats,
                         repeat_policy=repeat_policy, shard=shard, last_failed=last_failed, profile=profile,
                         saved_selection=saved_selection, eval_config=eval_config, quick=quick, executor=executor)
    return run_request(request, on_start=on_start, on_result=on_result, on_saved=on_saved, on_notice=on_notice,
                       handle_signals=handle_signals)


def run_request(request: RunRequest, *, on_notice: Callable[[str], None] = lambda message: None,
                on_start: Callable[[int], None] = lambda total: None,
                on_result: Optional[Callable[[CaseResult], None]] = None,
                on_saved: Optional[Callable[[ResultDigest], None]] = None, handle_signals: bool = True) -> RunOutcome:
    """`run`, given its request as one object (runner.evaluation builds one with a configuration object)."""
    with fewer_gc_passes():
        return _run(request, on_start, on_result, on_saved, on_notice, handle_signals)


def _run(request: RunRequest, on_start: Callable[[int], None], on_result: Optional[Callable[[CaseResult], None]],
         on_saved: Optional[Callable[[ResultDigest], None]], on_notice: Callable[[str], None],
         handle_signals: bool) -> RunOutcome:
    """The run in its stages: choose the cases (collect, check, narrow) and what runs them, open the run
    folder, play and score them as results stream to disk, then write the report. Signals are handled
    from the first file read to the last byte written (runner.signals)."""
    from ..run.execute import Stop
    from ..run.executors.base import take_pending_stop
    from ..signals import CollectionInterrupted, RunSignals

    with RunSignals(handle_signals) as signals:  # first of all: collecting 10,000 files takes seconds
        stop = signals.stop = Stop()
        try:  # the steps that may end the run before it plays raise RunEnded, caught here only
            try:
                prepared = prepare_run(request)
                signals.phase = "starting"  # here, so that no signal falls between collecting and starting
            except CollectionInterrupted as exc:
                raise RunEnded(RunOutcome(EXIT_INTERRUPTED, notes=[
                    f"interrupted ({exc.signal_name}) while collecting the suites, before any case ran: nothing "
                    "was run and no report was written: exit 2"])) from None
            executor = prepared.executor()  # importing Ray takes seconds: a signal then stops the run before it starts
            opened = prepared.open(on_result=on_result, on_saved=on_saved, stop=stop)
        except RunEnded as ended:
            return ended.outcome
        work = prepared.work(opened, on_notice)
        on_start(work.jobs)

        async def run_all() -> None:
            signals.loop = asyncio.get_running_loop()
            try:
                if stop.reason is None:  # else a signal came while the run was starting: no case starts
                    await executor.run(work)
                if stop.reason is not None:
                    await take_pending_stop()
            finally:
                signals.loop = None

        signals.phase = "running"
        asyncio.run(run_all())
        signals.phase = "finishing"
        return opened.finish()
