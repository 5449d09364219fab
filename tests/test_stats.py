import pytest

from runner.stats import wilson_interval


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

import itertools
from fractions import Fraction

from runner.stats import mcnemar_exact


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
    for n in range(0, 11):
        for b in range(n + 1):
            c = n - b
            extreme = abs(b - c)
            as_lopsided = sum(1 for seq in itertools.product((0, 1), repeat=n) if abs(2 * sum(seq) - n) >= extreme)
            expected = min(Fraction(1), Fraction(as_lopsided, 2 ** n)) if n else Fraction(1)
            assert mcnemar_exact(b, c) == pytest.approx(float(expected), rel=1e-12), (b, c)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)
