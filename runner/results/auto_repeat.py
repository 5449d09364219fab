"""`--repeat auto`: repeat each case until its verdict is settled, up to a maximum.

The rule, per case, after each set of finished runs (n runs, k of them passed; a run passes when every result
it made passed):
    stop when n >= min and the Wilson score interval of the case's pass rate k/n at `confidence` (the interval
    the reports already show, runner.results.stats.wilson_interval) lies entirely above or entirely below
    `threshold`; stop anyway at n = max. A case settled above passes the question "does it pass more often
    than `threshold`?", below fails it; one still straddling at max is unsettled.

Threshold: 0.5 by default, the `majority` question (does this case pass more often than not). It is not taken
from --min-pass-rate (a share of cases, not of one case's runs) nor from repeat_policy `all` / `any` (they ask
whether every / some run passed, which no rate interval can settle); `threshold=` sets another.

Error rate: an interval at 95% has about a 5% chance of missing the true rate at one look; the rule looks after
every run, so the chance that a case whose true pass rate lies on one side of the threshold is settled on the
other is computed exactly by `wrong_side_chance` (every outcome sequence). With the defaults (max 10,
confidence 0.95, min 3, threshold 0.5) it is at most 7.8%, for a case whose rate is just off the threshold; 4.9%
at 0.45 or 0.55, 3.0% at 0.4 or 0.6, under 1% at 0.3 or 0.7 (tests/test_repeat_auto.py checks these figures).
`min` (3) keeps one lucky pass, or two, from settling a case whatever the confidence; with the defaults four
agreeing runs are the fewest that settle.

Scheduling stays deterministic given the outcomes: the next runs of a case are decided only when all its
started runs have finished, and it gets exactly as many as it needs before a stop could possibly happen
(`runs_before_possible_stop`), which run side by side; a sequential one-at-a-time rule would have made them too.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from statistics import NormalDist

from .stats import wilson_interval

DEFAULTS = {"max": 10, "confidence": 0.95, "min": 3, "threshold": 0.5}
KEYS = tuple(DEFAULTS)


class RepeatSpecError(ValueError):
    """A --repeat value that is neither a whole number nor a valid `auto[:KEY=VALUE,...]`; says what and the fix."""


@dataclass(frozen=True)
class AutoRepeat:
    """The stopping rule of --repeat auto (see the module's docstring)."""
    max: int = 10
    confidence: float = 0.95
    min: int = 3
    threshold: float = 0.5

    @property
    def z(self) -> float:
        return NormalDist().inv_cdf(1 - (1 - self.confidence) / 2)

    def verdict(self, passed: int, runs: int) -> str | None:
        """'passed' / 'failed' when the interval of passed/runs lies above / below the threshold (and runs >= min);
        None while it straddles it."""
        if runs < self.min or runs == 0:
            return None
        low, high = wilson_interval(passed, runs, self.z)
        return "passed" if low > self.threshold else "failed" if high < self.threshold else None

    def runs_before_possible_stop(self, passed: int, runs: int) -> int:
        """How many more runs a case with `passed` of `runs` needs before the rule could stop it: the fewest m
        after which the verdict could be settled (all m passing or all failing), or the runs left to max. 0 when
        it is settled or at max."""
        if runs >= self.max or self.verdict(passed, runs) is not None:
            return 0
        for more in range(1, self.max - runs + 1):
            if self.verdict(passed + more, runs + more) or self.verdict(passed, runs + more):
                return more
        return self.max - runs

    def describe(self) -> str:
        return (f"auto: until the {self.confidence:.0%} Wilson interval of each case's pass rate lies above or below "
                f"{self.threshold:g}, at least {self.min} and at most {self.max} runs")

    def spec(self) -> str:
        return f"auto:max={self.max},confidence={self.confidence:g},min={self.min},threshold={self.threshold:g}"


def parse_repeat(text: str) -> int | AutoRepeat:
    """`N` (every case N times) or `auto[:KEY=VALUE,...]` (KEY: max, confidence, min, threshold).
    RepeatSpecError names the bad part, the known keys and the closest one."""
    text = text.strip()
    if not text.lower().startswith("auto"):
        try:
            count = int(text)
        except ValueError:
            raise RepeatSpecError(f"'{text}' is neither a whole number nor auto[:KEY=VALUE,...] "
                                  f"(keys: {', '.join(KEYS)}), e.g. 5 or auto:max=8,confidence=0.95") from None
        if count < 1:
            raise RepeatSpecError(f"must be at least 1, got {count}")
        return count
    rest = text[4:]
    if rest and not rest.startswith(":"):
        raise RepeatSpecError(f"'{text}': write auto or auto:KEY=VALUE,... (keys: {', '.join(KEYS)})")
    values: dict = {}
    for item in filter(None, (part.strip() for part in rest[1:].split(","))):
        key, sep, value = (part.strip() for part in item.partition("="))
        if key not in DEFAULTS:
            close = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.5)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise RepeatSpecError(f"unknown key '{key}' in '{text}'{hint}; the keys are {', '.join(KEYS)}")
        if not sep or not value:
            raise RepeatSpecError(f"'{key}' needs a value in '{text}', e.g. {key}={DEFAULTS[key]}")
        values[key] = _value(key, value)
    rule = AutoRepeat(**values)
    if rule.min > rule.max:
        raise RepeatSpecError(f"min={rule.min} is more than max={rule.max} in '{text}'")
    return rule


def _value(key: str, text: str) -> int | float:
    if key in ("max", "min"):
        try:
            number = int(text)
        except ValueError:
            raise RepeatSpecError(f"{key}: not a whole number: '{text}'") from None
        if number < 1:
            raise RepeatSpecError(f"{key}: must be at least 1, got {number}")
        return number
    try:
        share = float(text)
    except ValueError:
        raise RepeatSpecError(f"{key}: not a number: '{text}'") from None
    if not 0 < share < 1:
        raise RepeatSpecError(f"{key}: must lie strictly between 0 and 1, got {text}")
    return share


def wrong_side_chance(rule: AutoRepeat, rate: float) -> float:
    """The exact chance that a case whose runs pass independently with probability `rate` is settled on the
    wrong side of the threshold by `rule`, over every outcome sequence; at the threshold itself, the chance of
    being settled as failing (the limit for a rate just above it)."""
    wrong = "failed" if rate >= rule.threshold else "passed"
    total = 0.0
    frontier = {(0, 0): 1.0}  # (runs, passed) -> chance of reaching it unsettled
    while frontier:
        step: dict = {}
        for (runs, passed), chance in frontier.items():
            for outcome, p in ((1, rate), (0, 1 - rate)):
                state, reach = (runs + 1, passed + outcome), chance * p
                settled = rule.verdict(state[1], state[0])
                if settled is not None:
                    total += reach if settled == wrong else 0.0
                elif state[0] < rule.max:
                    step[state] = step.get(state, 0.0) + reach
        frontier = step
    return total
