"""A signal while the suites are collected ends the collection even where its exception was swallowed: Python raises
a signal handler's exception wherever the main thread is, and an at-fork hook (the read pool forks readers), a
__del__ or a weakref callback only prints it ("Exception ignored in ...") and goes on. Seen on a fresh clone: a
SIGTERM landed in logging's after-fork hook, the 6,000 cases ran, and the run exited 3 with a stack on stderr."""
from __future__ import annotations

import gc
import signal

import pytest

from runner.util.signals import CollectionInterrupted, RunSignals


def _signal_into(swallowed_by) -> None:
    """SIGTERM handled inside `swallowed_by`'s code, as one that swallows what is raised there."""
    swallowed_by(lambda: signal.raise_signal(signal.SIGTERM))


def _except_base_exception(send) -> None:
    try:
        send()
    except BaseException:  # a library that takes everything (as the at-fork hooks' caller does)
        pass


class _SendsOnDeletion:
    def __init__(self, send):
        self.send = send

    def __del__(self):  # what __del__ raises is "ignored": printed through sys.unraisablehook
        self.send()


def _a_finaliser(send) -> None:
    _SendsOnDeletion(send)
    gc.collect(0)


@pytest.mark.parametrize("swallowed_by", [_except_base_exception, _a_finaliser])
def test_a_signal_whose_exception_was_swallowed_while_collecting_ends_the_collection_after_it(swallowed_by, capsys):
    with RunSignals(True) as signals:
        assert signals.enabled  # the handlers are set: else SIGTERM would end this test process
        _signal_into(swallowed_by)
        with pytest.raises(CollectionInterrupted, match="SIGTERM"):
            signals.collected()
        assert signals.phase == "collecting"
    assert capsys.readouterr().err == ""  # no "Exception ignored" stack: the run says it once, in its words


class _Stop:
    def __init__(self):
        self.requests = []

    def request(self, reason, *, interrupted):
        self.requests.append((reason, interrupted))


def test_collection_without_a_signal_moves_the_run_on_to_starting_where_a_signal_asks_the_run_to_stop():
    with RunSignals(True, stop=_Stop()) as signals:
        signals.collected()
        assert signals.phase == "starting"
        signal.raise_signal(signal.SIGTERM)  # nothing raises: no loop runs yet, the stop is asked for at once
    assert signals.stop.requests == [("SIGTERM", True)]


def test_the_unraisable_hook_is_put_back_and_passes_other_exceptions_on():
    import sys

    before = sys.unraisablehook
    seen = []
    sys.unraisablehook = seen.append
    try:
        with RunSignals(True):
            _a_finaliser(lambda: (_ for _ in ()).throw(ValueError("not ours")))
        assert sys.unraisablehook == seen.append  # (a bound method is made anew at each look)
        assert [type(u.exc_value) for u in seen] == [ValueError]
    finally:
        sys.unraisablehook = before
