"""The Ray executor: a run's cases on a Ray cluster (`--executor ray`, `pip install 'evalrun[ray]'`).

The cluster is the one RAY_ADDRESS names, or a local one started for the run (and stopped after it) when
none is set; Ray's own settings (RAY_TMPDIR for its temp folder) apply as Ray reads them. Ray is imported
here only, when this executor runs. Joining RAY_ADDRESS's cluster gives up after EVALRUN_RAY_CONNECT_TIMEOUT
seconds (30 by default): every case is then an error that says so.

Cases are grouped into batches by the rule of `--shard` (a stable hash of the case id, runner.util.shard), so a
case lands in the same batch wherever and however often the run is started. The run's cases, its
configuration and its result serialiser travel once, into Ray's object store. Recorded cases are scored as
Ray tasks: a worker process builds the run's case runner the first time it gets a batch of this run and
keeps it for the next ones, and scores a batch exactly as the process pool's worker does
(runner.run.executors.replay_pool: each result comes back as its line of results.jsonl, secrets redacted
where it was made). Live cases are played by an async actor per node (runner.run.executors.ray_live), which
holds the run's case runner and model client for all its batches. Every model call of the run, on any node,
goes through one budget: `-j` and each model's max_concurrency, held by one actor
(runner.run.executors.ray_limits). This process saves each batch's results as it arrives, so a run killed
midway keeps every finished case, and adds the live workers' model usage to the run's totals. Ray tries a
batch whose worker was lost once more; a batch that fails twice makes its cases errors that give the cause.

Workers get only the environment variables evalrun needs: the `api_key_env` and `${NAME}` variables and the
provider variables (OPENAI_*, ANTHROPIC_*, ...) of the models the configuration names, inside the run's object
in the object store, never through Ray's runtime_env, which Ray writes in clear to its logs (`worker_env`).
(A local cluster started here is this process's child and inherits its environment, as any child does.)
"""
from __future__ import annotations

import asyncio
import math
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from ...util.secrets import clip
from ...util.shard import shard_of
from ...util.signals import held_against_libraries
from .base import Executor, Work
from .ray_run import portable_run, rebuild_run

INSTALL_HINT = "pip install 'evalrun[ray]'"
MIN_BATCH = 16  # a task costs Ray a few milliseconds to schedule: smaller batches spend more on that than scoring
MAX_BATCH = 256  # a lost worker then costs at most this much work to redo
BATCHES_PER_CPU = 4  # enough for the cluster's workers to finish together
LIVE_BATCH_PER_J = 2  # a live batch: twice -j cases, so its worker is rarely waiting on a batch's last case
ATTEMPTS = 2  # a batch is tried twice (Ray's task retry), then its cases are errors
CONNECT_TIMEOUT_ENV = "EVALRUN_RAY_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT_S = 30.0

Batch = list[tuple[int, int]]  # jobs: (a case's position in the run, which repeat)


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, notice: Callable[[str], None] = lambda message: print(f"evalrun: {message}",
                                                                           file=sys.stderr, flush=True)):
        self.notice = notice

    async def run(self, work: Work) -> None:
        import ray

        from ...llm.runtime import current_runtime
        from .replay_pool import ReplayPoolExecutor

        runtime = current_runtime()  # the calls workers make count in this run's totals
        try:
            with held_against_libraries():  # Ray's init takes SIGTERM over (it exits the process, exit 15)
                _connect(ray, work, self.notice)
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        except Exception as exc:
            where = os.environ.get("RAY_ADDRESS")
            why = (f"the Ray cluster at {where} (RAY_ADDRESS) could not be reached" if where else
                   "a local Ray cluster could not be started")
            jobs = [(position, repeat) for position in range(len(work.refs)) for repeat in range(work.repeats)]
            ReplayPoolExecutor._save(work, (_errors(work, jobs, f"{why}: {_cause(exc)}"), []), runtime)
            with held_against_libraries():  # Ray's shutdown resets SIGTERM to its default (death, no report)
                ray.shutdown()  # whatever part of it had started
            return
        task = asyncio.current_task()
        assert task is not None
        work.stop.watch([task])  # a stop cancels the wait below; the batches not finished are cancelled
        live = [position for position, ref in enumerate(work.refs) if _is_live(work, ref)]
        recorded = sorted(set(range(len(work.refs))) - set(live))
        replay_batches = batches_by_hash(work, cpus, recorded) if recorded else []
        live_batches = live_batches_by_hash(work, live)
        players = _Players(live_batches)
        pending: dict[Any, tuple[Any, Batch]] = {}  # a batch's Ray reference -> (its live worker or None, the batch)
        futures: dict[asyncio.Future, Any] = {}

        def send(ref: Any, worker: Any, batch: Batch) -> None:
            pending[ref] = (worker, batch)
            futures[asyncio.wrap_future(ref.future())] = ref

        try:
            try:
                from .ray_limits import start_limits

                token = uuid.uuid4().hex
                limits = f"evalrun-limits-{token}"
                context = ray.put(portable_run(work, runtime, worker_env(work.runner.loaded.config)))
                score = ray.remote(_score_batch).options(max_retries=ATTEMPTS - 1, retry_exceptions=True)
                for batch in replay_batches:
                    send(score.remote(token, [context], limits, batch), None, batch)
                # The limiter actor after the batches: a node starts as many processes at once as it has CPUs,
                # and the actor asked first took a scoring worker's turn (a process start is 1-3 s of imports).
                # Its name is registered as it is made; scoring tasks look it up at their first model call
                # (ray_limits.LimiterByName), live workers as they start, after it.
                limits_actor = start_limits(ray, work.concurrency, limits)  # lives while this reference does
                limits_up = asyncio.wrap_future(limits_actor.state.remote().future())
                if live_batches:
                    from .ray_live import live_worker_count, start_live_workers

                    for worker in start_live_workers(ray, live_worker_count(ray), limits, ATTEMPTS):
                        players.feed(worker, [context], send)
                await limits_up  # an actor that cannot start fails the hand-over (the batches sent are cancelled)
            except Exception as exc:
                error = f"the run could not be handed to the Ray cluster: {_cause(exc)}"
                unsent = [job for b in [*replay_batches, *live_batches] for job in b]
                ReplayPoolExecutor._save(work, (_errors(work, unsent, error), []), runtime)
                return
            while futures:
                done, _ = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    worker, batch = pending.pop(futures.pop(future))
                    try:
                        played = future.result()
                    except Exception as exc:
                        played = (_lost(work, batch, exc, "scoring" if worker is None else "playing"), [])
                    else:
                        if worker is not None:
                            players.count(played)
                            played = (_live_results(work, played), [])
                    if worker is not None:
                        players.feed(worker, [context], send)  # its next batch, now that this one is back
                    if not ReplayPoolExecutor._save(work, played, runtime):
                        return
        except asyncio.CancelledError:
            if work.stop.reason is None:
                raise
        finally:
            for future in futures:  # what a cancelled batch's reference then says is nobody's to read
                future.cancel()
            for ref, (worker, _) in pending.items():
                ray.cancel(ref, force=worker is None)  # an actor's call cannot be forced (that would end the actor)
            players.add_usage(runtime)
            with held_against_libraries():  # Ray's shutdown resets SIGTERM to its default (death, no report)
                ray.shutdown()  # stops the local cluster started here; only disconnects from RAY_ADDRESS's


class _Players:
    """The live batches not yet sent, and the model usage the live workers reported. Each worker plays one batch
    at a time: a batch that kills its worker then takes no other batch down with it, and an idle worker gets
    the next batch (the workers finish together)."""

    def __init__(self, batches: list[Batch]):
        self.waiting = list(reversed(batches))
        self.usage: dict[str, Any] = {}  # worker incarnation -> its model-usage totals (the latest seen)

    def feed(self, worker: Any, context: list, send: Callable[[Any, Any, Batch], None]) -> None:
        if self.waiting:
            batch = self.waiting.pop()
            send(worker.play.remote(context, batch), worker, batch)

    def count(self, played: dict) -> None:
        self.usage[played["holder"]] = _latest(self.usage.get(played["holder"]), played["usage"])

    def add_usage(self, runtime: Any) -> None:
        for totals in self.usage.values():
            add_totals(runtime.totals, totals)


def connect_timeout() -> float:
    """How long to try reaching RAY_ADDRESS's cluster: EVALRUN_RAY_CONNECT_TIMEOUT seconds, 30 by default."""
    try:
        return max(0.1, float(os.environ.get(CONNECT_TIMEOUT_ENV, "") or DEFAULT_CONNECT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_CONNECT_TIMEOUT_S


def unreachable(address: str, timeout_s: float) -> str | None:
    """Why the Ray cluster at `address` (RAY_ADDRESS: host:port or ray://host:port) cannot be reached, after
    trying for `timeout_s` seconds; None when its port answers, or when the address names no port to try
    ("auto": Ray finds the cluster itself). Ray's own connect retries for minutes; this bounds the wait."""
    import socket
    import time

    where = address.split("://", 1)[-1].rstrip("/")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        return None
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=max(0.1, deadline - time.monotonic())):
                return None
        except OSError as exc:
            left = deadline - time.monotonic()
            if left <= 0:  # tried for the whole of timeout_s, as the message says
                return (f"the Ray cluster at {address} (RAY_ADDRESS) could not be reached in {timeout_s:g} s "
                        f"({exc.strerror or type(exc).__name__}); start it, fix RAY_ADDRESS, unset it to start a "
                        f"local cluster, or wait longer with {CONNECT_TIMEOUT_ENV}=SECONDS")
            time.sleep(min(0.5, left))  # a cluster still starting: try again (a last time at the deadline)


def ray_installed() -> bool:
    """Whether Ray imports here (asked only for --executor ray, which imports it next anyway)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def batches_by_hash(work: Work, cpus: int, positions: list[int] | None = None) -> list[Batch]:
    """The jobs of the cases at `positions` (all by default) in batches by the --shard rule: batch i holds the
    cases whose id hashes to shard i+1 of as many shards as there are batches, every repeat of a case in its
    case's batch, in the run's order. Enough batches for every CPU of the cluster to get a few."""
    chosen = range(len(work.refs)) if positions is None else positions
    jobs = len(chosen) * work.repeats
    count = max(1, min(math.ceil(jobs / MIN_BATCH), max(cpus * BATCHES_PER_CPU, math.ceil(jobs / MAX_BATCH))))
    return _by_hash(work, chosen, count)


def live_batches_by_hash(work: Work, positions: list[int]) -> list[Batch]:
    """Live cases' jobs in batches by the --shard rule, each batch large enough for its worker to play -j cases
    at once (LIVE_BATCH_PER_J times -j, at least MIN_BATCH)."""
    jobs = len(positions) * work.repeats
    return _by_hash(work, positions, max(1, math.ceil(jobs / max(MIN_BATCH, LIVE_BATCH_PER_J * work.concurrency))))


def _by_hash(work: Work, positions: Iterable[int], count: int) -> list[Batch]:
    batches: list[Batch] = [[] for _ in range(count)]
    for position in positions:
        batches[shard_of(work.refs[position].id, count) - 1].extend((position, repeat)
                                                                    for repeat in range(work.repeats))
    return [batch for batch in batches if batch]


def worker_env(config: BaseModel, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables a worker needs for what `config` names: each `api_key_env` and `${NAME}`
    reference, and the providers' own variables (runner/util/provider_env.py: OPENAI_* for openai/... and unprefixed
    models, ANTHROPIC_* for anthropic/...) of the models it names, that are set here. Nothing else of this
    environment reaches the cluster; these travel in the run's object in the object store (never in Ray's
    runtime_env, which Ray writes to its logs), and a worker puts them into its environment (ray_run.py)."""
    from ...util.provider_env import prefixes_of
    from ...util.secrets import named_variables

    environ = os.environ if environ is None else environ
    names, _ = named_variables(config.model_dump(mode="json", by_alias=True))
    prefixes = tuple(prefixes_of(m.model for m in _models_in(config)))
    names.update(key for key in environ if prefixes and key.startswith(prefixes))
    return {name: environ[name] for name in sorted(names) if name in environ}


def _models_in(value: Any) -> Iterable[Any]:  # model settings: their classes differ, `model` is their common field
    """Every model setting (a pydantic object with a `model` string) anywhere in the configuration."""
    if isinstance(value, BaseModel):
        if isinstance(getattr(value, "model", None), str):
            yield value
        for field in type(value).model_fields:
            yield from _models_in(getattr(value, field, None))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _models_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _models_in(item)


def _connect(ray: Any, work: Work, notice: Callable[[str], None]) -> None:
    """Join RAY_ADDRESS's cluster, or start a local one (stopped by ray.shutdown at the end of the run)."""
    import logging

    address = os.environ.get("RAY_ADDRESS")  # no runtime_env: Ray logs it in clear (secrets: see worker_env)
    options = {"log_to_driver": False, "logging_level": logging.WARNING, "configure_logging": True}
    if address:
        ray.init(address=address, **options)
        notice(f"running the cases on the Ray cluster at {address} (RAY_ADDRESS)")
        return
    ray.init(include_dashboard=False, **options)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    notice(f"RAY_ADDRESS is not set: started a local Ray cluster ({cpus} CPUs) for this run; set RAY_ADDRESS "
           "to use a running cluster")


# ---------------------------------------------------------------------------------- in a Ray worker process

_worker_runs: dict[str, Work] = {}  # run token -> the run as this worker rebuilt it (the newest only)


def _score_batch(token: str, context: list, limits: str, batch: Batch) -> tuple[list, list]:
    """In a Ray worker: the batch's results as the process pool's worker makes them (replay_pool._play_batch)."""
    from . import replay_pool
    from .ray_limits import LimiterByName, remote_limits

    work = _worker_runs.get(token)
    if work is None:
        import ray

        _worker_runs.clear()
        holder = f"task-{os.getpid()}:{uuid.uuid4().hex[:12]}"  # a judged check's calls share the run's budget
        work = _worker_runs[token] = rebuild_run(ray.get(context[0]), limits=remote_limits(LimiterByName(limits), holder))
    replay_pool._work = work
    try:
        return replay_pool._play_batch(batch)
    finally:
        replay_pool._work = None


def _is_live(work: Work, ref: Any) -> bool:
    options = work.runner.options
    return not ref.recorded and options.replay_dir is None and options.conversations_dir is None


def _live_results(work: Work, played: dict) -> list[tuple[int, int, Any]]:
    """A live batch's results as this process saves them: its conversations saved first, into the run folder
    (each result then names its line, as a local run's does; one that cannot be saved is a note on the case,
    its verdict standing, as in a local run)."""
    from ..execute import PARTS_PER_REPEAT, case_error, unsaved_note

    saved: dict[tuple[int, int], Any] = {}
    failed: dict[tuple[int, int], str] = {}
    unsaved: dict[tuple[int, int], str] = {}
    for position, repeat, key, data in played["conversations"]:
        try:
            saved[(position, repeat)] = work.runner.save_conversation(key, data)
        except OSError as exc:  # a full disk
            unsaved[(position, repeat)] = unsaved_note(exc)
        except Exception as exc:
            failed[(position, repeat)] = f"the conversation could not be saved: {_cause(exc)}"
    out = []
    for position, part, result in played["results"]:
        repeat = part // PARTS_PER_REPEAT
        if (position, repeat) in failed:
            result = case_error(work.refs[position], repeat if work.repeats > 1 else None, failed[(position, repeat)])
        elif (position, repeat) in unsaved:
            result.notes.append(unsaved[(position, repeat)])
        elif result.transcript_path is None and saved.get((position, repeat)) is not None:
            result.transcript_path = str(saved[(position, repeat)])
        out.append((position, part, result))
    return out


def _latest(before: Any, now: Any) -> Any:
    """The later of two snapshots of one worker's running totals (batches may come back out of order)."""
    return now if before is None or (now.calls, now.latency_s) >= (before.calls, before.latency_s) else before


def add_totals(into: Any, part: Any) -> None:
    """Add model-usage totals `part` (runner.llm.calls.CallSummary) to `into`, by role too."""
    from ...llm.calls import CallTotals

    for name in ("calls", "cached", "errors", "prompt_tokens", "completion_tokens", "unpriced", "latency_s"):
        setattr(into, name, getattr(into, name) + getattr(part, name))
    for name in ("cost_usd", "saved_usd"):
        if getattr(part, name) is not None:
            setattr(into, name, (getattr(into, name) or 0.0) + getattr(part, name))
    for role, totals in getattr(part, "by_role", {}).items():
        add_totals(into.by_role.setdefault(role, CallTotals()), totals)


def _lost(work: Work, batch: Batch, exc: BaseException, doing: str = "scoring") -> list[tuple[int, int, Any]]:
    """The results of a batch that failed twice on the cluster: each case an error that gives the cause."""
    return _errors(work, batch, f"the Ray task {doing} this case's batch of {len(batch)} failed {ATTEMPTS} times "
                                f"({_cause(exc)}); the other cases went on")


def _errors(work: Work, jobs: Batch, error: str) -> list[tuple[int, int, Any]]:
    from ..execute import PARTS_PER_REPEAT, case_error

    return [(position, repeat * PARTS_PER_REPEAT,
             case_error(work.refs[position], repeat if work.repeats > 1 else None, error))
            for position, repeat in jobs]


def _cause(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = next((line for line in text if line.strip()), "")
    return clip(f"{type(exc).__name__}: {first}", 500, "") if first else type(exc).__name__
