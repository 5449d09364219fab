"""The fuzzy cascade: the cheapest stage that can decide does, and models only see free text.

exact (strict normalisation) -> date / number -> LLM judge -> offline rules -> MiniLM embeddings -> rapidfuzz.

A stage that cannot run (embeddings not installed) leaves a note and hands over to the next one.
A configured judge that fails hands over too, but never silently: the decision carries
`judge_failure` and its reason says which stage decided because the judge failed.
Without a judge's verdict, similarity alone would call "is approved" and "is not approved" the same, so
four cheap rules decide first, each a non-match explained: an answer that lacks a fact of the expected
text (facts.py: dates, amounts, days, names, codes), that negates what it says (negation.py), that says
its opposite or exchanges its roles (opposites.py, roles.py), or that leaves out one of its clauses
(omission.py). The similarity stages compare texts with dates and numbers
written one way. Every offline verdict's reason begins "decided offline: ".
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from runner.results.models import Decision
from runner.score.dates import parse_date
from runner.score.embeddings import EmbeddingUnavailable, default_embedder
from runner.score.facts import canonical_text, check_facts, describe_missing
from runner.score.negation import contradiction
from runner.score.normalize import Number, as_number, show, strict_decision, strict_equal
from runner.score.omission import omitted_clause
from runner.score.opposites import changed_fact

# Relative tolerance needs a scale; this keeps an expected 0 from demanding exactly 0.
_TINY = 1e-12
# The cascade lives for a whole run: what it remembers must not grow with the number of cases.
_MAX_PENDING = 512  # texts waiting for the next embedding batch (the newest are kept)
_MAX_MEMO = 50_000  # remembered decisions (scoring repeats questions within a case, rarely across)


# Chosen on the labelled pairs of tests/data/offline_cascade/ (tests/bench/bench_offline_cascade.py): the best
# balanced accuracy of the offline cascade with embeddings among thresholds whose false-pass rate is at most 15%.
DEFAULT_SIMILARITY_THRESHOLD = 0.74


class CascadeSettings(BaseModel):
    enable_fuzzy_matching: bool = True
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD
    use_embeddings: bool = True
    number_rel_tolerance: float = 0.01


class Cascade:
    """Compares expected and actual values in fuzzy mode. Safe to share between threads scoring
    cases at the same time.

    `judge` (optional) has .semantic_match(expected, actual, context) returning something with
    .matched, .score, .reason, and raises when it cannot answer (LLMError's .reason is used).
    `embedder` (optional) has .similarity(a, b) (and optionally .encode_many, .model_id, .is_loaded);
    None means the process-wide MiniLM model, loaded on first use.
    `cache_dir` keeps similarity scores on disk (under similarity/), so an unchanged rerun loads no model.
    `on_model_load(message)` is called once, just before the embedding model starts loading."""

    def __init__(self, settings: CascadeSettings, judge: Any = None, embedder: Any = None, *,
                 cache_dir: Path | None = None, on_model_load: Callable[[str], None] | None = None):
        self.settings = settings
        self.judge = judge
        self._embedder = embedder
        self._memo: dict[tuple, Decision] = {}
        self._pending: dict[str, None] = {}  # texts to encode in one batch once the embedding stage is reached
        self._lock = threading.Lock()
        self._similarities = SimilarityCache(Path(cache_dir) / "similarity") if cache_dir is not None else None
        self._on_model_load = on_model_load
        self._load_announced = False
        self._embeddings_unavailable = False  # set once the stage failed: later verdicts name rapidfuzz

    def expect(self, texts: Iterable[Any]) -> None:
        """Texts coming comparisons will use (a case's answers and reference answers, fuzzy argument
        values). Nothing is loaded now: if a comparison reaches the embedding stage, every text
        expected so far is encoded in one batch."""
        with self._lock:
            for text in texts:
                if isinstance(text, str):
                    self._pending[canonical_text(text)] = None
            while len(self._pending) > _MAX_PENDING:
                del self._pending[next(iter(self._pending))]

    def compare(self, expected: Any, actual: Any, *, threshold: float | None = None,
                tolerance: float | None = None, context: str = "value") -> Decision:
        # Scoring may ask the same question twice (a yes/no pass, then the explained verdicts):
        # the answer is remembered so that a model is asked once.
        key = (repr(expected), repr(actual), threshold, tolerance, context)
        with self._lock:
            decision = self._memo.get(key)
        if decision is None:
            decision = self._compare(expected, actual, threshold, tolerance, context)
            with self._lock:
                if len(self._memo) >= _MAX_MEMO:
                    self._memo.clear()
                decision = self._memo.setdefault(key, decision)
        return decision.model_copy(deep=True)

    def _compare(self, expected: Any, actual: Any, threshold: float | None, tolerance: float | None,
                 context: str) -> Decision:
        if not self.settings.enable_fuzzy_matching:
            return strict_decision(expected, actual)
        if strict_equal(expected, actual):
            return Decision(matched=True, decided_by="exact", score=1.0, reason="equal after normalisation")
        decided = self._decide_without_models(expected, actual, tolerance)
        if decided is not None:
            return decided

        expected_text, actual_text = _text(expected), _text(actual)
        assert expected_text is not None and actual_text is not None  # else decided without models (above)
        limit = self.settings.similarity_threshold if threshold is None else threshold
        notes: list[str] = []
        judged, judge_failure = self._by_judge(expected_text, actual_text, context, notes, threshold)
        if judged is not None:
            return judged
        decision = self._offline(expected_text, actual_text, limit, notes)
        decision.notes = notes
        if judge_failure is not None:
            decision.judge_failure = judge_failure
            decision.reason = (f"decided by {decision.decided_by} because the judge failed: {judge_failure}; "
                               f"{decision.reason}")
        return decision

    # ------------------------------------------------------------ stage 1: no model needed

    def _decide_without_models(self, expected: Any, actual: Any, tolerance: float | None) -> Decision | None:
        if _text(expected) is None or _text(actual) is None:
            # Objects, lists, booleans, null: models would only guess; strict equality already said no.
            return strict_decision(expected, actual)
        # Dates before numbers: "20250105" vs "20250106" are different days, not numbers 0.000005% apart.
        expected_date, actual_date = parse_date(expected), parse_date(actual)
        if expected_date is not None and actual_date is not None:
            same = expected_date == actual_date
            return Decision(matched=same, decided_by="date", reason=f"{'same date' if same else 'different dates'}: "
                            f"{expected_date.isoformat()} vs {actual_date.isoformat()}")
        expected_number, actual_number = as_number(expected), as_number(actual)
        if expected_number is not None and actual_number is not None:
            return self._numbers(expected_number, actual_number, tolerance, shown=(expected, actual))
        return None

    def _numbers(self, expected: Number, actual: Number, tolerance: float | None,
                 shown: tuple[Any, Any]) -> Decision:
        # Whole numbers are counts, years and ids: 2025 is not "about" 2044. Without an explicit
        # `tolerance` they must be equal; the relative tolerance is for measured values (12.5 vs 12.51).
        whole = all(isinstance(n, int) or float(n).is_integer() for n in (expected, actual))
        if tolerance is None and whole:
            equal = expected == actual
            return Decision(matched=equal, decided_by="number",
                            reason=f"{show(shown[1])} {'equals' if equal else 'is not'} {show(shown[0])} "
                                   "(whole numbers match only when equal, unless a tolerance is given)")
        rel = self.settings.number_rel_tolerance
        how = f"±{tolerance:g}" if tolerance is not None else f"±{rel:.2%}"
        try:
            allowed = tolerance if tolerance is not None else rel * max(abs(float(expected)), _TINY)
            difference = abs(float(expected) - float(actual))
            within = math.isfinite(difference) and difference <= allowed
        except OverflowError:  # integers too large for a float: only equal ones match
            within = expected == actual
        verdict = "within" if within else "outside"
        return Decision(matched=within, decided_by="number",
                        reason=f"{show(shown[1])} is {verdict} {how} of {show(shown[0])}")

    # ------------------------------------------------------------ stage 2: LLM judge

    def _by_judge(self, expected: str, actual: str, context: str, notes: list[str],
                  threshold: float | None) -> tuple[Decision | None, str | None]:
        """(the judge's decision, None), or (None, why the configured judge could not decide).

        An explicit `threshold` (a fuzzy argument's own) applies to the judge's score too: a judge that
        says "match" with a score below it does not pass the value. `similarity_threshold` does not:
        it is the offline stages' setting."""
        if self.judge is None:
            return None, None
        try:
            verdict = self.judge.semantic_match(expected, actual, context)
        except Exception as error:  # any failure means "could not decide", never "matched"
            reason = getattr(error, "reason", None) or f"{type(error).__name__}: {error}"
            notes.append(f"llm: judge failed: {reason}")
            return None, reason
        said = verdict.reason or ("judged equivalent" if verdict.matched else "judged different")
        matched = bool(verdict.matched)
        if matched and threshold is not None:
            if verdict.score is None:
                matched = False
                said = f"the judge said match but gave no score, and the threshold {threshold:.2f} needs one: {said}"
            elif verdict.score < threshold:
                matched = False
                said = f"the judge said match with score {verdict.score:.2f} < threshold {threshold:.2f}: {said}"
        return Decision(matched=matched, decided_by="llm", score=verdict.score, reason=said), None

    # ------------------------------------------------------------ stages 3-5: offline

    def _offline(self, expected: str, actual: str, limit: float, notes: list[str]) -> Decision:
        facts = check_facts(expected, actual)
        # The stage that would have compared the texts decides these, without needing its model.
        stage = "embedding" if self.settings.use_embeddings and not self._embeddings_unavailable else "rapidfuzz"
        if facts.missing:
            return Decision(matched=False, decided_by=stage, reason=f"{OFFLINE}the answer lacks "
                                                                    f"{describe_missing(facts.missing)} of the expected text")
        clash = contradiction(expected, actual)
        if clash is not None:
            return Decision(matched=False, decided_by=stage, reason=OFFLINE + clash.reason)
        changed = changed_fact(expected, actual)
        if changed is not None:
            return Decision(matched=False, decided_by=stage, reason=OFFLINE + changed.reason)
        left_out = omitted_clause(expected, actual)
        if left_out is not None:
            return Decision(matched=False, decided_by=stage,
                            reason=f"{OFFLINE}the answer says nothing of {left_out!r} of the expected text")
        decision = self._by_embedding(facts.expected_text, facts.actual_text, limit, notes)
        if decision is None:
            decision = self._by_rapidfuzz(facts.expected_text, facts.actual_text, limit)
        return decision

    def _by_embedding(self, expected: str, actual: str, limit: float, notes: list[str]) -> Decision | None:
        if not self.settings.use_embeddings:
            return None
        embedder = self.embedder()
        model_id = getattr(embedder, "model_id", None)
        cache = self._similarities if model_id is not None else None
        score = cache.get(model_id, expected, actual) if cache is not None else None  # type: ignore[arg-type]  # a cache only with an id
        if score is None:
            try:
                self._announce_load(embedder)
                with self._lock:
                    batch, self._pending = list(self._pending), {}
                if batch and hasattr(embedder, "encode_many"):
                    embedder.encode_many(list(dict.fromkeys(batch + [expected, actual])))
                score = float(embedder.similarity(expected, actual))
            except EmbeddingUnavailable as error:
                self._embeddings_unavailable = True
                notes.append(f"embedding: {error}")
                return None
            except Exception as error:  # a broken model must not stop scoring; rapidfuzz still decides
                self._embeddings_unavailable = True
                notes.append(f"embedding: failed: {type(error).__name__}: {error}")
                return None
            if cache is not None:
                cache.put(model_id, expected, actual, score)  # type: ignore[arg-type]  # a cache only with an id
        return _threshold_decision("embedding", score, limit)

    def _announce_load(self, embedder: Any) -> None:
        if self._on_model_load is None or self._load_announced:
            return
        is_loaded = getattr(embedder, "is_loaded", None)
        if is_loaded is None or is_loaded():
            return
        with self._lock:
            if self._load_announced:
                return
            self._load_announced = True
        self._on_model_load("loading the embedding model for fuzzy comparisons (a few seconds; "
                            "later runs read the scores from the cache)")

    def embedder(self) -> Any:
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    def _by_rapidfuzz(self, expected: str, actual: str, limit: float) -> Decision:
        from rapidfuzz import fuzz, utils

        # WRatio is 0-100; compare on the 0-1 scale so a 0.8 threshold means 80, not 0.8.
        score = fuzz.WRatio(expected, actual, processor=utils.default_process) / 100
        return _threshold_decision("rapidfuzz", score, limit)


def fuzzy_argument_texts(goals: Iterable[Any], calls: Iterable[Any]) -> list[str]:
    """The texts a case's `fuzzy` arguments may compare: the expected value at each fuzzy path and
    the value at that path in every call of the goal's tool. Given to `Cascade.expect` with the
    answers, they are encoded in the case's one batch instead of two at a time."""
    calls = list(calls)
    texts: list[str] = []
    for goal in goals:
        rules = getattr(goal, "arg_matching", None) or {}
        for path, spec in rules.items():
            mode = spec if isinstance(spec, str) else getattr(spec, "mode", None)
            if mode != "fuzzy":
                continue
            values = [_at_path(getattr(goal, "args", None), path)]
            values += [_at_path(c.arguments, path) for c in calls if c.name == getattr(goal, "tool_name", None)]
            texts += [v for v in values if isinstance(v, str)]
    return list(dict.fromkeys(texts))


def _at_path(value: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


# Every verdict the offline stages reach says so in its reason, which reports and the console show.
OFFLINE = "decided offline: "
_STAGE_NAMES = {"embedding": "embeddings", "rapidfuzz": "rapidfuzz"}


def _threshold_decision(stage: str, score: float, limit: float) -> Decision:
    matched = score >= limit
    shown = f"{score:.2f}"
    if shown == f"{limit:.2f}" and score != limit:
        shown = f"{score:.4f}".rstrip("0")  # 0.7996 < 0.80 must not read "0.80 < threshold 0.80"
    return Decision(matched=matched, decided_by=stage, score=score,
                    reason=f"{OFFLINE}{_STAGE_NAMES[stage]} {shown} {'>=' if matched else '<'} threshold {limit:.2f}")


def _text(value: Any) -> str | None:
    """The text a model compares: strings as they are, numbers written out; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, date):  # YAML reads an unquoted 2025-01-05 as a date
        return value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


# ---------------------------------------------------------------- similarity scores on disk


class SimilarityCache:
    """Similarity scores by (model, text, text), one small file each, written atomically: a rerun of
    unchanged suites reads them and never loads the model."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, model_id: str, a: str, b: str) -> Path:
        key = hashlib.sha256(json.dumps([model_id, a, b], ensure_ascii=False).encode()).hexdigest()
        return self.root / key[:2] / f"{key}.json"

    def get(self, model_id: str, a: str, b: str) -> float | None:
        try:
            value = json.loads(self._path(model_id, a, b).read_text(encoding="utf-8")).get("score")
        except (OSError, ValueError, AttributeError):
            return None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def put(self, model_id: str, a: str, b: str, score: float) -> None:
        from runner.util.atomic import write_text_atomically

        try:
            write_text_atomically(self._path(model_id, a, b), json.dumps({"score": score}))
        except OSError:
            pass  # a read-only or full disk costs a model load next run, never this run's verdict
