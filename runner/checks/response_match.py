"""`response_match`: ROUGE-1 F1 of the final answer against a reference (ADK's response_match_score).

Tokens and stems are those of Google's rouge-score with its Porter stemmer on: lower case, every run of
characters outside [a-z0-9] is a separator, and words longer than 3 characters are stemmed with NLTK's
Porter stemmer (its default NLTK_EXTENSIONS mode, the one rouge-score uses). The stemmer's module is
loaded the first time a word is stemmed, never before, and without the rest of NLTK (see _porter_module).
"""
from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

from pydantic import ConfigDict, Field

from .base import CheckContext, CheckFamily, CheckOptions, Verdict

_SEPARATORS = re.compile(r"[^a-z0-9]+")


_stemmer_lock = threading.Lock()
_porter: list = []  # the one PorterStemmer, once made


def _stemmer():
    """Made once, under a lock: scoring threads stem at the same time, and a second thread importing while
    the first had its stand-ins in sys.modules (or had just taken them out) imported the whole of NLTK."""
    if not _porter:
        with _stemmer_lock:
            if not _porter:
                _porter.append(_porter_module().PorterStemmer())
    return _porter[0]


def _porter_module():
    """NLTK's Porter stemmer module, loaded without running `nltk/__init__`: that imports most of NLTK
    (and scipy when installed), seconds for one stemmer. Bare stand-ins for the `nltk` and `nltk.stem`
    packages let the module and the three small modules it imports load from NLTK's own files; the
    stand-ins are then taken out again, so that a later `import nltk` (anyone's) gets the real package.
    If that fails in any way (another NLTK layout), the stemmer comes from a normal import."""
    import importlib
    import importlib.util
    import sys
    import types

    if "nltk" in sys.modules:  # already imported for real
        return importlib.import_module("nltk.stem.porter")
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        return importlib.import_module("nltk.stem.porter")  # raises the ImportError that says what is missing
    before = set(sys.modules)
    try:
        package = types.ModuleType("nltk")
        package.__path__ = list(spec.submodule_search_locations)
        stem_package = types.ModuleType("nltk.stem")
        stem_package.__path__ = [f"{location}/stem" for location in spec.submodule_search_locations]
        package.stem = stem_package  # type: ignore[attr-defined]
        sys.modules["nltk"], sys.modules["nltk.stem"] = package, stem_package
        return importlib.import_module("nltk.stem.porter")
    except Exception:
        pass  # the normal import below
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]
    return importlib.import_module("nltk.stem.porter")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer().stem(word) if len(word) > 3 else word


def rouge_tokens(text: str) -> list[str]:
    words = _SEPARATORS.sub(" ", text.lower()).split()
    # A stem is kept only if it is still plain [a-z0-9] (as rouge-score does).
    return [t for t in (stem(w) for w in words) if t and _SEPARATORS.search(t) is None]


def _cjk(code: int) -> bool:  # CJK ideographs, Hiragana, Katakana, Hangul syllables: one token per character
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _unspaced(code: int) -> bool:  # Thai, Lao, Myanmar, Khmer: one token per base letter and its marks
    return 0x0E00 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


def adk_rouge_tokens(text: str) -> list[str]:
    """Tokens as ADK 2.13's response_match_score makes them (its Unicode-aware tokenizer): NFKC and lower
    case; letters, digits and combining marks of any script kept, everything else a separator; CJK
    characters one token each; Thai, Lao, Khmer and Myanmar one token per letter with its marks; a word
    of ASCII letters and digits stemmed as rouge-score does, any other word kept whole. On ASCII text
    these are exactly `rouge_tokens`."""
    chars = []
    for char in unicodedata.normalize("NFKC", text).lower():
        code = ord(char)
        if _cjk(code):
            chars += [" ", char, " "]
        elif _unspaced(code):
            chars += [char] if unicodedata.category(char).startswith("M") else [" ", char]
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            chars.append(char)
        else:
            chars.append(" ")
    tokens = []
    for word in "".join(chars).split():
        tokens += rouge_tokens(word) if word.isascii() else [word]
    return tokens


def rouge1(reference: str, answer: str, tokens: Callable[[str], list[str]] = rouge_tokens
           ) -> tuple[float, float, float, list[str]]:
    """(precision, recall, F1, the shared unigrams) of `answer` against `reference`."""
    ref, ans = Counter(tokens(reference)), Counter(tokens(answer))
    shared = ref & ans
    overlap = sum(shared.values())
    precision = overlap / max(sum(ans.values()), 1)
    recall = overlap / max(sum(ref.values()), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1, sorted(shared.elements())


class ResponseMatchOptions(CheckOptions):
    model_config = ConfigDict(
        extra="forbid", title="Check: response_match",
        json_schema_extra={"description": "ROUGE-1 F1 of the final answer against `reference` (default threshold 0.8).",
                           "examples": [{"type": "response_match", "reference": "Your time off is on 2025-01-05.",
                                         "threshold": 0.6}]})

    type: Literal["response_match", "response_match_score"] = Field(
        title="Check type", description="response_match (alias: ADK's response_match_score).",
        examples=["response_match"])
    reference: str | None = Field(
        None, min_length=1, title="Reference answer",
        description="The answer to compare with. Default: the `response` of the case's text goal (the first one that "
        "has one).", examples=["Your time off is on 2025-01-05."])


def run_response_match(options: ResponseMatchOptions, ctx: CheckContext) -> Verdict:
    reference = options.reference
    if reference is None:
        reference = next((g.response for g in ctx.case.text_goals() if g.response), None)
    if reference is None:
        return Verdict(skipped="no reference answer: give `reference:` or a text goal with `response`")
    answer = ctx.trajectory.final_text
    if answer is None:
        return Verdict(score=0.0, passed=False, explanation="the agent gave no final answer",
                       evidence={"reference": reference})
    precision, recall, f1, shared = rouge1(reference, answer)
    return Verdict(score=f1, explanation=f"ROUGE-1 F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f}); "
                   f"{len(shared)} shared word(s)",
                   evidence={"precision": precision, "recall": recall, "f1": f1, "matched_unigrams": shared,
                             "reference": reference})


FAMILIES = (
    CheckFamily(types=("response_match", "response_match_score"),
                description="ROUGE-1 F1 of the final answer against a reference answer.",
                options=ResponseMatchOptions, run=run_response_match, default_threshold=0.8),
)
