"""How RayExecutor hands a run to the cluster, against a stand-in for `ray` in this process (the real cluster's
runs are in test_executor_ray.py): the order of what it asks the cluster for."""
from __future__ import annotations

import asyncio
import sys
import types
from concurrent.futures import Future

from runner.config.model import Config
from runner.run.execute import Stop
from runner.run.executors.base import Work
from runner.run.executors.ray_cluster import RayExecutor


class _Ref:
    def __init__(self, future: Future):
        self._future = future

    def future(self) -> Future:
        return self._future


class _Cluster:
    """What RayExecutor.run calls of `ray`. The limiter actor answers (is up) only once a batch was sent: its
    process starting is what the batches must not wait for."""

    def __init__(self) -> None:
        self.sent: list[list] = []
        self.limiter_up: Future = Future()
        self.calls: list[str] = []

    def module(self) -> types.ModuleType:
        ray = types.ModuleType("ray")
        ray.init = lambda **options: self.calls.append("init")
        ray.cluster_resources = lambda: {"CPU": 2.0}
        ray.put = lambda value: self.calls.append("put") or object()
        ray.remote = self._remote
        ray.cancel = lambda ref, force=False: None
        ray.shutdown = lambda: self.calls.append("shutdown")
        return ray

    def _remote(self, target):
        cluster = self
        if isinstance(target, type):  # the RunLimits actor
            class Actor:
                class state:  # an actor method, as Ray names it
                    @staticmethod
                    def remote():
                        cluster.calls.append("limiter state asked")
                        return _Ref(cluster.limiter_up)

            class Options:
                def remote(self, *args):
                    cluster.calls.append("limiter made")
                    return Actor()
        else:  # _score_batch
            class Options:  # type: ignore[no-redef]
                def remote(self, token, context, limits, batch):
                    cluster.calls.append("batch sent")
                    cluster.sent.append(batch)
                    if not cluster.limiter_up.done():
                        cluster.limiter_up.set_result({"peak": 0})
                    done: Future = Future()
                    done.set_result(([], []))
                    return _Ref(done)

        class Remote:
            def options(self, **options):
                return Options()

        return Remote()


def _work(count: int) -> Work:
    refs = [types.SimpleNamespace(id=f"case-{n:03d}", recorded=True) for n in range(count)]
    loaded = types.SimpleNamespace(config=Config.model_validate({}))
    runner = types.SimpleNamespace(loaded=loaded, options=types.SimpleNamespace(replay_dir=None, conversations_dir=None),
                                   roots=[])
    return Work(refs, 1, 4, runner, save=lambda *args: None, stop=Stop())  # type: ignore[arg-type]


def test_the_batches_are_sent_without_waiting_for_the_limiter_actors_process(monkeypatch):
    """The batches went only once the limiter actor answered: a Ray run then started the actor's process and, after
    it (1-3 s of imports), the workers' one after the other. Workers find the actor by its name, registered as it
    is made, so the batches go at once; the run still waits for the actor (one that cannot start fails the run's
    hand-over)."""
    cluster = _Cluster()
    monkeypatch.setitem(sys.modules, "ray", cluster.module())
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    work = _work(40)

    async def run() -> None:
        await asyncio.wait_for(RayExecutor(notice=lambda message: None).run(work), 10)

    asyncio.run(run())  # the batches waiting for the limiter: TimeoutError
    assert sorted(job for batch in cluster.sent for job in batch) == [(n, 0) for n in range(40)]
    assert cluster.calls == ["init", "limiter made", "put", "limiter state asked",
                             *["batch sent"] * len(cluster.sent), "shutdown"]
