"""The Ray executor: recorded cases scored as Ray tasks on a cluster (`--executor ray`, `pip install 'evalrun[ray]'`).

The cluster is the one RAY_ADDRESS names, or a local one started for the run (and stopped after it) when
none is set; Ray's own settings (RAY_TMPDIR for its temp folder) apply as Ray reads them. Ray is imported
here only, when this executor runs.

Cases are grouped into batches by the rule of `--shard` (a stable hash of the case id, runner.shard), so a
case lands in the same batch wherever and however often the run is started. The run's cases, its
configuration and its redactor travel once, into Ray's object store; a worker process builds the run's case
runner from them the first time it gets a batch of this run and keeps it for the next ones. A batch is scored
exactly as the process pool's worker scores one (runner.run.executors.replay_pool: each result comes back as
its line of results.jsonl, secrets redacted where it was made), and this process saves each batch's results
as it arrives, so a run killed midway keeps every finished case. Ray retries a batch whose worker was lost;
a batch that fails twice makes its cases errors that give the cause.

Workers see only the environment variables evalrun needs: the `api_key_env` variables and the provider
variables (OPENAI_*, ANTHROPIC_*, ...) of the models the configuration names, through Ray's runtime_env.
(A local cluster started here is this process's child and inherits its environment, as any child does.)

Live cases are not run here yet: choose_executor refuses a run with one (use --executor local).
"""
from __future__ import annotations

import asyncio
import math
import os
import sys
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from pydantic import BaseModel

from .base import Executor, Work
from ...shard import shard_of

INSTALL_HINT = "pip install 'evalrun[ray]'"
MIN_BATCH = 16  # a task costs Ray a few milliseconds to schedule: smaller batches spend more on that than scoring
MAX_BATCH = 256  # a lost worker then costs at most this much work to redo
BATCHES_PER_CPU = 4  # enough for the cluster's workers to finish together
ATTEMPTS = 2  # a batch is tried twice (Ray's task retry), then its cases are errors

Batch = list[tuple[int, int]]  # jobs: (a case's position in the run, which repeat)


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, notice: Callable[[str], None] = lambda message: print(f"evalrun: {message}",
                                                                           file=sys.stderr, flush=True)):
        self.notice = notice

    async def run(self, work: Work) -> None:
        import ray

        from .replay_pool import ReplayPoolExecutor
        from ...llm.runtime import current_runtime

        runtime = current_runtime()  # the calls workers make count in this run's totals
        try:
            _connect(ray, work, self.notice)
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        except Exception as exc:  # noqa: BLE001 - no cluster: every case says why it did not run, no traceback
            where = os.environ.get("RAY_ADDRESS")
            why = (f"the Ray cluster at {where} (RAY_ADDRESS) could not be reached" if where else
                   "a local Ray cluster could not be started")
            jobs = [(position, repeat) for position in range(len(work.refs)) for repeat in range(work.repeats)]
            ReplayPoolExecutor._save(work, (_errors(work, jobs, f"{why}: {_cause(exc)}"), []), runtime)
            ray.shutdown()  # whatever part of it had started
            return
        task = asyncio.current_task()
        assert task is not None
        work.stop.watch([task])  # a stop cancels the wait below; the batches not finished are cancelled
        pending: dict[Any, Batch] = {}
        batches = batches_by_hash(work, cpus)
        try:
            try:
                context = ray.put(_portable_run(work, runtime))
                score = ray.remote(_score_batch).options(max_retries=ATTEMPTS - 1, retry_exceptions=True)
                token = uuid.uuid4().hex
                for batch in batches:
                    pending[score.remote(token, [context], batch)] = batch
            except Exception as exc:  # noqa: BLE001 - the run could not be sent (a configuration that won't pickle)
                error = f"the run could not be handed to the Ray cluster: {_cause(exc)}"
                ReplayPoolExecutor._save(work, (_errors(work, [job for b in batches for job in b], error), []),
                                         runtime)
                return
            futures = {asyncio.wrap_future(ref.future()): ref for ref in pending}
            while futures:
                done, _ = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    batch = pending.pop(futures.pop(future))
                    try:
                        played = future.result()
                    except Exception as exc:  # noqa: BLE001 - Ray's errors for a lost worker or a failing batch
                        played = (_lost(work, batch, exc), [])
                    if not ReplayPoolExecutor._save(work, played, runtime):
                        return
        except asyncio.CancelledError:
            if work.stop.reason is None:
                raise
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            ray.shutdown()  # stops the local cluster started here; only disconnects from RAY_ADDRESS's


def ray_installed() -> bool:
    """Whether Ray imports here (asked only for --executor ray, which imports it next anyway)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def batches_by_hash(work: Work, cpus: int) -> list[Batch]:
    """The run's jobs in batches by the --shard rule: batch i holds the cases whose id hashes to shard i+1 of
    as many shards as there are batches, every repeat of a case in its case's batch, in the run's order."""
    jobs = work.jobs
    count = max(1, min(math.ceil(jobs / MIN_BATCH), max(cpus * BATCHES_PER_CPU, math.ceil(jobs / MAX_BATCH))))
    batches: list[Batch] = [[] for _ in range(count)]
    for position, ref in enumerate(work.refs):
        batches[shard_of(ref.id, count) - 1].extend((position, repeat) for repeat in range(work.repeats))
    return [batch for batch in batches if batch]


def worker_env(config: BaseModel, environ: Optional[dict] = None) -> dict[str, str]:
    """The environment variables a worker needs for the models `config` names: each `api_key_env`, and the
    provider's own variables (OPENAI_* for openai/... and unprefixed models, ANTHROPIC_* for anthropic/...)
    that are set here. Nothing else of this environment reaches the cluster."""
    environ = os.environ if environ is None else environ
    names: set[str] = set()
    for model in _models_in(config):
        if getattr(model, "api_key_env", None):
            names.add(model.api_key_env)
        name = getattr(model, "model", None)
        if isinstance(name, str):
            provider = name.split("/", 1)[0] if "/" in name else "openai"
            prefix = provider.upper().replace("-", "_") + "_"
            names.update(key for key in environ if key.startswith(prefix))
    return {name: environ[name] for name in sorted(names) if name in environ}


def _models_in(value: Any) -> Iterable[BaseModel]:
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

    runtime_env = {"env_vars": worker_env(work.runner.loaded.config)}
    address = os.environ.get("RAY_ADDRESS")
    options = dict(runtime_env=runtime_env, log_to_driver=False, logging_level=logging.WARNING,
                   configure_logging=True)
    if address:
        ray.init(address=address, **options)
        notice(f"running the cases on the Ray cluster at {address} (RAY_ADDRESS)")
        return
    ray.init(include_dashboard=False, **options)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    notice(f"RAY_ADDRESS is not set: started a local Ray cluster ({cpus} CPUs) for this run; set RAY_ADDRESS "
           "to use a running cluster")


def _portable_run(work: Work, runtime: Any) -> dict:
    """What a worker needs to score this run's cases, in a form that pickles (the case runner itself holds
    threads and locks: the worker builds its own from these)."""
    from ...results.folder import RunFolder

    runner = work.runner
    folder = getattr(work.serialise, "__self__", None)
    if isinstance(folder, RunFolder):  # its redactor, applied in the worker as the folder would apply it here
        serialise: Any = ("folder", folder._redact)
    else:
        serialise = ("callable", work.serialise)
    return {"refs": list(work.refs), "repeats": work.repeats, "concurrency": work.concurrency,
            "loaded": runner.loaded, "options": runner.options, "roots": list(runner.roots),
            "cache_dir": runtime.cache_dir, "no_cache": runtime.no_cache, "serialise": serialise,
            "cwd": os.getcwd()}


# ---------------------------------------------------------------------------------- in a Ray worker process

_worker_runs: dict[str, Work] = {}  # run token -> the run as this worker rebuilt it (the newest only)


def _score_batch(token: str, context: list, batch: Batch) -> tuple[list, list]:
    """In a Ray worker: the batch's results as the process pool's worker makes them (replay_pool._play_batch)."""
    from . import replay_pool

    work = _worker_runs.get(token)
    if work is None:
        import ray

        _worker_runs.clear()
        work = _worker_runs[token] = _rebuild(ray.get(context[0]))
    replay_pool._work = work
    try:
        return replay_pool._play_batch(batch)
    finally:
        replay_pool._work = None


def _rebuild(run: dict) -> Work:
    from ..execute import CaseRunner, Stop
    from ...llm.runtime import configure
    from ...results.folder import RunFolder

    # The run's paths are read as this run's process reads them: relative to its folder (on a cluster, the
    # suites live on storage every node mounts at the same path)
    os.chdir(run["cwd"])
    configure(concurrency=run["concurrency"], cache_dir=run["cache_dir"], no_cache=run["no_cache"])
    runner = CaseRunner(run["loaded"], run["options"], roots=run["roots"])
    kind, value = run["serialise"]
    serialise = RunFolder(Path("."), "ray-worker", None, redact=value).serialise if kind == "folder" else value
    return Work(run["refs"], run["repeats"], run["concurrency"], runner, save=lambda *args: None, stop=Stop(),
                serialise=serialise)


def _lost(work: Work, batch: Batch, exc: BaseException) -> list[tuple[int, int, Any, None]]:
    """The results of a batch that failed twice on the cluster: each case an error that gives the cause."""
    return _errors(work, batch, f"the Ray task scoring this case's batch of {len(batch)} failed {ATTEMPTS} times "
                                f"({_cause(exc)}); the other cases went on")


def _errors(work: Work, jobs: Batch, error: str) -> list[tuple[int, int, Any, None]]:
    from ..execute import PARTS_PER_REPEAT, case_error

    return [(position, repeat * PARTS_PER_REPEAT,
             case_error(work.refs[position], repeat if work.repeats > 1 else None, error), None)
            for position, repeat in jobs]


def _cause(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = next((line for line in text if line.strip()), "")
    return f"{type(exc).__name__}: {first}"[:500] if first else type(exc).__name__
