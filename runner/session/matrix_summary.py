"""A matrix run's summary per variant, read back from the run's saved results when it finishes: each variant's
tally (its counts, pass rate, cost and tokens, its own verdict) and the cases whose variants disagree. It becomes
report.json's `matrix` object (notes/s2/CONTRACT_MATRIX.md) and the per-variant gates of the run's verdict
(runner.results.verdict)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..results.models import CASE_STATUSES
from ..results.stats import wilson_interval
from ..results.summary import Tally, repeated_status
from .matrix import Matrix

SEVERITY = {"error": 0, "unscored": 1, "failed": 2, "skipped": 3, "passed": 4}  # worst first


class VariantTallies:
    """Each variant's tally, cost and tokens, and every case's statuses by variant (the grid's cells)."""

    def __init__(self, matrix: Matrix, refs: Sequence[Any], repeats: int, policy: str):
        self.matrix, self.policy = matrix, policy
        self.tallies = {v.id: Tally([ref.id for ref in refs if ref.variant is v], repeats=repeats, policy=policy)
                        for v in matrix.variants}
        self.costs: dict[str, float | None] = dict.fromkeys(self.tallies)
        self.tokens: dict[str, int | None] = dict.fromkeys(self.tallies)
        self.cells: dict[str, dict[str, list[str]]] = {}  # case id -> variant -> the statuses of its results
        self.summaries: dict[str, Any] = {}

    def add(self, result: Any, case_id: str) -> None:
        variant = result.variant
        self.tallies[variant].add(result, case_id)
        self.cells.setdefault(result.id, {}).setdefault(variant, []).append(result.status)
        usage = result.model_usage
        if usage is not None:
            if usage.cost_usd is not None:
                self.costs[variant] = (self.costs[variant] or 0.0) + usage.cost_usd
            self.tokens[variant] = (self.tokens[variant] or 0) + usage.prompt_tokens + usage.completion_tokens

    def settle(self, **summary_options: Any) -> list[tuple[str, float | None, int]]:
        """Each variant's own summary and verdict (the run's options: min_pass_rate, the stop, ...); returns what
        the run's verdict gates per variant: (variant id, pass rate, failed cases)."""
        for variant_id, tally in self.tallies.items():
            self.summaries[variant_id] = tally.summary(**summary_options)
        return [(vid, s.pass_rate, s.failed) for vid, s in self.summaries.items()]

    def record(self) -> dict:
        """report.json's `matrix` object."""
        variants = []
        for variant in self.matrix.variants:
            s = self.summaries[variant.id]
            decided = s.passed + s.failed
            variants.append({
                "id": variant.id, "assignments": dict(variant.assignments),
                "counts": {status: getattr(s, status) for status in CASE_STATUSES}, "total": s.total,
                "pass_rate": s.pass_rate,
                "pass_rate_interval": list(wilson_interval(s.passed, decided)) if decided else None,
                "cost_usd": None if (cost := self.costs[variant.id]) is None else round(cost, 8),
                "tokens": self.tokens[variant.id],
                "verdict": {"exit_code": s.exit_code, "reason": s.exit_reason}})
        return {"axes": self.matrix.axes, "variants": variants, "disagreements": self.disagreements()}

    def disagreements(self) -> list[str]:
        """The case ids whose status differs across variants (a variant that did not run the case counts), the
        worst first: a case with an error before one with a failure; collection order within."""
        ids = [v.id for v in self.matrix.variants]
        found = []
        for order, (case_id, by_variant) in enumerate(self.cells.items()):
            statuses = [repeated_status(by_variant[v], self.policy) if v in by_variant else "not run" for v in ids]
            if len(set(statuses)) > 1:
                found.append((min(SEVERITY.get(s, -1) for s in statuses), order, case_id))
        return [case_id for *_, case_id in sorted(found)]


def tally_variants(matrix: Matrix, folder: Any, refs: Sequence[Any], repeats: int, policy: str) -> VariantTallies:
    """Every saved result of the run, read back from its results.jsonl (one at a time), tallied by variant."""
    tallies = VariantTallies(matrix, refs, repeats, policy)
    for (position, _), result in folder.saved_results():
        if result.variant in tallies.tallies:
            tallies.add(result, refs[position].id)
    return tallies
