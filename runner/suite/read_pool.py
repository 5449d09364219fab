"""Reading a long list of suite files on every core: the list shared out, one share per process.

Collecting 10,000 suite files takes seconds of CPU, all before the first case runs, so a second core
idling through it costs the run that much wall time. Once the cases a run keeps loaded are read (in the
run's process: runner.run.case_index), the files left are shared out: this process reads one share and
forked processes read the others, sending back what `keep` made of their cases (small references, never
loaded cases), each over a socket of its own (runner.util.forked). The outcomes come back in file order, the same as one process would have made them.

Forking is only done when it is safe and pays: a long list, more than one usable CPU, no other thread in
this process (a fork copies the locks other threads hold). When a reading process dies, at any moment (while
it sends a part, too), the parts it did not send whole are read here instead. Ctrl-C reaches the whole process group: the readers ignore it and this process,
which decides what a stop means (runner.util.signals), ends them on its way out.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..util.forked import become_worker, fork_with_socket, kill_and_reap, read_frame, write_frame

Read = Callable[..., Any]  # read(path, explicit, may_hold=True) -> the file's outcome (runner.suite.load.FileReading)

MIN_FILES = 400  # below this, forking costs more than the second core saves
PART = 500  # files a reader reads and sends back at a time
_reading: Read | None = None  # the readers' copy (set before the fork, so each inherits it)


def read_in_processes(reading: Read, files: Sequence[tuple[Path | str, bool]], processes: int) -> list | None:
    """Every file's outcome in order, read by `processes` processes (this one included); None when reading
    them in this process alone is better (a short list, one CPU) or the only safe way (threads, no fork)."""
    global _reading
    processes = min(processes, _usable_cpus())
    if processes < 2 or len(files) < MIN_FILES or not _can_fork():
        return None
    _reading = reading
    readers: list[_Reader] = []
    try:
        # Process n reads files n, n + processes, ...: suites and their transcripts (listed apart, the
        # transcripts far quicker to read) are then shared out evenly. The readers' shares go in parts, so
        # that no reader holds (and sends at once) the outcomes of thousands of files.
        for n in range(1, processes):
            share = list(range(n, len(files), processes))
            parts = [share[start:start + PART] for start in range(0, len(share), PART)]
            readers.append(_Reader.fork(files, parts, readers))
        for reader in readers:  # threads only once every reader is forked
            reader.receive_in_background()
        outcomes: list = [None] * len(files)
        for i in range(0, len(files), processes):
            outcomes[i] = reading(*files[i])
        for reader in readers:
            received = reader.received()
            for part, read in zip(reader.parts, received, strict=False):  # fewer when it died: read below
                for i, outcome in zip(part, read, strict=True):
                    outcomes[i] = outcome
            for part in reader.parts[len(received):]:  # the reader died (killed, out of memory): read here
                for i in part:
                    outcomes[i] = reading(*files[i], may_hold=False)
        return outcomes
    finally:
        _reading = None
        for reader in readers:  # interrupted: the readers still at work are ended, not waited for
            reader.end()
        _threads_gone()  # the run may fork its replay pool next, which it does only with no other thread


class _Reader:
    """A forked process reading its parts of the list, and the thread here that receives each part as it comes
    over its own socket (runner.util.forked: a reader killed mid-message ends only its own stream)."""

    def __init__(self, pid: int, sock: socket.socket, parts: list[list[int]]):
        self.pid, self.sock, self.parts = pid, sock, parts
        self._received: list = []
        self._thread: threading.Thread | None = None

    @classmethod
    def fork(cls, files: Sequence[tuple[Path | str, bool]], parts: list[list[int]],
             siblings: list[_Reader]) -> _Reader:
        def read_parts(sock: socket.socket, parent: int) -> None:
            become_worker(parent)
            sock.setblocking(True)
            for part in parts:
                write_frame(sock.fileno(), pickle.dumps(_read_share([files[i] for i in part]), pickle.HIGHEST_PROTOCOL))

        pid, sock = fork_with_socket(read_parts, [sibling.sock for sibling in siblings])
        return cls(pid, sock, parts)

    def receive_in_background(self) -> None:
        self._thread = threading.Thread(target=self._receive, name="evalrun-suite-reader", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        try:
            while len(self._received) < len(self.parts):
                frame = read_frame(self.sock.fileno())
                if frame is None:
                    return
                self._received.append(pickle.loads(frame))
        except Exception:
            return

    def received(self) -> list:
        """The parts that came whole, in order, once the reader is done (or dead)."""
        if self._thread is not None:
            self._thread.join()  # a signal interrupts this wait (runner.util.signals)
        return self._received

    def end(self) -> None:
        kill_and_reap(self.pid)  # a reader that finished is gone already; one still at work is ended
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the receiving thread, should it still wait
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join()
        self.sock.close()


def _read_share(files: Sequence[tuple[Path | str, bool]]) -> list:
    assert _reading is not None, "the readers are forked from read_in_processes"
    return [_reading(path, explicit, may_hold=False) for path, explicit in files]


def _threads_gone(patience_s: float = 0.05) -> None:
    """Wait a moment for the pool's own thread to be gone from the system too (its join returns first)."""
    deadline = time.monotonic() + patience_s
    while _threads() > 1 and time.monotonic() < deadline:
        time.sleep(0.002)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods() and _threads() == 1
