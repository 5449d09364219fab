"""SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) during a run: from the first file collected to the last byte of the report, a
signal never kills evalrun mid-way. What it does depends on how far the run got:

- collecting (reading and checking the suites, which takes seconds for 10,000 files): collection is
  abandoned (`CollectionInterrupted`) and the run ends saying so, with exit 2; nothing has run yet.
- starting (the run folder being opened): the run is asked to stop before its first case.
- running: the run is asked to stop; nothing new starts, the cases in flight are cancelled, and the
  report of what finished is written.
- finishing (the cases have ended, the report is being written): the signal is ignored, so the
  report is not cut short.

Held for the whole run, so there is no moment between two phases where a signal would fall back to
Python's default and end the process with no word; and held against libraries that take them over while they
start (Ray's init installs a SIGTERM handler that exits the process): `held_against_libraries`.
"""
from __future__ import annotations

import asyncio
import functools
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class CollectionInterrupted(BaseException):
    """A signal arrived while the suites were being collected. A BaseException, as KeyboardInterrupt
    is: a reader's `except Exception` (which turns a broken file into a diagnostic) must not swallow it."""

    def __init__(self, name: str):
        super().__init__(name)
        self.signal_name = name


class RunSignals:
    def __init__(self, enabled: bool, stop=None):
        self.stop = stop  # runner.run.execute.Stop (request(reason, interrupted=True)); set before the run starts
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.phase = "collecting"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.collection_interrupted: str | None = None  # the signal that came while collecting, if one did
        self._previous: dict = {}
        self._unraisable = sys.unraisablehook

    def __enter__(self) -> RunSignals:
        if self.enabled:
            self._previous = {sig: signal.signal(sig, self._received) for sig in SIGNALS}
            self._unraisable = sys.unraisablehook
            sys.unraisablehook = self._unraisable_hook
        return self

    def __exit__(self, *exc_info) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        if self._previous:
            sys.unraisablehook = self._unraisable

    def _unraisable_hook(self, unraisable: Any) -> None:
        """A CollectionInterrupted swallowed where it landed is not printed as a stack: `collected` raises it again."""
        if not isinstance(unraisable.exc_value, CollectionInterrupted):
            self._unraisable(unraisable)

    def collected(self) -> None:
        """Collection is over: the run moves on to starting, unless a signal came while collecting and its
        CollectionInterrupted was swallowed where it was raised; it is raised again here. (A signal between
        the two lines below finds the phase still collecting, and raises it itself.)"""
        if self.collection_interrupted is not None:
            raise CollectionInterrupted(self.collection_interrupted)
        self.phase = "starting"

    def _received(self, number: int, frame) -> None:
        name = signal.Signals(number).name
        if self.phase == "collecting":
            # Kept, for `collected`: the exception is raised wherever the main thread is, and some places swallow
            # it ("Exception ignored in ..."): an at-fork hook as the read pool forks, a __del__, a weakref callback
            self.collection_interrupted = name
            raise CollectionInterrupted(name)
        if self.phase == "finishing":
            return
        loop = self.loop
        if loop is not None and loop.is_running():  # not from inside the loop's own code: schedule it
            loop.call_soon_threadsafe(functools.partial(self.stop.request, name, interrupted=True))
        else:  # no loop runs yet: no case has started, and none will
            self.stop.request(name, interrupted=True)


@contextmanager
def held_against_libraries() -> Iterator[None]:
    """While a library starts or stops: its calls to `signal.signal` for SIGNALS are not obeyed (the handler in
    place stays, and is what they are told was there), and every handler of SIGNALS is set again afterwards,
    which also replaces any the library installed in C (Ray's core prints a stack for a SIGTERM, then exits).
    Meanwhile SIGNALS are blocked in this thread, and so in the threads the library starts (they inherit the
    mask): Ray's shutdown sets SIGTERM back to its default in C for about a second, and a signal arriving then
    would end the process with no report; blocked, it waits, and is handled once the handlers are back. A no-op
    outside the main thread, where no handler can be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {sig: signal.getsignal(sig) for sig in SIGNALS}
    real = signal.signal

    def refuse(signum, handler):  # the signature of signal.signal
        if signum in kept:
            return kept[signum]
        return real(signum, handler)

    signal.signal = refuse
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.signal = real
        for sig, handler in kept.items():
            if handler is not None:  # None: set outside Python, nothing to set back
                real(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what arrived meanwhile is handled now


@contextmanager
def stops_like_ctrl_c() -> Iterator[None]:
    """For the length of a command: SIGTERM and SIGHUP raise KeyboardInterrupt, as Ctrl-C does, where nothing else
    handles them; so every command, and a run before and after the part `RunSignals` holds (printing its summary,
    sending its spans), ends on them as on Ctrl-C ('interrupted', exit 2), never killed mid-write without a word."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.default_int_handler) for sig in SIGNALS
                if sig != signal.SIGINT and signal.getsignal(sig) is signal.SIG_DFL}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class InterruptBetweenSteps:
    """For one step that runs evalrun's own code on an event loop (pytest playing one case): the signals that would
    raise KeyboardInterrupt (SIGINT, and any other whose handler is Python's default one) do not raise it in the
    middle of that code, where a guard that turns whatever an agent or a check raises into the case's error would
    take it for one, and the run would go on; they cancel the step's task instead, and KeyboardInterrupt is raised
    once the step is over, when the handlers are back. `run(loop, coroutine)` plays the step; a no-op guard outside
    the main thread, where no handler can be set."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, loop: asyncio.AbstractEventLoop, coroutine):
        if threading.current_thread() is not threading.main_thread():
            return loop.run_until_complete(coroutine)
        self._loop, self._task = loop, loop.create_task(coroutine)
        previous = {sig: signal.signal(sig, self._received) for sig in SIGNALS
                    if signal.getsignal(sig) is signal.default_int_handler}
        try:
            return loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            if self.received is None:
                raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.received is not None:  # a signal came, whether or not the step had ended by then
                raise KeyboardInterrupt(signal.Signals(self.received).name)

    def _received(self, number: int, frame) -> None:
        if self.received is None:
            self.received = number
            self._loop.call_soon_threadsafe(self._task.cancel)  # type: ignore[union-attr]
