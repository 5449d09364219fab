"""The interpreter: turns each selected case into a `CaseResult`, several at once, never losing one.

Cases run as asyncio tasks, at most `concurrency` at a time. A case with a recording (its own
`transcript:` or `--replay DIR/<id>.json`) is scored on it; every other case is played live against
its agent (runner.run.conversation), its conversation saved in the run folder, then scored the same way:
scoring never knows how a trajectory was made. CPU-bound reading and scoring run in worker threads
so that the event loop stays free for live conversations and for noticing a signal. Whatever goes wrong with
one case (a missing file, bad JSON, a bug) becomes that case's `error` with the reason; the others go
on. A stop (a signal, results that cannot be saved) starts nothing new and cancels what runs; what
finished is already on disk.

Beside it: run_options (what a run is played with), recordings (what a case is scored on, where a live
conversation is saved), scoring_cascade (the judge and embeddings evalrun.yaml sets up), case_results
(how a case's results are started, failed and finished).
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..checks.quick import referenceless
from ..checks.run import apply_checks, case_checks
from ..checks.select import profile_selection
from ..config.load import LoadedConfig
from ..results.models import CaseResult
from ..score.cascade import Cascade
from ..suite.models import Case
from ..transcripts.opening import opening_problem
from ..transcripts.read import TranscriptError, build_trajectory
from ..transcripts.recording import ConversationRef, Recording
from ..transcripts.state import ReportedState
from ..transcripts.transcript_file import read_recording
from ..util.files import real_path
from .agent_tools import ToolsOfAgents
from .agents._base import being_cancelled
from .case_index import CaseChanged, CaseLoader, CaseRef
from .case_results import (
    base_fields,
    case_error,  # noqa: F401 - the executors import it from here
    finished,
    internal_error,
    judge_fallbacks,
    not_passed_on_part,
)
from .code_guard import refuse_code_from
from .recordings import conversation_key, recordings_of, unsaved_note
from .run_options import DEFAULT_CONCURRENCY, RunOptions
from .scoring_cascade import make_cascade
from .sources import conversation_source

PARTS_PER_REPEAT = 1 << 20  # more recorded runs of one case than this would be absurd; keeps repeats in order


class CaseRunner:
    """Runs one case to its result. Reading and scoring run in worker threads; a live conversation
    runs on the event loop (its model calls share the run's limit)."""

    def __init__(self, loaded: LoadedConfig, options: RunOptions, cascade: Cascade | None = None, *,
                 roots: Sequence[Path] = (),
                 save_conversation: Callable[[str, dict], Path | str | None] = lambda case_id, data: None,
                 on_notice: Callable[[str], None] | None = None):
        self.loaded = loaded
        self.options = options
        self.cascade = cascade or make_cascade(loaded, on_notice)
        self.roots = [real_path(root) for root in roots]  # once per run, not once per case
        self.save_conversation = save_conversation
        self.loader = CaseLoader(self.roots, eval_config=options.eval_config, referenceless=options.quick)
        if options.conversations_dir is not None:  # rescore: the saved run's folder is data, never code
            refuse_code_from(options.conversations_dir.parent)
        self._load_lock = threading.Lock()
        self._tools = ToolsOfAgents(loaded, options.agent)
        # Reading and scoring run in these threads. Scoring may wait on the judge, so there is a thread per case
        # in flight (-j): the default pool's min(32, CPUs + 4) would cap judge calls in flight (and measured
        # slower at -j 16 and 64 even without a judge: cases queue for a thread after each model call).
        workers = max(min(32, (os.cpu_count() or 1) + 4), options.concurrency)
        self._workers = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalrun-case")

    async def in_worker(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`function(*args)` in a worker thread, in this task's context (record_calls, repeat_scope). A
        cancelled case (a stop) also ends the model calls its thread waits in."""
        from ..llm.runtime import blocking_owner, current_runtime

        owner, context = object(), contextvars.copy_context()
        context.run(blocking_owner.set, owner)
        call = functools.partial(context.run, function, *args, **kwargs)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._workers, call)
        except asyncio.CancelledError:
            current_runtime().cancel_blocking(owner)
            raise


    def load(self, ref: CaseRef) -> Case:
        with self._load_lock:
            return self.loader.load(ref)

    async def run(self, ref: CaseRef, repeat: int | None = None) -> list[CaseResult]:
        """The case's result (one per recorded run when a --replay folder holds several); never raises
        but for cancellation: a failure anywhere is the case's error. `repeat` (--repeat N, from 0)
        gives every model call of this run of the case its own cache slot (runner.llm.repeat_scope)."""
        from ..llm.calls import record_calls, repeat_scope

        started, base = time.perf_counter(), base_fields(ref, repeat)
        with record_calls() as calls, repeat_scope(repeat or 0):  # every model call made for this case
            try:
                # a case kept loaded and played live costs nothing to look at: no hand-off to a thread for it
                if self._plays_loaded(ref):
                    outcome = self._offline(ref, base)
                else:  # one hand-off to a worker thread for everything that needs no event loop
                    outcome = await self.in_worker(self._offline, ref, base)
                results = [await self._run_live(outcome, base)] if isinstance(outcome, Case) else outcome
            except asyncio.CancelledError as exc:
                if being_cancelled():
                    raise
                results = [CaseResult(**base, status="error", error=internal_error("running the case", exc))]
            except BaseException as exc:  # SystemExit from a check or an agent kind: this case's error, not the run's
                results = [CaseResult(**base, status="error", error=internal_error("running the case", exc))]
        return finished(results, started, calls)

    def run_recorded(self, ref: CaseRef, repeat: int | None = None, *,
                     calls_made: list | None = None) -> list[CaseResult]:
        """`run` for a case scored on recordings, with no event loop: what an executor that runs cases in
        other processes calls (runner.run.executors). The same results; a case that turned out to need
        live play (its file changed since collection) is an error saying so. The model calls the case
        made (a judged check's own judge) are appended to `calls_made`, for the run's totals."""
        from ..llm.calls import record_calls, repeat_scope

        started, base = time.perf_counter(), base_fields(ref, repeat)
        with record_calls() as calls, repeat_scope(repeat or 0):
            try:
                outcome = self._offline(ref, base)
            except BaseException as exc:  # SystemExit from a check: this case's error, not the worker's
                outcome = [CaseResult(**base, status="error", error=internal_error("running the case", exc))]
            if isinstance(outcome, Case):
                outcome = [CaseResult(**base, status="error",
                                      error=f"{ref.source.path} changed while the run was going on: case '{ref.id}' "
                                            "no longer names a transcript (run again)")]
        if calls_made is not None:
            calls_made.extend(calls)
        return finished(outcome, started, calls)

    def _plays_loaded(self, ref: CaseRef) -> bool:
        """Whether the case is already loaded and will be played live (nothing to read or score here)."""
        options = self.options
        return (ref.loaded is not None and not ref.recorded and options.replay_dir is None
                and options.conversations_dir is None)

    def _scores_without_models(self, case: Case) -> bool:
        """Whether scoring this case cannot wait on a model (no judge, no embeddings, no checks, which may bring
        their own judge or run user code): it is then a fraction of a millisecond of CPU, done on the loop, where
        a hand-off to a thread and back costs more than the scoring and adds a thread switch per case."""
        cascade, settings = self.cascade, self.cascade.settings
        if self.options.quick:  # scored by the quick profile's checks instead, judged ones among them
            return False
        if cascade.judge is not None or (settings.enable_fuzzy_matching and settings.use_embeddings):
            return False
        return not has_checks(case)

    def _offline(self, ref: CaseRef, base: dict) -> list[CaseResult] | Case:
        """Everything about a case that needs no event loop: its results when it is skipped or scored on
        recordings, else the loaded case, to be played live."""
        try:
            case = self.load(ref)
        except CaseChanged as exc:
            return [CaseResult(**base, status="error", error=str(exc))]
        base["description"] = case.description
        if case.skip:
            reason = case.skip if isinstance(case.skip, str) else "skip: true"
            return [CaseResult(**base, status="skipped", skip_reason=reason)]
        options = self.options
        base["conversation_source"] = conversation_source(case, options.replay_dir, options.conversations_dir)
        try:
            recordings = recordings_of(case, self.options, self.roots, base.get("repeat"))
        except TranscriptError as exc:
            return [CaseResult(**base, status="error", error=str(exc))]
        if recordings is None:
            return case
        if len(recordings) == 1:
            return [self._replay(case, recordings[0][1], base)]
        # watsonx's repeated runs of one case: each run is scored and reported as `<id> run N`
        return [self._replay(case, path, {**base, "id": f"{case.id} run {run}", "run": run})
                for run, path in recordings]

    def _replay(self, case: Case, path: Path | ConversationRef, base: dict) -> CaseResult:
        try:
            recording = read_recording(path)
        except TranscriptError as exc:
            return CaseResult(**base, status="error", error=str(exc), transcript_path=str(path))
        other = opening_problem(case.starting_sentence, recording.messages)
        if other is not None:  # another conversation: no verdict on it is this case's
            return CaseResult(**base, status="error", error=other, transcript_path=str(path),
                              termination_reason=recording.termination_reason, transcript=recording.messages)
        return self.score_recording(case, recording, base, transcript_path=str(path))

    def score_recording(self, case: Case, recording: Recording, base: dict, *,
                        transcript_path: str | None) -> CaseResult:
        """A recorded conversation's result, as a replay scores it: the one path `evalrun mutate` scores its
        mutants through too (a mutant is a recording changed in one place)."""
        result = self._score(case, recording.messages, recording.termination_reason, base,
                             transcript_path=transcript_path, normalized=True, state=recording.state)
        return not_passed_on_part(result, recording.problems)

    async def _run_live(self, case: Case, base: dict) -> CaseResult:
        from .conversation import Conversation, converse_case

        conversation = Conversation()
        timeout = case.timeout_s or self.loaded.config.timeout_s
        conversation = await converse_case(case, self.loaded, agent_override=self.options.agent,
                                           timeout_s=timeout, conversation=conversation)
        unsaved = None
        try:  # on the event loop, as the result's line is: one appended line of conversations.jsonl (a writer
            # thread was worth its hand-offs only while each conversation created a file of its own)
            saved = self.save_conversation(conversation_key(case.id, base.get("repeat")), conversation.to_transcript())
        except OSError as exc:  # a full disk: the verdict stands and the report keeps the conversation
            saved, unsaved = None, unsaved_note(exc)
        where = str(saved) if saved is not None else conversation.transcript_path
        if conversation.error is not None:
            stderr = "".join(f"\n  stderr: {line}" for line in conversation.stderr_tail)
            result = CaseResult(**base, status="error", error=conversation.error + stderr, transcript_path=where,
                                termination_reason=conversation.termination_reason,
                                transcript=conversation.messages)
        else:
            score = functools.partial(self._score, case, conversation.messages, conversation.termination_reason,
                                      base, transcript_path=where, state=conversation.reported_state())
            result = score() if self._scores_without_models(case) else await self.in_worker(score)
            result = not_passed_on_part(result, conversation.problems)
        if unsaved:
            result.notes.append(unsaved)
        return result

    def _score(self, case: Case, messages: list[dict], termination_reason: str | None, base: dict, *,
               transcript_path: str | None, normalized: bool = False,
               state: ReportedState | None = None) -> CaseResult:
        from ..config.model import with_project_defaults
        from ..score.case import score_trajectory

        case = with_project_defaults(case, self.loaded.config)  # evalrun.yaml's forbid_extra_calls
        if self.options.quick:
            case = referenceless(case)  # played as written, scored by the quick profile only
        try:
            trajectory = build_trajectory(messages, self.loaded.config.tool_error_pattern, termination_reason,
                                          normalized=normalized)
            trajectory.state = state
            scored = score_trajectory(case, trajectory, self.cascade)
        except TranscriptError as exc:
            return CaseResult(**base, status="error", error=str(exc), transcript_path=transcript_path,
                              transcript=messages)
        except Exception as exc:  # a bug must not take the other cases down; keep the trace for the report
            return CaseResult(**base, status="error", transcript_path=transcript_path,
                              error=internal_error("scoring", exc))
        quick = self.options.quick  # no goals: no completion to report, and no call is extra to one
        result = CaseResult(**base, status=scored.status, metrics=None if quick else scored.metrics, goals=scored.goals,
                            calls=scored.calls, extra_calls=[] if quick else scored.extra_calls,
                            failures=scored.failures,
                            unscored_reason="; ".join(scored.unscored) or None,
                            transcript_path=transcript_path, termination_reason=trajectory.termination_reason,
                            transcript=trajectory.messages)
        apply_checks(result, case, trajectory, self.cascade, live=not normalized,  # the case's `checks:`
                     selection=profile_selection(self.loaded, self.options.profile), base_dir=self.loaded.base_dir,
                     tools=self._tools(case) if has_checks(case) else None)  # only checks read them
        result.judge_fallbacks = judge_fallbacks(result)
        return result


def has_checks(case: Case) -> bool:
    """Whether the case has checks to run (its own, planted ones such as no_leak, or its turns')."""
    return bool(case_checks(case)) or any(turn.checks for turn in case.turns or ())


class Stop:
    """Why the run stops early, once asked: a signal's name or a problem such as a full disk. Asking
    cancels the cases in flight (registered with `watch`); the first reason given is kept."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.interrupted = False
        self._tasks: list[asyncio.Task] = []

    def request(self, reason: str, *, interrupted: bool) -> None:
        if self.reason is None:
            self.reason, self.interrupted = reason, interrupted
        for task in self._tasks:
            task.cancel()

    def watch(self, tasks: list[asyncio.Task]) -> None:
        self._tasks = tasks
        if self.reason is not None:
            for task in tasks:
                task.cancel()


async def run_cases(refs: list[CaseRef], runner: CaseRunner, on_result: Callable[[int, int, CaseResult], None],
                    stop: Stop, concurrency: int = DEFAULT_CONCURRENCY, repeats: int = 1) -> None:
    """Run every case (at most `concurrency` at once), handing each result to `on_result` with the
    case's position (and the result's number within the case: recorded runs, repeats) as soon as it finishes. `on_result` must not raise. Returns when all ran or
    `stop` was requested; a case still running then is cancelled and does not count as finished.
    With `repeats` > 1 every case runs that many times, each repeat a job of its own (so they run
    side by side) numbered from 0; a result's part is repeat * PARTS_PER_REPEAT + its recorded run."""
    jobs = ((position, ref, repeat) for position, ref in enumerate(refs) for repeat in range(repeats))
    pending: Iterator[tuple[int, CaseRef, int]] = iter(jobs)

    async def worker() -> None:
        for position, ref, repeat in pending:  # one shared iterator: each job is taken by exactly one worker
            if stop.reason is not None:
                return
            results = await runner.run(ref, repeat if repeats > 1 else None)
            if stop.reason is not None and stop.interrupted:
                return  # finished after the stop: reported as not run, like the others in flight
            for part, result in enumerate(results):
                on_result(position, repeat * PARTS_PER_REPEAT + part, result)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(refs) * repeats)))]
    stop.watch(workers)
    await asyncio.gather(*workers, return_exceptions=True)
