import itertools
from fractions import Fraction

import pytest

from runner.results.stats import mcnemar_exact, paired_bootstrap_interval, pass_at_k, pass_hat_k, wilson_interval


@pytest.mark.parametrize("passed,n,low,high", [
    # reference values: Newcombe (1998), Table I, and the closed form computed independently
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (20, 20, 0.8389, 1.0),
    (1, 2, 0.0945, 0.9055),
])
def test_known_values(passed, n, low, high):
    got = wilson_interval(passed, n)
    assert got[0] == pytest.approx(low, abs=5e-5)
    assert got[1] == pytest.approx(high, abs=5e-5)


def test_no_cases_means_nothing_is_known():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_interval_holds_the_rate_and_narrows_with_n():
    small = wilson_interval(8, 10)
    large = wilson_interval(800, 1000)
    assert small[0] < 0.8 < small[1] and large[0] < 0.8 < large[1]
    assert large[1] - large[0] < small[1] - small[0]


@pytest.mark.parametrize("passed,n", [(3, 2), (-1, 4), (0, -1)])
def test_impossible_counts_are_refused(passed, n):
    with pytest.raises(ValueError):
        wilson_interval(passed, n)


# ---------------------------------------------------------------------- exact McNemar




@pytest.mark.parametrize("b,c,p", [
    (0, 0, 1.0),
    (1, 0, 1.0),
    (5, 0, 0.0625),  # 2 / 2**5
    (6, 0, 0.03125),
    (3, 3, 1.0),
    (1, 9, 0.021484375),  # 2 * (1 + 10) / 1024
    (10, 2, 0.03857421875),  # 2 * (1 + 12 + 66) / 4096; scipy.stats.binomtest(2, 12).pvalue
    (25, 10, 0.016673847800120715),  # scipy.stats.binomtest(10, 35).pvalue
])
def test_mcnemar_known_values(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_mcnemar_equals_brute_force_over_every_sequence_of_flips():
    # the p-value is the share of the 2**n equally likely flip directions at least as lopsided as the one seen
    for n in range(11):
        for b in range(n + 1):
            c = n - b
            extreme = abs(b - c)
            as_lopsided = sum(1 for seq in itertools.product((0, 1), repeat=n) if abs(2 * sum(seq) - n) >= extreme)
            expected = min(Fraction(1), Fraction(as_lopsided, 2 ** n)) if n else Fraction(1)
            assert mcnemar_exact(b, c) == pytest.approx(float(expected), rel=1e-12), (b, c)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


# ---------------------------------------------------------------------- pass@k, pass^k, the paired bootstrap



def test_pass_at_k_and_pass_hat_k_equal_brute_force_over_every_k_subset_of_runs():
    for n in range(1, 8):
        for c in range(n + 1):
            runs = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(runs, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets), abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets), abs=1e-12)


def test_pass_hat_k_known_values():
    assert pass_hat_k(3, 2, 1) == pytest.approx(2 / 3)
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(3, 2, 3) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(10, 1, 5) == pytest.approx(0.5)  # 1 - C(9,5)/C(10,5) = 1 - 126/252
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 0)


def test_paired_bootstrap_is_seeded_centred_and_pairs_the_cases():
    old = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0] * 5
    new = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0] * 5
    first = paired_bootstrap_interval(old, new, seed=7)
    assert first == paired_bootstrap_interval(old, new, seed=7)
    mean, low, high = first
    assert mean == pytest.approx(0.25)
    assert low <= mean <= high and low > 0.0 and high <= 0.5
    # the same shift in every case: each resample has the same mean difference, so the interval has no width
    assert paired_bootstrap_interval([0.2, 0.5, 0.9], [0.3, 0.6, 1.0]) == pytest.approx((0.1, 0.1, 0.1))
    assert paired_bootstrap_interval([], []) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_bootstrap_interval([1.0], [])


def test_paired_bootstrap_interval_matches_the_normal_approximation_on_a_large_sample():
    import random
    import statistics

    draw = random.Random(1)
    diffs = [draw.choice((-1.0, 0.0, 0.0, 1.0, 1.0)) for _ in range(400)]
    mean, low, high = paired_bootstrap_interval([0.0] * 400, diffs, resamples=4000, seed=3)
    half = 1.96 * statistics.pstdev(diffs) / 400 ** 0.5
    assert low == pytest.approx(mean - half, abs=0.015) and high == pytest.approx(mean + half, abs=0.015)
