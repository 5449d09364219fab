"""Reading a long list of suite files on every core: the list shared out, one share per process.

Collecting 10,000 suite files takes seconds of CPU, all before the first case runs, so a second core
idling through it costs the run that much wall time. Once the cases a run keeps loaded are read (in the
run's process: runner.run.case_index), the files left are shared out: this process reads one share and
forked processes read the others, sending back what `keep` made of their cases (small references, never
loaded cases). The outcomes come back in file order, the same as one process would have made them.

Forking is only done when it is safe and pays: a long list, more than one usable CPU, no other thread in
this process (a fork copies the locks other threads hold). When a reading process dies, its share is
read here instead. Ctrl-C reaches the whole process group: the readers ignore it and this process,
which decides what a stop means (runner.signals), ends them on its way out.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

Read = Callable[..., Any]  # read(path, explicit, may_hold=True) -> the file's outcome (runner.suite.load.FileReading)

MIN_FILES = 400  # below this, forking costs more than the second core saves
PART = 500  # files a reader reads and sends back at a time
_reading: Optional[Read] = None  # the readers' copy (set before the fork, so each inherits it)


def read_in_processes(reading: Read, files: Sequence[tuple[Path, bool]], processes: int) -> Optional[list]:
    """Every file's outcome in order, read by `processes` processes (this one included); None when reading
    them in this process alone is better (a short list, one CPU) or the only safe way (threads, no fork)."""
    global _reading
    processes = min(processes, _usable_cpus())
    if processes < 2 or len(files) < MIN_FILES or not _can_fork():
        return None
    _reading = reading
    pool = ProcessPoolExecutor(processes - 1, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_reader)
    finished = False
    try:
        # Process n reads files n, n + processes, ...: suites and their transcripts (listed apart, the
        # transcripts far quicker to read) are then shared out evenly. The readers' shares go in parts, so
        # that no reader holds (and sends at once) the outcomes of thousands of files.
        futures = []
        for n in range(1, processes):
            share = list(range(n, len(files), processes))
            for start in range(0, len(share), PART):
                part = share[start:start + PART]
                futures.append((part, pool.submit(_read_share, [files[i] for i in part])))
        outcomes: list = [None] * len(files)
        for i in range(0, len(files), processes):
            outcomes[i] = reading(*files[i])
        for part, future in futures:
            try:
                read = future.result()
            except BrokenProcessPool:  # a reader died (killed, out of memory): its part is read here
                read = [reading(*files[i], may_hold=False) for i in part]
            for i, outcome in zip(part, read):
                outcomes[i] = outcome
        finished = True
        return outcomes
    finally:
        _reading = None
        if not finished:  # interrupted: the readers still at work are ended, not waited for
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                try:
                    process.kill()
                except (OSError, ValueError):
                    pass
        pool.shutdown(wait=True, cancel_futures=True)
        _threads_gone()  # the run may fork its replay pool next, which it does only with no other thread


def _read_share(files: Sequence[tuple[Path, bool]]) -> list:
    assert _reading is not None, "the readers are forked from read_in_processes"
    return [_reading(path, explicit, may_hold=False) for path, explicit in files]


def _start_reader() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the collecting process decides what Ctrl-C means
    for name in ("SIGTERM", "SIGHUP"):  # not the run's handlers, inherited with the fork: just end
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if sys.platform == "linux":  # and a reader never outlives the collecting process, even killed outright
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


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
