"""The labelled pairs of tests/data/offline_cascade/ (pairs.yaml, changed_facts.yaml) and the measures taken on them.

Shared by tests/bench/bench_offline_cascade.py (the figures in the README) and tests/score/test_offline_pairs.py.
Everything here is deterministic: the held-out split and the cross-validation folds come from a hash of
each pair's id, so the figures do not depend on a random seed or on the order of the file.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

PAIRS_DIR = Path(__file__).parents[1] / "data" / "offline_cascade"
PAIRS_FILE = PAIRS_DIR / "pairs.yaml"
# changed_facts.yaml: antonyms, changed subjects and objects, swapped roles, quantity words, and the
# reordered and reworded pairs that must still match (issue 26).
PAIRS_FILES = (PAIRS_FILE, PAIRS_DIR / "changed_facts.yaml")

# Every category and the verdict all its pairs carry.
CATEGORIES = {
    "paraphrase": True, "extra_detail": True, "negation_kept": True,
    "reordered": True,
    "negation": False, "antonym": False, "changed_number": False, "changed_date": False,
    "changed_name": False, "partial_answer": False, "changed_status": False, "unrelated": False,
    "changed_subject": False, "changed_object": False, "swapped_roles": False,
}
HELD_OUT_SHARE = 4  # one pair in 4 is held out: the threshold and the rules are never tuned on it
FOLDS = 5


@dataclass(frozen=True)
class Pair:
    id: str
    category: str
    domain: str
    kind: str  # "answer" (a text goal's response) or "argument" (a fuzzy tool argument)
    match: bool
    expected: str
    actual: str

    @property
    def context(self) -> str:
        """What the cascade is told it compares, as scoring tells it."""
        return "the agent's answer" if self.kind == "answer" else "the tool argument `value`"

    @property
    def held_out(self) -> bool:
        return _hash(self.id) % HELD_OUT_SHARE == 0

    @property
    def fold(self) -> int:
        return _hash("fold:" + self.id) % FOLDS

    @property
    def sample_rank(self) -> int:
        """An order that mixes all categories: the first N pairs by it are a fair sample of the set."""
        return _hash("sample:" + self.id)


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def load_pairs(paths: Sequence[Path] = PAIRS_FILES) -> list[Pair]:
    pairs = []
    for path in paths:
        # libyaml when present (as runner/suite/reader.py): read at collection, by every pytest session, 10x faster
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        pairs += [Pair(**{key: entry[key] for key in Pair.__dataclass_fields__}) for entry in document["pairs"]]
    return pairs


@dataclass(frozen=True)
class Outcome:
    """What one configuration of the cascade said of one pair. `score` is set when a similarity stage
    compared the texts with a threshold (so the verdict at another threshold is `score >= t`); it is
    None when a stage decided on something else (exact, number, date, a missing fact, a negation)."""

    pair: Pair
    matched: bool
    decided_by: str
    score: float | None
    reason: str = ""

    def at(self, threshold: float | None) -> bool:
        if threshold is None or self.score is None or self.decided_by not in ("embedding", "rapidfuzz"):
            return self.matched
        return self.score >= threshold


@dataclass(frozen=True)
class Rates:
    pairs: int
    correct: int
    false_passes: int  # a non-match called a match
    false_fails: int  # a match called a non-match
    non_matches: int
    matches: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.pairs if self.pairs else float("nan")

    @property
    def false_pass_rate(self) -> float:
        """Share of the pairs that should not match which passed."""
        return self.false_passes / self.non_matches if self.non_matches else float("nan")

    @property
    def false_fail_rate(self) -> float:
        """Share of the pairs that should match which failed."""
        return self.false_fails / self.matches if self.matches else float("nan")

    @property
    def balanced_accuracy(self) -> float:
        return 1 - (self.false_pass_rate + self.false_fail_rate) / 2


def rates(outcomes: Iterable[Outcome], threshold: float | None = None) -> Rates:
    pairs = correct = false_passes = false_fails = non_matches = matches = 0
    for outcome in outcomes:
        said = outcome.at(threshold)
        pairs += 1
        correct += said == outcome.pair.match
        if outcome.pair.match:
            matches += 1
            false_fails += not said
        else:
            non_matches += 1
            false_passes += said
    return Rates(pairs, correct, false_passes, false_fails, non_matches, matches)


# The grid thresholds are chosen from: two decimals, as people write them in evalrun.yaml.
THRESHOLD_GRID = tuple(round(0.30 + 0.01 * step, 2) for step in range(66))  # 0.30 .. 0.95


def choose_threshold(outcomes: Sequence[Outcome], max_false_pass: float,
                     grid: Sequence[float] = THRESHOLD_GRID) -> float:
    """The threshold with the best balanced accuracy among those whose false-pass rate is at most
    `max_false_pass` (a green verdict must be trustworthy first); ties go to the higher threshold.
    When no threshold keeps false passes that low, the one with the fewest false passes."""
    scored = [(rates(outcomes, t), t) for t in grid]
    allowed = [(r.balanced_accuracy, t) for r, t in scored if r.false_pass_rate <= max_false_pass]
    if allowed:
        return max(allowed)[1]
    fewest = min(r.false_pass_rate for r, _ in scored)
    return max(t for r, t in scored if r.false_pass_rate == fewest)


def cross_validated(outcomes: Sequence[Outcome], max_false_pass: float) -> tuple[Rates, list[float]]:
    """Each fold judged at the threshold chosen on the other folds; the verdicts pooled. Says how well
    choosing the threshold this way does on pairs it was not chosen on."""
    chosen: list[float] = []
    judged: list[tuple[Outcome, float]] = []
    for fold in range(FOLDS):
        training = [o for o in outcomes if o.pair.fold != fold]
        threshold = choose_threshold(training, max_false_pass)
        chosen.append(threshold)
        judged += [(o, threshold) for o in outcomes if o.pair.fold == fold]
    pooled = [Outcome(o.pair, o.at(t), "fixed", None) for o, t in judged]
    return rates(pooled), chosen
