"""The cases mutated on every core (-j): worker processes forked with the collection and the mutator already in
memory, each handed batches of case positions; outcomes are appended in the cases' order as batches finish, so
a stop (Ctrl-C, SIGTERM) keeps what finished. Workers ignore SIGINT: this process decides what a stop means,
and on a stop it ends them at once."""
from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor

from ..run.case_index import CaseRef
from .case_run import CaseMutator
from .outcome import CaseMutation

_forked: tuple[CaseMutator, list[CaseRef]] | None = None  # set before the workers fork; each inherits it


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _mutate_batch(positions: range) -> list[list[CaseMutation]]:
    assert _forked is not None
    mutator, refs = _forked
    return [mutator.mutate(refs[position]) for position in positions]


def mutate_cases(refs: list[CaseRef], mutator: CaseMutator, jobs: int, done: list[CaseMutation]) -> None:
    """Every case's outcomes appended to `done`, in order; KeyboardInterrupt leaves there what finished."""
    global _forked
    if jobs <= 1 or len(refs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for ref in refs:
            done.extend(mutator.mutate(ref))
        return
    size = max(1, min(64, len(refs) // (jobs * 4) or 1))
    batches = [range(start, min(start + size, len(refs))) for start in range(0, len(refs), size)]
    _forked = (mutator, refs)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(batches)), mp_context=multiprocessing.get_context("fork"),
                               initializer=_ignore_interrupts)
    try:
        for batch in pool.map(_mutate_batch, batches):
            for case in batch:
                done.extend(case)
    except BaseException:
        # a stop: the workers' batches are of no use now; ending them is quicker than waiting for them
        for process in list(getattr(pool, "_processes", {}).values()):  # CPython keeps them here, by pid
            process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        _forked = None
    pool.shutdown(wait=True)
