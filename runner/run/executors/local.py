"""The local executor: every case as an asyncio task in this process, at most -j at a time."""
from __future__ import annotations

from ..execute import run_cases
from .base import Executor, Work


class LocalExecutor(Executor):
    name = "local"

    async def run(self, work: Work) -> None:
        if work.auto is not None:  # --repeat auto: rounds of repeats decided as runs finish
            from ..auto_schedule import run_cases_auto

            await run_cases_auto(list(work.refs), work.runner, work.save, work.stop, work.concurrency, work.auto)
            return
        await run_cases(list(work.refs), work.runner, work.save, work.stop, work.concurrency, work.repeats)
