"""An event loop of its own, in a thread of its own, for one conversation's `async def` python agent.

On evalrun's own loop an agent could stall every case (one blocking call: no timeout fires, no signal is
heard), or end the run (it stops the loop, or cancels every task). On a loop of its own it can do neither: evalrun
awaits each answer on its loop, so the case timeout and a stop take effect at once; an agent that does not answer
in time is asked to stop (its task cancelled, its loop stopped) and abandoned, never waited for: its thread is a
daemon, which ends with the process. What happens on the agent's loop is the agent's: it stopping that loop,
or an exception that escapes it, is that turn's error.

One loop per conversation, living as long as it: what the agent keeps between turns (a client session) stays
usable, as in an isolated worker process (runner.run.agents._worker). The one exception is `aevaluate`, whose
caller's loop plays the cases and is promised to its agents (`on_callers_loop`).
"""
from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any

CLOSE_GRACE_S = 2.0  # at the end of a conversation: how long the agent's loop may take to wind down

# True where the caller's own loop plays the cases and was promised to its agents (runner.aevaluate: an async
# agent may use what its caller set up on that loop); the caller owns that loop, and what its agent does to it
on_callers_loop: contextvars.ContextVar[bool] = contextvars.ContextVar("evalrun_agents_on_callers_loop", default=False)


class AgentLoopEnded(Exception):
    """The agent's loop ended before it answered; the message says how."""


class AgentLoop:
    def __init__(self, name: str):
        self.name = name  # the entry point, for messages
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ended: str | None = None  # why the loop ended, once it did before it was asked to
        self._closing = False
        self._abandoned = False
        self._finished = threading.Event()  # the thread has wound the loop down
        self._waiting: tuple[asyncio.AbstractEventLoop, Callable[[Any, bool], None]] | None = None
        self._task: asyncio.Task | None = None
        self._on_finished: Callable[[], None] | None = None

    async def call(self, make: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """Await `make()` on the agent's loop: (its result, False) or (what it raised, True). Cancelling this
        cancels the agent's task and returns at once, whether or not the agent notices."""
        if self.loop is None:
            self._start()
        assert self.loop is not None
        if self._ended is not None or self._closing:
            return AgentLoopEnded(self._ended or "its event loop was closed"), True
        here = asyncio.get_running_loop()
        answer: asyncio.Future = here.create_future()

        def settle(outcome: Any, failed: bool) -> None:
            if not answer.done():
                answer.set_result((outcome, failed))  # not set_exception: it refuses StopIteration

        def reply(outcome: Any, failed: bool) -> None:  # from the agent's thread
            try:
                here.call_soon_threadsafe(settle, outcome, failed)
            except RuntimeError:  # evalrun's loop is gone: nobody waits any more
                pass

        async def guarded() -> None:
            try:
                outcome, failed = await make(), False
            except BaseException as exc:
                outcome, failed = exc, True
            reply(outcome, failed)

        def begin() -> None:
            # in `context` (create_task copies the current one): create_task's context= is Python 3.11+
            self._task = context.run(self.loop.create_task, guarded())  # type: ignore[union-attr]

        context = contextvars.copy_context()  # the calls it makes are recorded as this case's
        self._waiting = (here, reply)
        try:
            self.loop.call_soon_threadsafe(begin)
        except RuntimeError:  # closed in between
            return AgentLoopEnded(self._ended or "its event loop was closed"), True
        try:
            return await answer
        except asyncio.CancelledError:
            self._cancel_task()
            raise
        finally:
            self._waiting = None

    def _start(self) -> None:
        started = threading.Event()

        def main() -> None:
            loop = self.loop = asyncio.new_event_loop()
            loop.set_exception_handler(lambda loop, context: None)  # the agent's own tasks' errors are its own
            asyncio.set_event_loop(loop)
            started.set()
            try:
                loop.run_forever()
                why = None if self._closing else "the agent stopped its event loop (loop.stop()) before answering"
            except BaseException as exc:
                from ._entrypoint import exception_summary

                why = f"its event loop ended: {exception_summary(exc)}"
            if why is not None:
                self._ended = why
                waiting = self._waiting
                if waiting is not None:
                    waiting[1](AgentLoopEnded(why), True)
            _wind_down(loop)
            self._finished.set()
            on_finished = self._on_finished
            if on_finished is not None:
                on_finished()

        self._thread = threading.Thread(target=main, name=f"evalrun-async-agent {self.name}", daemon=True)
        self._thread.start()
        started.wait()

    def _cancel_task(self) -> None:
        task, loop = self._task, self.loop
        if task is not None and loop is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass

    def stop(self) -> None:
        """Abandon the loop (a timeout, a stop): ask it to end (its tasks cancelled, then closed), never waiting
        for it, now or at `close`."""
        self._abandoned = True
        self._end()

    def _end(self) -> None:
        self._closing = True
        self._cancel_task()
        if self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self.loop.stop)
            except RuntimeError:
                pass

    async def close(self) -> None:
        """End the loop, giving the agent a moment to wind down (CLOSE_GRACE_S), never more (nothing, once
        abandoned)."""
        self._end()
        if self._thread is None or self._finished.is_set() or self._abandoned:
            return
        here = asyncio.get_running_loop()
        finished: asyncio.Future = here.create_future()

        def wake() -> None:  # from the agent's thread
            try:
                here.call_soon_threadsafe(lambda: finished.done() or finished.set_result(None))  # type: ignore[func-returns-value]  # `or`: set once
            except RuntimeError:
                pass

        self._on_finished = wake
        if self._finished.is_set():  # wound down before the line above
            return
        try:
            await asyncio.wait_for(finished, CLOSE_GRACE_S)
        except asyncio.TimeoutError:
            pass


def _wind_down(loop: asyncio.AbstractEventLoop) -> None:
    """As asyncio.run ends a loop: cancel what still runs, let it finish, close. An agent that refuses holds only
    this daemon thread."""
    try:
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except BaseException:
        pass
    finally:
        try:
            loop.close()
        except BaseException:
            pass
