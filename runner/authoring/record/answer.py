"""Keywords a draft's text goal asks of the agent's last answer: the facts in it a person would check.

Dates (as written: "January 5, 2025"), amounts and other numbers ("1,500.00", "3"), codes ("A-1042")
and names (capitalised words inside a sentence: "Maria Lopez"). Each keyword is kept only if the
keyword check (runner/score/keywords.py) finds it in the answer it came from, so a draft's text goal
is always achieved by the recorded answer.
"""
from __future__ import annotations

import re

from ...score.dates import find_dates
from ...score.keywords import missing_keywords

MAX_KEYWORDS = 6
_NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,]\d)")
# A code: capitals and digits, both present, at least three characters ("Q69X3R", "A-1042", "EMP-0042").
_CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]*[A-Z0-9](?![\w-])")
_CURRENCY = "$€£¥₹"
_NAME = re.compile(r"(?<![\w'’-])[A-Z][a-z]+(?:[ '-][A-Z][a-z]+)*(?![\w'’-])")
# Capitalised words that are no name: sentence words people capitalise, weekdays and months (dates say those).
_NOT_NAMES = frozenset(["i", "i'm", "i've", "i'll", "you", "your", "yours", "we", "our", "us", "he", "she", "it", "they", "them", "their", "this", "that", "these", "those", "there", "here", "the", "a", "an", "and", "or", "but", "if", "so", "yes", "no", "not", "ok", "okay", "hello", "hi", "hey", "dear", "thanks", "thank", "please", "sorry", "sure", "great", "good", "done", "what", "when", "where", "which", "who", "why", "how", "is", "are", "was", "were", "be", "been", "do", "does", "did", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "my", "me", "mine", "his", "her", "its", "let", "let's", "also", "however", "unfortunately", "then", "now", "today", "tomorrow", "yesterday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"])


def answer_keywords(text: str) -> list[str]:
    """Up to MAX_KEYWORDS keywords found in `text`, in the order they appear."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, keyword: str) -> None:
        if any(start < e and s < end for s, e in taken):
            return  # part of a keyword already found ("5" in "January 5, 2025")
        taken.append((start, end))
        found.append((start, keyword))

    for start, end, _ in find_dates(text):
        add(start, end, text[start:end].strip())
    for match in _CODE.finditer(text):
        add(match.start(), match.end(), match.group(0))
    for match in _NUMBER.finditer(text):
        number = match.group(0)
        if len(number) > 1 or text[:match.start()].rstrip()[-1:] in _CURRENCY:  # not "within 5 to 7 days"
            add(match.start(), match.end(), number)
    for match in _NAME.finditer(text):
        name = _strip_common(match.group(0))
        if name and not _starts_sentence(text, match.start() + match.group(0).index(name)):
            start = match.start() + match.group(0).index(name)
            add(start, start + len(name), name)
    keywords: list[str] = []
    for _, keyword in sorted(found):
        if keyword.casefold() not in (k.casefold() for k in keywords) and not missing_keywords(text, [keyword]):
            keywords.append(keyword)
    return keywords[:MAX_KEYWORDS]


def _strip_common(name: str) -> str:
    """A run of capitalised words without the leading and trailing ones that are no names."""
    words = re.split(r"(?<=[a-z])[ ](?=[A-Z])", name)
    while words and words[0].casefold() in _NOT_NAMES:
        words.pop(0)
    while words and words[-1].casefold() in _NOT_NAMES:
        words.pop()
    return " ".join(words) if words and " ".join(words) in name else ""


def _starts_sentence(text: str, start: int) -> bool:
    """Is the word at `start` the first of a sentence (where every word is capitalised)?"""
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:\n\"“(-*#>"
