"""Checking saved cases against the report models while report.json is read (saved_stream): here, or in
a forked child process so that a large report is read on one core and checked on the other.

The child gets each case's JSON text through a pipe and validates it with pydantic's own JSON parser,
strictly, as `saved.load_report` validates the parsed case: only text the reader found plain (no NaN,
no Infinity, no number that overflows a float, where load_report's parsing differs from a JSON
parser's) goes there; the rest is checked here, on the parsed data. Its verdict comes at the end
(`close`): the caller has written its file by then, and discards it when the verdict is no.

A child is forked only from a process running one thread (a fork copies no other thread, and a lock
another one held would stay held in the child) and on a platform that has fork; otherwise, and for a
small report, every case is checked here.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

from pydantic import ValidationError

FORK_FROM_BYTES = 8 << 20  # smaller reports are checked here: a fork would cost more than it saves
_BATCH = 1 << 20


class Checker:
    """Validates every case in this process. `check` raises ValueError for a case that is not valid."""

    def __init__(self) -> None:
        from ..results.models import CaseResult

        self.model = CaseResult

    def check(self, data: Any, text: bytes | None) -> None:
        """`text`: the case's JSON when it is plain (the child may validate that instead of `data`)."""
        try:
            self.model.model_validate(data, strict=True)
        except ValidationError:
            raise ValueError("a case is not valid") from None

    def close(self) -> None:
        """Raises ValueError when a case checked elsewhere was not valid."""

    def abandon(self) -> None:
        """Stops checking (the reading failed): nothing is waited for."""


def flush_before_fork() -> None:
    """Empty stdout's and stderr's buffers, so that a forked child never writes them a second time."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


class ForkedChecker(Checker):
    """Plain cases are validated by a forked child, the others here."""

    def __init__(self) -> None:
        super().__init__()
        texts_read, self._texts_fd = os.pipe()
        verdict_fd, verdict_write = os.pipe()
        flush_before_fork()
        self.pid = os.fork()
        if self.pid == 0:  # the child: validate, answer, and leave without running anything of the parent's
            code = 1
            try:
                os.close(self._texts_fd)
                os.close(verdict_fd)
                code = _validate_texts(self.model, texts_read, verdict_write)
            finally:
                os._exit(code)
        os.close(texts_read)
        os.close(verdict_write)
        self._verdict_fd = verdict_fd
        self._pending: list[bytes] = []
        self._size = 0

    def check(self, data: Any, text: bytes | None) -> None:
        if text is None:
            super().check(data, None)
            return
        self._pending += [len(text).to_bytes(8, "big"), text]
        self._size += len(text)
        if self._size >= _BATCH:
            self._send()

    def _send(self) -> None:
        data = b"".join(self._pending)
        self._pending, self._size = [], 0
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._texts_fd, view):]
            except BrokenPipeError:  # the child is gone: its verdict (or its absence) says why at close()
                return

    def close(self) -> None:
        try:
            self._send()
        finally:
            os.close(self._texts_fd)
        try:
            verdict = os.read(self._verdict_fd, 1)
        finally:
            os.close(self._verdict_fd)
            os.waitpid(self.pid, 0)
        if verdict != b"1":
            raise ValueError("a case is not valid" if verdict == b"0" else "the checking process ended early")

    def abandon(self) -> None:
        for fd in (self._texts_fd, self._verdict_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def _validate_texts(model: Any, texts_fd: int, verdict_fd: int) -> int:
    valid = True
    with os.fdopen(texts_fd, "rb", buffering=_BATCH) as texts:
        while True:
            head = texts.read(8)
            if len(head) < 8:
                break
            text = texts.read(int.from_bytes(head, "big"))
            if valid:  # after a bad one the rest is only drained, so that the reader never waits on a full pipe
                try:
                    model.model_validate_json(text, strict=True)
                except ValueError:  # ValidationError, or JSON pydantic reads otherwise (a lone surrogate)
                    valid = False
    os.write(verdict_fd, b"1" if valid else b"0")
    return 0


def checker_for(size: int) -> Checker:
    """A checker for a report of `size` bytes: forked when that is safe and worth it."""
    if size >= FORK_FROM_BYTES and hasattr(os, "fork") and threading.active_count() == 1:
        try:
            return ForkedChecker()
        except OSError:  # no process or pipe to spare: check here
            pass
    return Checker()
