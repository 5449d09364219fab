"""The run, whole: prepare, choose the executor, open the folder, play every case, finish. RunEnded is caught
here, once. `run_request` plays in a loop of its own with signals handled from the first file read to the last
byte written (runner.util.signals); `arun` plays on its caller's loop (aevaluate), preparing and finishing in a worker
thread. Both play through `play`: one play loop, whatever the front end."""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results.verdict import EXIT_INTERRUPTED
from .ended import RunEnded
from .events import CallbackEvents, RunEvents
from .gc_passes import fewer_gc_passes
from .lifecycle import prepare_run
from .request import RunOutcome, RunRequest


def run(paths: Sequence[Path], *, events: RunEvents | None = None, handle_signals: bool = True,
        on_notice=None, on_start=None, on_result=None, on_saved=None, **options: Any) -> RunOutcome:
    """Collect, check and run the cases under `paths` (the other keyword arguments: RunRequest's fields),
    streaming results to the run folder; write report.json; the verdict is in the outcome. `events` hears of the
    run as it goes (runner.session.events); the loose callbacks on_start/on_result/on_saved/on_notice are still
    taken, for code written before RunEvents."""
    if events is None and any(c is not None for c in (on_notice, on_start, on_result, on_saved)):
        events = CallbackEvents(on_start, on_result, on_saved, on_notice)
    return run_request(RunRequest(paths, **options), events, handle_signals=handle_signals)


def run_request(request: RunRequest, events: RunEvents | None = None, *, handle_signals: bool = True) -> RunOutcome:
    """The run of `request`, in an event loop of its own; `events` hears of it as it goes."""
    with fewer_gc_passes():
        return _run(request, events if events is not None else RunEvents(), handle_signals)


async def arun(request: RunRequest, events: RunEvents | None = None) -> RunOutcome:
    """The run of `request`, its cases played on the caller's event loop (an async agent may use what the caller
    set up on it); collecting and writing the report run in a worker thread. Cancelled, it cancels the cases in
    flight, writes the report of those that finished, and lets the cancellation go on."""
    from ..run.agents._agent_loop import on_callers_loop

    events = events if events is not None else RunEvents()
    try:  # the steps that may end the run before it plays raise RunEnded, caught here only
        prepared = await asyncio.to_thread(prepare_run, request)
        executor = await asyncio.to_thread(prepared.executor)
        opened = await asyncio.to_thread(prepared.open, events=events)
    except RunEnded as ended:
        return ended.outcome
    work = prepared.work(opened, events.notice)
    events.started(work.jobs)
    promised = on_callers_loop.set(True)  # async agents play on this loop, as promised (not one of their own)
    try:
        await play(executor, work)
    except asyncio.CancelledError:
        opened.stop.request("cancelled", interrupted=True)
        opened.finish()  # on the loop, briefly: a cancelled task must not await again before it ends
        raise
    finally:
        on_callers_loop.reset(promised)
    return await asyncio.to_thread(opened.finish)


async def play(executor: Any, work: Any) -> None:
    """THE play loop: every case of `work` played by `executor` (runner.run.executors), unless the run was
    stopped before it began; then what a stop left pending is awaited."""
    from ..run.executors.base import take_pending_stop

    if work.stop.reason is None:  # else a signal came while the run was starting: no case starts
        await executor.run(work)
    if work.stop.reason is not None:
        await take_pending_stop()


def _run(request: RunRequest, events: RunEvents, handle_signals: bool) -> RunOutcome:
    """The run in its stages: choose the cases (collect, check, narrow) and what runs them, open the run
    folder, play and score them as results stream to disk, then write the report. Signals are handled
    from the first file read to the last byte written (runner.util.signals)."""
    from ..run.execute import Stop
    from ..util.signals import CollectionInterrupted, RunSignals

    with RunSignals(handle_signals) as signals:  # first of all: collecting 10,000 files takes seconds
        stop = signals.stop = Stop()
        try:  # the steps that may end the run before it plays raise RunEnded, caught here only
            try:
                prepared = prepare_run(request)
                signals.collected()  # here, so that no signal falls between collecting and starting
            except CollectionInterrupted as exc:
                raise RunEnded(RunOutcome(EXIT_INTERRUPTED, notes=[
                    f"interrupted ({exc.signal_name}) while collecting the suites, before any case ran: nothing "
                    "was run and no report was written: exit 2"])) from None
            executor = prepared.executor()  # importing Ray takes seconds: a signal then stops the run before it starts
            opened = prepared.open(events=events, stop=stop)
        except RunEnded as ended:
            return ended.outcome
        work = prepared.work(opened, events.notice)
        events.started(work.jobs)

        async def run_all() -> None:
            signals.loop = asyncio.get_running_loop()
            try:
                await play(executor, work)
            finally:
                signals.loop = None

        signals.phase = "running"
        asyncio.run(run_all())
        signals.phase = "finishing"
        return opened.finish()
