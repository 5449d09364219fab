"""How RayExecutor hands a run to the cluster, against a stand-in for `ray` in this process (the real cluster's
runs are in test_executor_ray.py): the order of what it asks the cluster for."""
from __future__ import annotations

import asyncio
import sys
import types
from concurrent.futures import Future

import pytest

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
    # the limiter after the batches: asked first, its process took a scoring worker's turn to start (a node starts
    # as many processes at once as it has CPUs), and the second worker started only once the first was up
    assert cluster.calls == ["init", "put", *["batch sent"] * len(cluster.sent), "limiter made",
                             "limiter state asked", "shutdown"]


def test_a_scoring_task_finds_the_limiter_by_name_at_its_first_model_call_and_waits_for_it_to_be_registered(
        monkeypatch):
    """The run makes the limiter after sending its batches: a worker already up may look for it first. It is
    looked up when a model is called (never for a batch that calls none), and a name not registered yet is
    asked for again; one that never comes fails the call after the wait, naming the actor."""
    from runner.run.executors.ray_limits import LimiterByName

    asked: list[str] = []
    actor = types.SimpleNamespace(acquire="the actor's acquire")

    def get_actor(name: str):
        asked.append(name)
        if len(asked) < 3:
            raise ValueError(f"Failed to look up actor with name '{name}'")
        return actor

    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(get_actor=get_actor))
    limiter = LimiterByName("evalrun-limits-x")
    assert asked == []  # made, not looked up
    assert limiter.acquire == "the actor's acquire"
    assert limiter.acquire == "the actor's acquire"
    assert asked == ["evalrun-limits-x"] * 3  # twice not registered yet, then found, and kept

    def missing(name: str):
        raise ValueError(f"Failed to look up actor with name '{name}'")

    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(get_actor=missing))
    with pytest.raises(ValueError, match="Failed to look up actor with name 'evalrun-limits-gone'"):
        LimiterByName("evalrun-limits-gone", wait_s=0.2).acquire  # noqa: B018 - the lookup is the point


def test_a_live_worker_is_up_before_the_limiter_and_is_registered_before_its_first_batch_plays(monkeypatch):
    """A live worker's constructor waited for its registration with the limiter, so the actor was up only once the
    limiter's process was (1-3 s of imports), and took its first batch only then. It now sends the registration and
    awaits it on its first batch, after rebuilding the run: what an earlier incarnation held is still freed before
    this one asks for a slot."""
    from runner.run.executors import ray_run
    from runner.run.executors.ray_live import LiveWorker

    events: list[str] = []

    class Registered:  # the registration's reference: answered once the limiter's process is up
        def __await__(self):
            yield from asyncio.sleep(0).__await__()
            events.append("registered")

    limiter = types.SimpleNamespace(register=types.SimpleNamespace(
        remote=lambda holder: events.append(f"register {holder.split(':')[0]} sent") or Registered()))

    def blocked(ref):
        raise AssertionError("the constructor waited for the limiter")

    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(get_actor=lambda name: limiter, get=blocked))
    worker = LiveWorker(3, "evalrun-limits-x")
    assert events == ["register live3 sent"]
    work = types.SimpleNamespace(concurrency=2)
    monkeypatch.setattr(ray_run, "rebuild_run", lambda run, **kwargs: events.append("rebuilt") or work)

    async def first_batch() -> None:
        context = asyncio.get_running_loop().create_future()
        context.set_result({"the run": 1})
        assert await worker._run([context]) is work

    asyncio.run(first_batch())
    assert events == ["register live3 sent", "rebuilt", "registered"]
