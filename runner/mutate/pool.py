"""The cases mutated on every core (-j): worker processes forked with the collection and the mutator already in
memory, each handed batches of case positions; results come back in the cases' order, whatever finished first."""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from .case_run import CaseMutator
from .outcome import CaseMutation
from ..run.case_index import CaseRef

_forked: Optional[tuple[CaseMutator, list[CaseRef]]] = None  # set before the workers fork; each inherits it


def _mutate_batch(positions: range) -> list[list[CaseMutation]]:
    assert _forked is not None
    mutator, refs = _forked
    return [mutator.mutate(refs[position]) for position in positions]


def mutate_cases(refs: list[CaseRef], mutator: CaseMutator, jobs: int) -> list[CaseMutation]:
    global _forked
    if jobs <= 1 or len(refs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [outcome for ref in refs for outcome in mutator.mutate(ref)]
    size = max(1, min(64, len(refs) // (jobs * 4) or 1))
    batches = [range(start, min(start + size, len(refs))) for start in range(0, len(refs), size)]
    _forked = (mutator, refs)
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(batches)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            return [outcome for batch in pool.map(_mutate_batch, batches) for case in batch for outcome in case]
    finally:
        _forked = None
