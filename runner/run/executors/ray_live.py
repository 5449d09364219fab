"""Live cases on a Ray cluster: an async actor per node plays batches of cases (runner.run.executors.ray_cluster).

A `LiveWorker` rebuilds the run's case runner once, from the run sent through Ray's object store, with its
LLM layer bound to the run's one budget (runner.run.executors.ray_limits): its model client, connections and
caches then serve every batch it is given. A batch's cases run as asyncio tasks on the actor's event loop, at
most -j at once on this worker, as the local executor runs them; the batch comes back whole: each case's
results, the conversations it played (saved by the run's process, into the run folder, as a local run saves
them) and the worker's model-usage totals so far.

Ray restarts a worker whose process was lost and tries the batches it held once more (ATTEMPTS), on the new
incarnation; the driver makes the cases of a batch that failed twice errors that give the cause.
"""
from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from ..case_index import CaseRef
from ..execute import PARTS_PER_REPEAT, conversation_key
from .base import Work

LIVE_ACTORS_ENV = "EVALRUN_RAY_LIVE_ACTORS"  # how many live workers (default: one per node of the cluster)


class LiveWorker:
    """The actor. `index` names the worker across its incarnations (for the run's limiter)."""

    def __init__(self, index: int, limits_name: str):
        import ray

        self.holder = f"live{index}:{uuid.uuid4().hex[:12]}"
        self.limits = ray.get_actor(limits_name)
        # awaited before this incarnation's first model call (_run), not here: the actor is then up, and takes its
        # batch, while the limiter's process may still be starting (its calls wait for it, in order)
        self._registered = self.limits.register.remote(self.holder)
        self._conversations: dict[str, dict] = {}
        self._work: Work | None = None
        self._cases: asyncio.Semaphore | None = None

    async def _run(self, context: list) -> Work:
        """The run, rebuilt from the object store on this incarnation's first batch (a constructor argument
        would have to outlive the driver's reference for Ray to restart the actor)."""
        if self._work is None:
            from .ray_limits import remote_limits
            from .ray_run import rebuild_run

            run = await context[0]
            work = rebuild_run(run, limits=remote_limits(self.limits, self.holder),
                               save_conversation=self._keep_conversation)
            await self._registered  # what an earlier incarnation held is freed before this one asks for slots
            self._work, self._cases = work, asyncio.Semaphore(max(1, work.concurrency))
        return self._work

    def _keep_conversation(self, key: str, data: dict) -> None:
        # the run's process saves it (into its run folder); the result's transcript_path is set there
        self._conversations[key] = data

    async def play(self, context: list, batch: list[tuple[int, int]]) -> dict:
        """The batch's results as (position, part, result), the conversations played as (position, repeat,
        key, data), and this worker's model-usage totals so far (with its holder name)."""
        from ...llm.runtime import current_runtime

        work = await self._run(context)
        played = await asyncio.gather(*(self._play_one(work, position, repeat) for position, repeat in batch))
        results = [item for one in played for item in one[0]]
        conversations = [one[1] for one in played if one[1] is not None]
        return {"results": results, "conversations": conversations, "usage": current_runtime().summary(),
                "holder": self.holder, "pid": os.getpid()}

    async def _play_one(self, work: Work, position: int, repeat: int) -> tuple[list, tuple | None]:
        ref: CaseRef = work.refs[position]
        numbered = repeat if work.repeats > 1 else None
        assert self._cases is not None
        async with self._cases:
            results = await work.runner.run(ref, numbered)
        key = conversation_key(ref.id, numbered)
        data = self._conversations.pop(key, None)
        parts = [(position, repeat * PARTS_PER_REPEAT + part, result) for part, result in enumerate(results)]
        return parts, ((position, repeat, key, data) if data is not None else None)


def live_worker_count(ray: Any) -> int:
    """One live worker per node of the cluster, or EVALRUN_RAY_LIVE_ACTORS when set."""
    asked = os.environ.get(LIVE_ACTORS_ENV, "").strip()
    if asked:
        try:
            return max(1, int(asked))
        except ValueError:
            pass
    return max(1, sum(1 for node in ray.nodes() if node.get("Alive")))


def start_live_workers(ray: Any, count: int, limits_name: str, attempts: int) -> list:
    """`count` LiveWorker actors spread over the cluster's nodes (each uses no CPU slot: its cases wait on
    models and agents mostly; the replay tasks of the run get the CPUs). A lost one is restarted, and the
    batches it held are tried `attempts` times in all."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [node["NodeID"] for node in ray.nodes() if node.get("Alive")] or [None]
    actor = ray.remote(LiveWorker)
    workers = []
    for index in range(count):
        node = nodes[index % len(nodes)]
        strategy = NodeAffinitySchedulingStrategy(node, soft=True) if node else "DEFAULT"
        workers.append(actor.options(num_cpus=0, max_concurrency=1000, max_restarts=-1,
                                     max_task_retries=attempts - 1, scheduling_strategy=strategy)
                       .remote(index, limits_name))
    return workers
