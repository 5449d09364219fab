"""Recognise a calendar date written in one of the common formats, so "2025-01-05" and
"January 5, 2025" compare equal in fuzzy mode without ever asking a model.

Deliberately small and strict (no dateutil): a value is a date only when the WHOLE text is one of
the formats below. Loose guessing would turn ids and amounts into dates.
"""
from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from typing import Any

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}
# Three-letter abbreviations, plus "sept" which people write often enough.
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9

_MONTH = r"(?P<month_name>[a-z]+)\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
# Optional time part after an ISO date: T10:00, 10:00:00.123, with Z or an offset. Only the date counts.
_TIME = r"(?:[t ](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"

_NUMERIC_FORMATS = [
    re.compile(rf"(?P<year>\d{{4}})-(?P<month>\d{{1,2}})-(?P<day>\d{{1,2}}){_TIME}"),  # 2025-01-05[T10:00:00]
    re.compile(r"(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})"),  # 20250105
    re.compile(r"(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})"),  # 2025/01/05
    re.compile(r"(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})"),  # 01/05/2025 (US: month first)
]
_NAMED_FORMATS = [
    re.compile(rf"{_DAY}\s+{_MONTH},?\s+{_YEAR}"),  # 5 January 2025, 5 Jan 2025
    re.compile(rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}"),  # January 5, 2025, Jan 5 2025
]


def parse_date(value: Any) -> date | None:
    """The date `value` spells, or None. Accepts str, date/datetime, and an int of exactly 8 digits (YYYYMMDD)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # only the 8-digit YYYYMMDD format below can accept it
    if not isinstance(value, str):
        return None
    text = value.strip().casefold()
    if len(text) > 64:  # no date format is this long; skip regex work on long answers
        return None
    for pattern in _NUMERIC_FORMATS:
        found = pattern.fullmatch(text)
        if found and _valid_time(found.groupdict()):
            return _build(found.group("year"), found.group("month"), found.group("day"))
    for pattern in _NAMED_FORMATS:
        found = pattern.fullmatch(text)
        if found:
            month = _MONTHS.get(found.group("month_name"))
            if month is None:
                return None
            return _build(found.group("year"), month, found.group("day"))
    return None


# The same formats, found inside a longer text: no digit may touch a numeric form, no letter a month name.
_DATES_INSIDE = re.compile(
    r"(?<![\d.,/-])(?:\d{4}-\d{1,2}-\d{1,2}|\d{8}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}/\d{1,2}/\d{4})(?![\d/]|-\d|[.,]\d)"
    r"|(?<![\w])\d{1,2}(?:st|nd|rd|th)?\s+[a-z]+\.?,?\s+\d{4}(?!\d)"
    r"|(?<![a-z])[a-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}(?!\d)")


@lru_cache(maxsize=256)
def dates_in_text(text: str) -> frozenset[date]:
    """Every date written in `text` in one of the formats `parse_date` accepts (the same caution about
    day/month order: 01/05/2025 is January 5; nothing else is guessed)."""
    found = set()
    for match in _DATES_INSIDE.finditer(text.casefold()):
        day = parse_date(match.group(0))
        if day is not None:
            found.add(day)
    return frozenset(found)


def _build(year: Any, month: Any, day: Any) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:  # 2025-02-30, month 83 in "15778303", ...
        return None


def _valid_time(groups: dict) -> bool:
    # "2025-01-05T25:99" is not a timestamp; don't let its date part pass for one.
    hour, minute, second = (int(groups.get(name) or 0) for name in ("hour", "minute", "second"))
    return hour < 24 and minute < 60 and second < 61  # 60: leap second


# ---------------------------------------------------------------- dates inside a text (the cascade's offline facts)

_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_IN_TEXT = re.compile(
    r"(?<![\w/.-])(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"  # 2025-01-05[T10:00]
    r"|\d{8}"  # 20250105
    r"|\d{4}/\d{1,2}/\d{1,2}"  # 2025/01/05
    r"|\d{1,2}/\d{1,2}/\d{4}"  # 01/05/2025 (month first, as parse_date reads it)
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_NAMES})\.?,?\s+\d{{4}}"  # 5 January 2025
    rf"|(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"  # January 5, 2025 / January 5
    r")(?![\w/-])")
_MONTH_DAY = re.compile(r"(?P<month_name>[a-z]+)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?")
# A month and day without a year borrow it only from a dated mention close after them, as in
# "from January 1 to March 3, 2025"; "you may 3 times ..." far from any date stays no date.
_YEARLESS_REACH = 40


def find_dates(text: str) -> list[tuple[int, int, date]]:
    """Every date written in `text`, as (start, end, date), in order. Each candidate is read by
    parse_date, so the formats and the day/month order are exactly the ones a whole value may use.
    A month and day without a year ("between January 1 and March 3, 2025") take the year of a dated
    mention that closely follows them; otherwise they are not dates."""
    # Lower case character by character, keeping the length: positions must point into `text`.
    folded = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    found: list[tuple[int, int, date | None, tuple[int, int] | None]] = []
    for match in _IN_TEXT.finditer(folded):
        candidate = match.group(0)
        parsed = parse_date(candidate)
        if parsed is not None:
            found.append((match.start(), match.end(), parsed, None))
            continue
        partial = _MONTH_DAY.fullmatch(candidate)
        if partial and partial.group("month_name") in _MONTHS:
            found.append((match.start(), match.end(), None, (_MONTHS[partial.group("month_name")],
                                                              int(partial.group("day")))))
    dates: list[tuple[int, int, date]] = []
    for index, (start, end, parsed, month_day) in enumerate(found):
        if parsed is None and month_day is not None:
            following = next(((s, d) for s, _, d, _ in found[index + 1:] if d is not None), None)
            if following is not None and following[0] - end <= _YEARLESS_REACH:
                parsed = _build(following[1].year, *month_day)
        if parsed is not None:
            dates.append((start, end, parsed))
    return dates
