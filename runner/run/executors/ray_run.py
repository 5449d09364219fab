"""A run as it travels to a Ray cluster's worker processes, and as a worker builds it again
(runner.run.executors.ray_cluster sends it; its tasks and ray_live's actors rebuild it)."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ...util.secrets import redact_standard_streams, remember
from .base import Work


def portable_run(work: Work, runtime: Any, environ: dict | None = None) -> dict:
    """What a worker needs to score this run's cases, in a form that pickles (the case runner itself holds
    threads and locks: the worker builds its own from these); `environ`: the variables it needs (secrets among
    them: they travel here, in the object store, and never in a runtime_env that Ray would log)."""
    runner = work.runner
    serialise = work.serialise  # picklable (runner.results.folder.ResultLines): lines made where results are
    return {"refs": list(work.refs), "repeats": work.repeats, "concurrency": work.concurrency,
            "loaded": runner.loaded, "options": runner.options, "roots": list(runner.roots),
            "cache_dir": runtime.cache_dir, "no_cache": runtime.no_cache, "serialise": serialise,
            "cwd": os.getcwd(), "environ": dict(environ or {})}


def rebuild_run(run: dict, *, limits: Any, save_conversation: Callable[[str, dict], None] = lambda key, data: None
                ) -> Work:
    """In a Ray worker process: the run as `portable_run` sent it, with its own case runner and LLM layer (its
    limits those of the cluster's one budget: `limits`, runner.llm.runtime.configure's factory)."""
    from ...llm.runtime import configure
    from ..execute import CaseRunner, Stop

    # The run's paths are read as this run's process reads them: relative to its folder (on a cluster, the
    # suites live on storage every node mounts at the same path)
    os.chdir(run["cwd"])
    os.environ.update(run.get("environ") or {})
    remember(run["loaded"].config)  # its secrets, masked in what this worker writes and cuts (runner/util/secrets.py)
    redact_standard_streams()  # and in what it prints (an agent's prints too), which Ray writes to its logs
    configure(concurrency=run["concurrency"], cache_dir=run["cache_dir"], no_cache=run["no_cache"], limits=limits)
    runner = CaseRunner(run["loaded"], run["options"], roots=run["roots"], save_conversation=save_conversation)
    return Work(run["refs"], run["repeats"], run["concurrency"], runner, save=lambda *args: None, stop=Stop(),
                serialise=run["serialise"])
