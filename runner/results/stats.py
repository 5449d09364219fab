"""Small statistics for reports: pure functions, no dependencies."""
from __future__ import annotations

import math


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a pass rate `passed`/`n` (95% with the default z).

    Unlike rate ± z·sqrt(rate(1-rate)/n) it stays inside [0, 1] and is not zero-width at 0 or n
    passes, which matters for the small suites people run. (0.0, 1.0) when n is 0: nothing is known.
    """
    if n < 0 or passed < 0 or passed > n:
        raise ValueError(f"need 0 <= passed <= n, got passed={passed}, n={n}")
    if n == 0:
        return 0.0, 1.0
    rate = passed / n
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided p-value of the exact McNemar test for paired outcomes.

    `b` and `c` are the discordant pairs (cases that went pass → fail and fail → pass). Under "the
    change makes no difference" each flip is equally likely to go either way, so min(b, c) is
    Binomial(b + c, 1/2); the p-value is twice its lower tail, capped at 1. Computed exactly with
    integers (math.comb), so it is right for the small counts that matter. 1.0 when nothing flipped.
    """
    if b < 0 or c < 0:
        raise ValueError(f"need non-negative counts, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k runs, drawn without replacement from n runs of which c passed,
    passes: 1 - C(n-c, k) / C(n, k) (the unbiased estimator of Chen et al., 2021)."""
    _check_runs(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """τ-bench's pass^k: the chance that all of k runs, drawn without replacement from n runs of which c
    passed, pass: C(c, k) / C(n, k). Reliability, where pass@k is capability; at k = n it is 1 only when
    every run passed."""
    _check_runs(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_runs(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def paired_bootstrap_interval(old: list[float], new: list[float], *, resamples: int = 2000, seed: int = 0,
                              level: float = 0.95) -> tuple[float, float, float]:
    """(mean difference new - old, low, high): a percentile bootstrap interval of the difference of two
    paired means. The cases are resampled with replacement, each keeping its own pair (so what a case
    makes easy or hard cancels out); seeded, so the same data give the same interval every time."""
    import random

    if len(old) != len(new):
        raise ValueError("paired samples must have the same length")
    n = len(old)
    if n == 0:
        return 0.0, 0.0, 0.0
    diffs = [b - a for a, b in zip(old, new, strict=True)]
    draw = random.Random(seed)
    means = sorted(sum(diffs[draw.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[math.floor(tail * (resamples - 1))]
    high = means[math.ceil((1 - tail) * (resamples - 1))]
    return sum(diffs) / n, low, high
