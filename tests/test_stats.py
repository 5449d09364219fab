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
