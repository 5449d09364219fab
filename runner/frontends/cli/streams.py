"""The standard streams of a command, made safe before anything runs: what the console says is best-effort, the
work and its exit code are not.

A command started with a standard stream closed (`evalrun suites 2>&-`, a service manager, a cron job) finds
Python's `sys.stderr` (or stdout, stdin) set to None, and its file descriptor free: the next file opened (the
run's results.jsonl) would get it, and whatever C code or a child process writes to "stderr" would land in it.
Each closed one is opened on /dev/null, and given a Python stream again. stderr is then wrapped so that a
write to it that fails (the reader of its pipe gone) is dropped instead of ending the command: it is where
evalrun would have said so, and nothing else depends on it. stdout is left as it is: the run's console
notices when it is lost and says so on stderr (runner.report.console).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def usable_standard_streams() -> Iterator[None]:
    """Fill closed standard descriptors with /dev/null and make sys.stdin/stdout/stderr usable for the length of
    the command (the Python streams are put back after, for a caller that ran `main` in its own process)."""
    kept = sys.stdin, sys.stdout, sys.stderr
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        _fill_if_closed(fd, mode)
    if sys.stdin is None:
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's stream, open for its life
    if sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115 - the process's stream, open for its life
    if sys.stderr is None:
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115 - the process's stream, open for its life
    sys.stderr = BestEffortStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = kept


def _fill_if_closed(fd: int, mode: int) -> None:
    try:
        os.fstat(fd)
        return
    except OSError:
        pass
    try:
        opened = os.open(os.devnull, mode)  # the lowest free descriptor: this one, the lower ones being open
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)
    except OSError:
        pass


class BestEffortStream:
    """A text stream whose writes never fail: once one does (a closed pipe, a full disk), the rest are dropped and
    its descriptor points at /dev/null, so that Python's own flush at exit cannot fail either."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.lost = False

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self._stream.write(text)
            except (OSError, ValueError):
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lose()

    def isatty(self) -> bool:
        try:
            return not self.lost and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def _lose(self) -> None:
        self.lost = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str) -> Any:  # fileno, encoding, buffer, ...: the stream's own
        return getattr(self._stream, name)
