"""The interpreter: turns each selected case into a `CaseResult`, several at once, never losing one.

Cases run as asyncio tasks, at most `concurrency` at a time. A case with a recording (its own
`transcript:` or `--replay DIR/<id>.json`) is scored on it; every other case is played live against
its agent (runner.run.conversation), its conversation saved in the run folder, then scored the same way:
scoring never knows how a trajectory was made. CPU-bound reading and scoring run in worker threads
so that the event loop stays free for live conversations and for noticing a signal. Whatever goes wrong with
one case (a missing file, bad JSON, a bug) becomes that case's `error` with the reason; the others go
on. A stop (a signal, results that cannot be saved) starts nothing new and cancels what runs; what
finished is already on disk.
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from .agent_tools import ToolsOfAgents
from .agents._base import being_cancelled
from .case_index import CaseChanged, CaseLoader, CaseRef
from .code_guard import refuse_code_from
from .sources import conversation_source
from ..checks.quick import referenceless
from ..checks.run import apply_checks, case_checks, settle_run_checks
from ..checks.select import profile_selection
from ..config import LoadedConfig
from ..results.models import CaseResult
from ..score.cascade import Cascade, CascadeSettings
from ..suite.files import real_path
from ..suite.models import Case
from ..transcripts.opening import opening_problem
from ..transcripts.read import TranscriptError, build_trajectory
from ..transcripts.recording import ConversationRef
from ..transcripts.transcript_file import read_recording
from ..transcripts.state import ReportedState

DEFAULT_CONCURRENCY = 8
PARTS_PER_REPEAT = 1 << 20  # more recorded runs of one case than this would be absurd; keeps repeats in order


@dataclass
class RunOptions:
    replay_dir: Optional[Path] = None
    concurrency: int = DEFAULT_CONCURRENCY
    agent: Optional[str] = None  # --agent: play every live case with this agent
    conversations_dir: Optional[Path] = None  # rescore: a saved run's conversations stand in for live play
    profile: Optional[str] = None  # --profile: evalrun.yaml's `profiles:` entry that selects the checks to run
    quick: bool = False  # evalrun quick: the referenceless checks instead of the case's goals and checks
    eval_config: Optional[Path] = None  # --eval-config: the ADK/Agentflow eval config for every eval set


def make_cascade(loaded: LoadedConfig, on_notice: Optional[Callable[[str], None]] = None) -> Cascade:
    config = loaded.config
    settings = CascadeSettings(enable_fuzzy_matching=config.enable_fuzzy_matching,
                               similarity_threshold=config.similarity_threshold,
                               use_embeddings=config.embeddings.enabled)
    judge = None
    if config.judge is not None and config.enable_fuzzy_matching:
        from ..llm.client import LLMClient
        from ..llm.judge import LLMJudge
        from ..llm.prompts import PromptLibrary

        cache_dir = loaded.resolve(config.cache_dir) if config.judge.cache else None
        judge = LLMJudge(LLMClient(config.judge, cache_dir, role="judge"),
                         PromptLibrary(loaded.resolve(config.prompts_dir)))
    embedder = None
    if config.embeddings.model_path:
        from ..score.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder(str(loaded.resolve(config.embeddings.model_path)))
    from ..llm.runtime import current_runtime  # cheap: litellm is imported only when a model is called

    similarity_cache = None if current_runtime().no_cache else loaded.resolve(config.cache_dir)
    return Cascade(settings, judge=judge, embedder=embedder, cache_dir=similarity_cache, on_model_load=on_notice)


def conversation_key(case_id: str, repeat: Optional[int]) -> str:
    """The name a live conversation is saved under: the case id, and which repeat for --repeat N."""
    return case_id if repeat is None else f"{case_id} repeat {repeat}"


def recordings_of(case: Case, options: RunOptions, roots: Sequence[Path],
                  repeat: Optional[int] = None) -> Optional[list[tuple[Optional[int], "Path | ConversationRef"]]]:
    """The recordings a case is scored on as (run number, a file or one conversation of a file), or None when
    it is played live. `roots`: real paths (the run's suite roots). TranscriptError when a recording is named but
    cannot be used (missing, outside the suite roots)."""
    from ..suite.containment import recordings_for

    if options.replay_dir is not None or case.transcript:
        return recordings_for(case, roots=roots, replay_dir=options.replay_dir, roots_resolved=True)
    if options.conversations_dir is not None:  # rescore: the run saved this live case's conversation here
        return [(None, _saved_conversation(options.conversations_dir, conversation_key(case.id, repeat)))]
    return None


def _saved_conversation(saved: Path, key: str) -> "Path | ConversationRef":
    """Where a rescored run saved the conversation `key`: a line of its conversations.jsonl, or a file of
    the conversations/ folder that earlier versions wrote."""
    found: "Path | ConversationRef | None"
    if saved.is_dir():
        from ..results.folder import conversation_file_name

        found = saved / conversation_file_name(key)
        found = found if found.is_file() else None
    else:
        from ..suite.containment import saved_ref

        found = saved_ref(saved, key)
    if found is None:
        raise TranscriptError(f"no saved conversation for this case in {saved} (it was not played live in that "
                              "run, or its agent failed before saying anything)")
    return found


def unsaved_note(exc: OSError) -> str:
    """What a case's result says when its live conversation could not be saved (its verdict stands)."""
    return f"the conversation could not be saved for `evalrun rescore`: {exc.strerror or exc}"


def judge_fallbacks(result: CaseResult) -> list[str]:
    """The verdicts of this case that were reached by an offline stage because the configured judge
    failed, in the words of the report: which goal, which argument, which stage, and why."""
    found = []
    for goal in result.goals:
        for attempt in goal.attempts:
            for verdict in attempt.arguments:
                if verdict.judge_failure:
                    found.append(f"goal '{goal.name}', argument `{verdict.path}`: decided by {verdict.decided_by} "
                                 f"because the judge failed: {verdict.judge_failure}")
        decision = goal.text_decision
        if decision is not None and decision.judge_failure:
            found.append(f"goal '{goal.name}', the answer: decided by {decision.decided_by} because the judge "
                         f"failed: {decision.judge_failure}")
    return found


class CaseRunner:
    """Runs one case to its result. Reading and scoring run in worker threads; a live conversation
    runs on the event loop (its model calls share the run's limit)."""

    def __init__(self, loaded: LoadedConfig, options: RunOptions, cascade: Optional[Cascade] = None, *,
                 roots: Sequence[Path] = (),
                 save_conversation: Callable[[str, dict], "Path | str | None"] = lambda case_id, data: None,
                 on_notice: Optional[Callable[[str], None]] = None):
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

    async def run(self, ref: CaseRef, repeat: Optional[int] = None) -> list[CaseResult]:
        """The case's result (one per recorded run when a --replay folder holds several); never raises
        but for cancellation: a failure anywhere is the case's error. `repeat` (--repeat N, from 0)
        gives every model call of this run of the case its own cache slot (runner.llm.repeat_scope)."""
        from ..llm.calls import record_calls, repeat_scope

        started, base = time.perf_counter(), _base(ref, repeat)
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
                results = [CaseResult(**base, status="error", error=_internal_error("running the case", exc))]
            except BaseException as exc:  # SystemExit from a check or an agent kind: this case's error, not the run's
                results = [CaseResult(**base, status="error", error=_internal_error("running the case", exc))]
        return _finished(results, started, calls)

    def run_recorded(self, ref: CaseRef, repeat: Optional[int] = None, *,
                     calls_made: Optional[list] = None) -> list[CaseResult]:
        """`run` for a case scored on recordings, with no event loop: what an executor that runs cases in
        other processes calls (runner.run.executors). The same results; a case that turned out to need
        live play (its file changed since collection) is an error saying so. The model calls the case
        made (a judged check's own judge) are appended to `calls_made`, for the run's totals."""
        from ..llm.calls import record_calls, repeat_scope

        started, base = time.perf_counter(), _base(ref, repeat)
        with record_calls() as calls, repeat_scope(repeat or 0):
            try:
                outcome = self._offline(ref, base)
            except BaseException as exc:  # SystemExit from a check: this case's error, not the worker's
                outcome = [CaseResult(**base, status="error", error=_internal_error("running the case", exc))]
            if isinstance(outcome, Case):
                outcome = [CaseResult(**base, status="error",
                                      error=f"{ref.source.path} changed while the run was going on: case '{ref.id}' "
                                            "no longer names a transcript (run again)")]
        if calls_made is not None:
            calls_made.extend(calls)
        return _finished(outcome, started, calls)

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

    def _offline(self, ref: CaseRef, base: dict) -> "list[CaseResult] | Case":
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

    def _replay(self, case: Case, path: "Path | ConversationRef", base: dict) -> CaseResult:
        try:
            recording = read_recording(path)
        except TranscriptError as exc:
            return CaseResult(**base, status="error", error=str(exc), transcript_path=str(path))
        other = opening_problem(case.starting_sentence, recording.messages)
        if other is not None:  # another conversation: no verdict on it is this case's
            return CaseResult(**base, status="error", error=other, transcript_path=str(path),
                              termination_reason=recording.termination_reason, transcript=recording.messages)
        result = self._score(case, recording.messages, recording.termination_reason, base, transcript_path=str(path),
                             normalized=True, state=recording.state)
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

    def _score(self, case: Case, messages: list[dict], termination_reason: Optional[str], base: dict, *,
               transcript_path: Optional[str], normalized: bool = False,
               state: Optional[ReportedState] = None) -> CaseResult:
        from ..config import with_project_defaults
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
                              error=_internal_error("scoring", exc))
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


def not_passed_on_part(result: CaseResult, problems: list[str], shown: int = 5) -> CaseResult:
    """A recording with parts that could not be read (a trace's unreadable spans) never passes on what
    remains: a pass becomes `unscored`, and every outcome names the parts."""
    if not problems:
        return result
    listed = "; ".join(problems[:shown]) + (f"; and {len(problems) - shown} more" if len(problems) > shown else "")
    reason = f"part of the recording could not be read, so the case is not passed on what remains: {listed}"
    if result.status == "passed":
        result.status = "unscored"
        result.unscored_reason = reason
    elif result.status == "unscored":
        result.unscored_reason = "; ".join(filter(None, [result.unscored_reason, reason]))
    elif result.status == "failed":
        result.failures.append(reason)
    else:
        result.notes.append(reason)
    return result


def case_error(ref: CaseRef, repeat: Optional[int], error: str) -> CaseResult:
    """A case that could not be run, as its result: an error with the reason."""
    return CaseResult(**_base(ref, repeat), status="error", error=error)


def _base(ref: CaseRef, repeat: Optional[int]) -> dict:
    """The fields every result of this case starts from."""
    return dict(id=ref.id, source=str(ref.source), tags=list(ref.tags), repeat=repeat)


def _finished(results: list[CaseResult], started: float, calls: list) -> list[CaseResult]:
    """The case's results with their duration and model usage, and the checks that need both settled."""
    from ..llm.calls import summarize

    for result in results:
        result.duration_s = (time.perf_counter() - started) / len(results)
    if calls:
        results[0].model_usage = summarize(calls)
    for result in results:
        settle_run_checks(result)  # budget checks need the duration and usage just measured
    return results


def _internal_error(doing: str, exc: BaseException) -> str:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return f"internal error while {doing}: {detail}\n{traceback.format_exc(limit=6)}"


class Stop:
    """Why the run stops early, once asked: a signal's name or a problem such as a full disk. Asking
    cancels the cases in flight (registered with `watch`); the first reason given is kept."""

    def __init__(self) -> None:
        self.reason: Optional[str] = None
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
