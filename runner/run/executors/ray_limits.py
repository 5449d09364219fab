"""One budget of model requests for a whole Ray run: `-j` and each model's `max_concurrency` (evalrun.yaml) hold
across every node, so forty nodes do not send forty times the requests allowed.

`RunLimits` is a Ray actor (one per run) holding the run's limits as runner.llm.limits.Limiter objects, the
same that bound a local run, 429 back-off included. Each process playing cases builds its LLM layer with
`remote_limits(...)`, which makes `RemoteLimit` stand-ins with the Limiter's interface: acquire and release a
request slot, throttle on a 429, recover on a success, each a call to the actor.

A holder is one incarnation of a process playing cases ("<worker>:<incarnation>"): when Ray restarts a lost
worker, the new incarnation registers, which frees what the dead one held and refuses what it was still
waiting for, so a lost worker costs the budget nothing.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from ...llm.limits import RunLimit

RUN = "run"  # the key of the run-wide limit (-j); a model's own is its (model, api_base, max_concurrency)


class RunLimits:
    """The actor: the run's limits, and who holds how many slots of each."""

    def __init__(self, concurrency: int):
        from ...llm.limits import Limiter

        self._make = Limiter
        self.limits: dict[str, Any] = {RUN: Limiter(concurrency)}
        self.held: Counter = Counter()  # (holder, key) -> slots held
        self.current: dict[str, str] = {}  # worker -> its live incarnation (the holder name it registered)
        self.peak = 0  # the most run-wide slots held at once (for the tests and the report)

    async def acquire(self, key: str, limit: int, holder: str) -> bool:
        """Wait for a slot; False when the holder was declared dead meanwhile (the slot is handed back)."""
        if self._dead(holder):
            return False
        limiter = self.limits.get(key)
        if limiter is None:
            limiter = self.limits[key] = self._make(limit)
        await limiter.acquire()
        if self._dead(holder):
            limiter.release()
            return False
        self.held[(holder, key)] += 1
        if key == RUN:
            self.peak = max(self.peak, limiter.in_use)
        return True

    def release(self, key: str, holder: str) -> None:
        if self.held[(holder, key)] > 0:
            self.held[(holder, key)] -= 1
            self.limits[key].release()

    def throttle(self, key: str) -> None:
        if key in self.limits:  # a limit is made by its first acquire, which comes first
            self.limits[key].throttle()

    def recover(self, key: str) -> None:
        if key in self.limits:
            self.limits[key].recover()

    def register(self, holder: str) -> None:
        """A worker's new incarnation: the slots its earlier ones held are free (their process is gone)."""
        worker = holder.split(":", 1)[0]
        self.current[worker] = holder
        for (who, key), count in list(self.held.items()):
            if self._dead(who) and count:
                del self.held[(who, key)]
                for _ in range(count):
                    self.limits[key].release()

    def _dead(self, holder: str) -> bool:
        return self.current.get(holder.split(":", 1)[0], holder) != holder

    def state(self) -> dict:
        run = self.limits[RUN]
        return {"peak": self.peak, "in_use": run.in_use, "limit": run.limit, "throttled": run.throttled}


class LimiterByName:
    """The run's RunLimits actor as a scoring task finds it: by its name, at the task's first model call (a batch
    that calls no model never asks the cluster for it). The run makes the actor just after sending its batches
    (ray_cluster.py: their workers' processes start first), so a worker that got there sooner waits for the name
    to be registered, `wait_s` seconds at most."""

    def __init__(self, name: str, wait_s: float = 60.0):
        self.name, self.wait_s = name, wait_s
        self._actor: Any = None

    def __getattr__(self, method: str) -> Any:  # acquire, release, ...: the actor's methods
        if method.startswith("_"):
            raise AttributeError(method)
        return getattr(self.actor(), method)

    def actor(self) -> Any:
        if self._actor is None:
            import time

            import ray

            deadline = time.monotonic() + self.wait_s
            while True:
                try:
                    self._actor = ray.get_actor(self.name)
                    break
                except ValueError:  # not registered yet
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(0.05)
        return self._actor


class RemoteLimit(RunLimit):
    """A limit held by the RunLimits actor, with runner.llm.limits.Limiter's interface (RunLimit)."""

    def __init__(self, actor: Any, key: str, limit: int, holder: str):
        self.actor, self.key, self.limit, self.holder = actor, key, limit, holder

    async def acquire(self) -> None:
        granted = asyncio.wrap_future(self.actor.acquire.remote(self.key, self.limit, self.holder).future())
        try:
            ok = await asyncio.shield(granted)
        except asyncio.CancelledError:
            # the slot may still be granted after the caller gave up: hand it back then
            granted.add_done_callback(self._release_if_granted)
            raise
        if not ok:
            raise RuntimeError("this worker was declared lost by the run's limiter")

    def _release_if_granted(self, granted: asyncio.Future) -> None:
        if not granted.cancelled() and granted.exception() is None and granted.result():
            self.release()

    def release(self) -> None:
        self.actor.release.remote(self.key, self.holder)

    def throttle(self) -> None:
        self.actor.throttle.remote(self.key)

    def recover(self) -> None:
        self.actor.recover.remote(self.key)


def remote_limits(actor: Any, holder: str):
    """The LLM layer's limit factory (runner.llm.runtime.configure's `limits`) for a process of a Ray run."""

    def make(key: tuple | None, limit: int) -> RemoteLimit:
        return RemoteLimit(actor, RUN if key is None else repr(key), limit, holder)

    return make


def start_limits(ray: Any, concurrency: int, name: str) -> Any:
    """The run's RunLimits actor, named `name` (workers find it by name: an actor handle among a restartable
    actor's constructor arguments would have to outlive this process's reference; the name is registered before
    this returns). It waits on many acquires at once (an async actor), uses no CPU slot of the cluster, and is
    restarted if its process is lost (the run's limits start afresh then)."""
    actor = ray.remote(RunLimits).options(name=name, num_cpus=0, max_concurrency=10_000, max_restarts=-1,
                                          max_task_retries=-1)
    return actor.remote(concurrency)
