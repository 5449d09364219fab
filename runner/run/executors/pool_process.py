"""One worker process of the replay pool (runner.run.executors.replay_pool), forked from the run's process, and
the channel to it: a Unix socket pair of its own.

Each worker has its own socket, never shared: whatever a worker does, and however it ends, it can cut short
only its own messages. A worker that dies mid-message (killed while it writes a batch's results, say) shows as
the end of its socket in the middle of a frame, at once; it never leaves a half-written message in a channel
other workers write to, nor a lock taken (concurrent.futures' pool shares one result pipe and its lock among
all workers: a worker killed while it wrote there hung the run for ever). The run's process reads every
socket on its event loop, so a signal, a stop or a dead worker is seen as it happens.

A frame is 8 bytes of length, then a pickle: a batch of jobs to the worker, ("played", what the batch gave) or
("raised", why) back. The worker ends when its socket does.
"""
from __future__ import annotations

import asyncio
import os
import pickle
import signal
import socket
import sys
from typing import Any, Callable, Optional

HEADER = 8  # bytes of a frame's length
EXIT_SETTLE_S = 1.0  # after its socket ended: how long a worker may take to be gone before it is killed


class WorkerProcess:
    """A forked worker that answers each batch sent with `play(batch)`; `events` gets (this worker, answer)
    for each answer and (this worker, None) once its socket ends (the worker died or closed it)."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid = pid
        self.sock = sock
        self.in_flight: list[Any] = []  # the batches sent and not answered, oldest (the one it plays) first
        self.status: Optional[int] = None  # its wait status, once reaped
        self._writer: Optional[asyncio.StreamWriter] = None
        self._listener: Optional[asyncio.Task] = None

    @classmethod
    def fork(cls, play: Callable[[Any], Any], siblings: list["WorkerProcess"]) -> "WorkerProcess":
        """Fork a worker serving `play`. `siblings`: the workers already running, whose sockets it must not
        keep open (a copy held elsewhere would hide the end of theirs)."""
        ours, theirs = socket.socketpair()
        parent = os.getpid()
        for stream in (sys.stdout, sys.stderr):  # what is buffered here would be written twice, once by the child
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid == 0:  # the worker: it never returns into the caller's frames (an event loop runs there)
            code = 0
            try:
                ours.close()
                for sibling in siblings:
                    sibling.sock.close()
                _serve(theirs, play, parent)
            except BaseException:  # noqa: BLE001 - nothing of it may reach the run's process; the run sees it die
                code = 70
            finally:
                os._exit(code)
        theirs.close()
        return cls(pid, ours)

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
                except Exception as exc:  # noqa: BLE001 - what the worker sent is this batch's error
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

    async def ended(self) -> Optional[int]:
        """Once its socket ended: the worker's exit status (os.waitstatus_to_exitcode's), waited for a moment,
        then killed and reaped if it still runs (a worker that closed its socket itself)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EXIT_SETTLE_S
        while not self.reap() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        if self.status is None:
            self.kill()
        return self.exit_code

    @property
    def exit_code(self) -> Optional[int]:
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)

    def reap(self) -> bool:
        """Whether the worker is gone (reaped now or before), never blocking."""
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else: gone all the same
                pid, status = self.pid, 0
            if pid == self.pid:
                self.status = status
        return self.status is not None

    def kill(self) -> None:
        """End it now (SIGKILL) and reap it."""
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                _, self.status = os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                self.status = 0
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


# ---------------------------------------------------------------------------------- in the worker process

def _serve(sock: socket.socket, play: Callable[[Any], Any], parent: int) -> None:
    _become_worker(parent)
    sock.setblocking(True)
    fd = sock.fileno()
    while True:
        header = _read_exactly(fd, HEADER)
        if header is None:
            return
        payload = _read_exactly(fd, int.from_bytes(header, "big"))
        if payload is None:
            return
        try:
            answer: tuple = ("played", play(pickle.loads(payload)))
        except BaseException as exc:  # noqa: BLE001 - a batch that raised: its cases are errors that say so
            answer = ("raised", f"{type(exc).__name__}: {exc}"[:500])
        try:
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001
            data = pickle.dumps(("raised", f"its results could not be sent back ({type(exc).__name__}: {exc})"[:500]))
        _write_all(fd, len(data).to_bytes(HEADER, "big") + data)


def _become_worker(parent: int) -> None:
    """Signals: Ctrl-C and a hang-up reach the terminal's whole process group, and the run's process decides what
    they mean (it ends its workers); SIGTERM sent to a worker ends it. A worker never outlives the run's process,
    even one killed outright."""
    try:
        signal.set_wakeup_fd(-1)  # the run's process's, inherited: a signal here must not wake its loop
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the run's process ended before the line above took effect
        os._exit(0)


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
