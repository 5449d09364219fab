"""One worker process of the replay pool (runner.run.executors.replay_pool), forked from the run's process, and
the channel to it: a socket of its own (runner.util.forked), read on the run's event loop, so a worker that dies at
any moment, a signal or a stop is seen as it happens.

Frames carry pickles: a batch of jobs to the worker; ("played", what the batch gave) or ("raised", why) back.
The worker plays the batches in the order sent, and ends when its socket does.
"""
from __future__ import annotations

import asyncio
import os
import pickle
import socket
from collections.abc import Callable
from typing import Any

from ...util.forked import HEADER, become_worker, fork_with_socket, kill_and_reap, read_frame, write_frame

EXIT_SETTLE_S = 1.0  # after its socket ended: how long a worker may take to be gone before it is killed


class WorkerProcess:
    """A forked worker that answers each batch sent with `play(batch)`; `events` gets (this worker, answer)
    for each answer and (this worker, None) once its socket ends (the worker died or closed it)."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid = pid
        self.sock = sock
        self.in_flight: list[Any] = []  # the batches sent and not answered, oldest (the one it plays) first
        self.status: int | None = None  # its wait status, once reaped
        self._writer: asyncio.StreamWriter | None = None
        self._listener: asyncio.Task | None = None

    @classmethod
    def fork(cls, play: Callable[[Any], Any], siblings: list[WorkerProcess]) -> WorkerProcess:
        """Fork a worker serving `play`; `siblings`: the workers already running (their sockets are closed in it)."""
        pid, sock = fork_with_socket(lambda theirs, parent: _serve(theirs, play, parent),
                                     [sibling.sock for sibling in siblings])
        return cls(pid, sock)

    async def listen(self, events: asyncio.Queue) -> None:
        """Start reading this worker's answers into `events` (on the running loop)."""
        reader, self._writer = await asyncio.open_unix_connection(sock=self.sock, limit=1 << 20)
        self._listener = asyncio.ensure_future(self._read(reader, events))

    async def _read(self, reader: asyncio.StreamReader, events: asyncio.Queue) -> None:
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(HEADER), "big")
                payload = await reader.readexactly(size)
                try:
                    answer = pickle.loads(payload)
                except Exception as exc:
                    answer = ("raised", f"its answer could not be read ({type(exc).__name__}: {exc})")
                events.put_nowait((self, answer))
        except (asyncio.IncompleteReadError, OSError):
            pass
        events.put_nowait((self, None))

    def send(self, batch: Any) -> None:
        """Hand the worker a batch (it plays them in the order sent)."""
        assert self._writer is not None, "listen() first"
        self.in_flight.append(batch)
        data = pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)
        self._writer.write(len(data).to_bytes(HEADER, "big") + data)

    async def ended(self) -> int | None:
        """Once its socket ended: how the worker ended (os.waitstatus_to_exitcode's), after a moment to be gone;
        one still running then (it closed its socket itself) is killed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EXIT_SETTLE_S
        while not self.reap() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        self.kill()
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)

    def reap(self) -> bool:
        """Whether the worker is gone (reaped now or before), never blocking."""
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: gone all the same
                pid, status = self.pid, 0
            if pid == self.pid:
                self.status = status
        return self.status is not None

    def kill(self) -> None:
        """End it now (SIGKILL, unless gone already) and reap it; close this end of its socket."""
        if self.status is None:
            status = kill_and_reap(self.pid)
            self.status = 0 if status is None else status
        self.close()

    def close(self) -> None:
        """Close this end of its socket: a worker still running then ends by itself."""
        if self._listener is not None and not self._listener.done():
            self._listener.cancel()
        if self._writer is not None:
            self._writer.close()
        else:
            self.sock.close()


async def stop_workers(workers: list[WorkerProcess], *, patient: bool) -> None:
    """End every worker: `patient`, by closing their sockets and giving them a moment to leave (a finished run);
    else (a stopped run) at once. Every one is reaped; none outlives the call."""
    for worker in workers:
        worker.close()
    if patient:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EXIT_SETTLE_S
        while not all(worker.reap() for worker in workers) and loop.time() < deadline:
            await asyncio.sleep(0.01)
    for worker in workers:
        worker.kill()


def _serve(sock: socket.socket, play: Callable[[Any], Any], parent: int) -> None:
    """In the worker: play each batch that comes, in order, until the socket ends."""
    become_worker(parent)
    sock.setblocking(True)
    fd = sock.fileno()
    while True:
        request = read_frame(fd)
        if request is None:
            return
        try:
            answer: tuple = ("played", play(pickle.loads(request)))
        except BaseException as exc:
            answer = ("raised", f"{type(exc).__name__}: {exc}"[:500])
        try:
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            data = pickle.dumps(("raised", f"its results could not be sent back ({type(exc).__name__}: {exc})"[:500]))
        write_frame(fd, data)
