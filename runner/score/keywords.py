"""The keyword check of text goals: every keyword must appear in the message (case-insensitive).

Words are found anywhere (`cancel` is in "cancelled", as watsonx and tau2-bench check). Two kinds
of keyword mean a value rather than letters, and match that value however the answer writes it:

- a date (`2025-01-05`, `20250105`, `January 5, 2025`: the formats of dates.py, with its caution
  about day/month order) is found when the answer names the same day in any of those formats;
- a number (`1500`, `1,500`, `1500.5`) stands as a whole number of the same amount: `1500` is in
  "€1,500.00", "1500.00" and "1,500", not in "15000", "21,500" or "1500.5". A number written with
  a leading zero (`007`) is an id: only those digits match.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from .dates import dates_in_text, parse_date

# A keyword that is a number: plain digits or thousands grouped with commas, with an optional fraction.
_NUMBER_KEYWORD = re.compile(r"\d+(?:\.\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# A number in the answer. No digit may touch it, nor a separator that continues it ("1,5,0" is not 150).
_NUMBER_IN_TEXT = re.compile(r"(?<![\d.,])(?<!\d[.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d)(?![.,]\d)")
_LEADING_ZERO = re.compile(r"0\d")


def missing_keywords(text: str, keywords: list[str]) -> list[str]:
    """The keywords not found in `text`, in the given order."""
    haystack = (text or "").casefold()
    return [keyword for keyword in keywords if not _finder(keyword)(haystack)]


@lru_cache(maxsize=4096)
def _finder(keyword: str) -> Callable[[str], bool]:
    needle = keyword.casefold()
    day = parse_date(keyword)
    number = _number_finder(keyword.strip())
    if day is not None:
        # A date keyword is found as written (a number keyword's rules, for `20250105`), or as the same day.
        literal = number or (lambda haystack: needle in haystack)
        return lambda haystack: literal(haystack) or day in dates_in_text(haystack)
    if number is not None:
        return number
    return lambda haystack: needle in haystack


def _number_finder(keyword: str) -> Callable[[str], bool] | None:
    if not _NUMBER_KEYWORD.fullmatch(keyword):
        return None
    if _LEADING_ZERO.match(keyword):
        digits = re.compile(rf"(?<![\d.,])(?<!\d[.,]){re.escape(keyword)}(?!\d)(?![.,]\d)")
        return lambda haystack: digits.search(haystack) is not None
    amount = _amount(keyword)
    return lambda haystack: any(_amount(found.group(0)) == amount for found in _NUMBER_IN_TEXT.finditer(haystack)
                                if not _LEADING_ZERO.match(found.group(0)))


def _amount(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:  # cannot happen for what the patterns accept; never a match then
        return None
