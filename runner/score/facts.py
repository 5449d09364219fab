"""Offline facts: what an answer must repeat from the expected text, whatever its wording.

Without a judge, similarity scores cannot tell "Tuesday" from "Thursday" or Dr. Patel from Dr. Shah:
those sentences score as high as a paraphrase. So the facts of the expected text are looked for in the
answer, and an answer that lacks one does not match:

- dates, in any format dates.py reads (written as ISO in the canonical text the similarity stages see);
- amounts: numbers as people write them (€1,500.00 = 1500), and the number words two to twelve
  (not "one": "a new one" is no amount);
- days: the weekdays, and today / tonight / tomorrow / yesterday ("this evening" is tonight);
- names: capitalised words inside a sentence (Patel, Berlin, Grand Plaza), and every capitalised word
  of a short value that is all capitals (`Maria Lopez`, `Hamburg`); not titles, currency codes, units
  or words written in capitals for emphasis (NOT), and none in a text written in Title Case;
- codes: words of letters and digits (gate B12, seat 14C, LH400).

Names, days and codes are found in the answer as words, in any case.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from runner.score.dates import find_dates
from runner.score.sentences import without_abbreviation_dots

Fact = tuple[str, str]  # (kind, value): ("date", "2025-01-05"), ("amount", "1500"), ("name", "Patel"), ...

# A number as people write amounts: 1500, 1,500, 1,500.00, €1,500, -3.5. Not part of a word (A320),
# of a longer dotted/slashed token (3.11.7, 1/2) or of a time of day (10:00 vs "10 am" is for a judge).
_NUMBER = re.compile(r"(?<![\w.,/:])(?P<sign>[-+])?(?:[$€£¥]\s?)?"
                     r"(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<fraction>\.\d+)?(?![\w/:]|[.,]\d)")
_NUMBER_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
                 "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
MAX_FACT_TEXT = 5_000  # facts are looked for in answers, not in whole documents

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
         "today", "tonight", "tomorrow", "yesterday")
_DAY = re.compile(r"\b(" + "|".join(_DAYS) + r")\b", re.IGNORECASE)
_SAME_DAY = {"tonight": ("tonight", "this evening")}  # other ways to name the same day

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:['’][a-z]+)?\b|\b[A-Z]{2,}\b")
_CODE = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}\b")
# Where a sentence starts: its first word is capitalised whatever it is.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]\s*)?|[\"“(]\s*)(?=\S)")
_NOT_NAMES = frozenset(["i", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "ok", "eur", "usd", "gbp", "chf", "jpy", "cad", "aud", "sek", "nok", "dkk", "pln", "inr", "cny", "am", "pm", "gb", "mb", "kb", "tb", "km", "kg", "cm", "mm", "ml", "not", "no", "never", "none", "nothing", "nobody", "nowhere", "without", "cannot", "yes", "please", "asap", "fyi"])
_SHORT_VALUE = 3  # words: a value this short that is all capitals is a name (`Maria Lopez`, `Hamburg`)
_TITLE_CASE = 0.75  # share of capitalised long words from which a longer text is read as Title Case


@dataclass(frozen=True)
class FactCheck:
    expected_text: str  # canonical: dates as ISO, numbers as plain digits
    actual_text: str
    missing: list[Fact]  # facts of the expected text the answer lacks


def check_facts(expected: str, actual: str) -> FactCheck:
    expected_text, expected_facts = canonical_form(expected)
    actual_text, actual_facts = canonical_form(actual)
    if len(expected) > MAX_FACT_TEXT or len(actual) > MAX_FACT_TEXT:
        return FactCheck(expected_text, actual_text, [])
    missing = [fact for fact in expected_facts if fact not in actual_facts]
    words = _word_set(actual_text)
    missing += [fact for fact in word_facts(expected_text) if not _has_word_fact(fact, words, actual_text)]
    return FactCheck(expected_text, actual_text, missing)


# ---------------------------------------------------------------- dates and amounts


def canonical_form(text: str) -> tuple[str, list[Fact]]:
    """`text` with every recognisable date written as ISO (2025-01-05) and every number as plain
    digits (1,500.00 -> 1500), and the facts found: [("date", "2025-01-05"), ("amount", "1500"), ...].
    Number words (two .. twelve) are amounts too; the text keeps them as written."""
    if len(text) > MAX_FACT_TEXT:
        return text, []
    written, facts = _canonical_form(text)
    return written, list(facts)


@lru_cache(maxsize=4096)
def _canonical_form(text: str) -> tuple[str, tuple[Fact, ...]]:
    parts: list[str] = []
    facts: list[Fact] = []
    position = 0
    for start, end, found in find_dates(text):
        parts.append(_numbers_written_plainly(text[position:start], facts))
        iso = found.isoformat()
        parts.append(iso)
        facts.append(("date", iso))
        position = end
    parts.append(_numbers_written_plainly(text[position:], facts))
    return "".join(parts), tuple(dict.fromkeys(facts))


def canonical_text(text: str) -> str:
    return canonical_form(text)[0]


def _numbers_written_plainly(segment: str, facts: list[Fact]) -> str:
    def plain(match: re.Match) -> str:
        written = (match.group("sign") or "").replace("+", "") + match.group("digits").replace(",", "") + \
            (match.group("fraction") or "")
        try:
            value = Decimal(written)
        except InvalidOperation:
            return match.group(0)
        number = format(value.normalize(), "f") if value != value.to_integral() else format(value.to_integral(), "f")
        facts.append(("amount", number))
        return number

    written = _NUMBER.sub(plain, segment)
    facts += [("amount", _NUMBER_WORDS[word.casefold()]) for word in _NUMBER_WORD.findall(segment)]
    return written


# ---------------------------------------------------------------- days, names and codes


@lru_cache(maxsize=4096)
def word_facts(text: str) -> tuple[Fact, ...]:
    """The days, names and codes of a (canonical) text, in order, each once."""
    facts: list[Fact] = [("day", day.casefold()) for day in _DAY.findall(text)]
    facts += [("code", code) for code in _CODE.findall(text) if not code.isdigit()]
    facts += [("name", name) for name in _names(text)]
    return tuple(dict.fromkeys(facts))


def _names(text: str) -> list[str]:
    text = without_abbreviation_dots(text)
    starts = {match.end() for match in _SENTENCE_START.finditer(text)}
    words = re.findall(r"[A-Za-z]+", text)
    capitalised = list(_CAPITALISED.finditer(text))
    all_capitals = bool(words) and len(capitalised) == len(words)
    # Title Case leaves "of", "the", "to" small, and every sentence starts with a capital anyway.
    long_words = [m for m in re.finditer(r"[A-Za-z]{4,}", text) if m.start() not in starts]
    if len(words) > _SHORT_VALUE and sum(m.group(0)[0].isupper() for m in long_words) >= _TITLE_CASE * len(long_words):
        return []  # Title Case Text (of the Kind People Write): its capitals say nothing of names
    names = []
    for match in capitalised:
        word = match.group(0)
        if word.casefold() in _NOT_NAMES or word.casefold() in _DAYS:
            continue
        if match.start() in starts and not all_capitals:
            continue  # the first word of a sentence is capitalised whatever it is
        if word.isupper() and len(word) > 1 and not any(c.islower() for c in text):
            continue  # A TEXT IN CAPITALS: no word stands out
        names.append(word)
    return names


def _word_set(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.casefold()))


def _has_word_fact(fact: Fact, words: frozenset[str], text: str) -> bool:
    kind, value = fact
    if kind == "day":
        folded = text.casefold()
        return any(re.search(rf"\b{re.escape(way)}\b", folded) for way in _SAME_DAY.get(value, (value,)))
    return re.sub(r"['’].*", "", value).casefold() in words  # names as words: Anna's is Anna


# ---------------------------------------------------------------- explanations

_KIND_WORDS = {"date": ("the date", "the dates"), "amount": ("the number", "the numbers"),
               "day": ("the day", "the days"), "name": ("the name", "the names"), "code": ("the code", "the codes")}


def describe_missing(missing: list[Fact]) -> str:
    """`the date 2025-03-03 and the name 'Patel'`."""
    parts = []
    for kind, (one, several) in _KIND_WORDS.items():
        values = [value for k, value in missing if k == kind]
        if values:
            shown = values if kind in ("date", "amount") else [repr(v) for v in values]
            parts.append(f"{one if len(values) == 1 else several} {', '.join(shown)}")
    return " and ".join(parts)
